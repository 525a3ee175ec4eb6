"""What opening, running and saving a notebook in JupyterLab writes into it, for tests that must show a reader's
session changes no evidence (the browser test does the real thing; this is its fast stand-in)."""

from __future__ import annotations

import json
from pathlib import Path


def save_as_jupyter(path: Path) -> None:
    """Rewrite `path` as JupyterLab saves it after Run All: sources as lists of lines, outputs and execution counts,
    cell execution and view metadata, new cell ids, the kernel's language version."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for count, cell in enumerate(nb["cells"], start=1):
        source = cell.get("source", "")
        cell["source"] = ("".join(source) if isinstance(source, list) else source).splitlines(keepends=True)
        cell.setdefault("metadata", {})["jupyter"] = {"source_hidden": count % 2 == 0}
        if cell["cell_type"] == "code":
            cell["execution_count"] = count
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
            cell["metadata"]["execution"] = {"iopub.status.busy": "2026-12-01T10:00:00.000000Z"}
        cell["id"] = f"saved-{count}"
    language = {"name": "python", "version": "3.12.1", "pygments_lexer": "ipython3"}
    nb.setdefault("metadata", {})["language_info"] = language
    nb["metadata"]["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
