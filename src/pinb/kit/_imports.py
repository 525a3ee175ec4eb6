"""One import-time shortcut for headless execution.

papermill imports nbformat, which imports jsonschema, which imports the optional `rfc3987_syntax` package when it
is installed; that package compiles dozens of grammars at import, about 3 s of CPU in every process. nbformat
never checks string formats, so the grammars are never used. Marking the package as absent (only when jsonschema
is not loaded yet, so nothing already loaded changes) makes jsonschema skip it; its IRI format checks, which pinb
does not use, fall back to "not checked".
"""

from __future__ import annotations

import sys


def skip_unused_schema_extras() -> None:
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
