"""A string knob's default reached the parameters cell quoted twice ('"git push --force origin main"'), because
`{json.dumps(v) if s else v!r}` applies `!r` to the whole conditional. Every knob must arrive as its own value."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from pinb.chapters import registry

REPO = Path(__file__).resolve().parents[2]


def test_every_knob_default_is_its_value_in_the_parameters_cell() -> None:
    for chapter in registry.folders().values():
        shown = chapter.module("notebook")
        knobs = dict(getattr(shown, "KNOBS", {}))
        notebook = json.loads((REPO / chapter.ledger.notebook).read_text(encoding="utf-8"))
        cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
        assigned = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in ast.parse("".join(cell["source"])).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        }
        for name, (default, _what) in knobs.items():
            assert assigned[name] == default, (chapter.id, name, assigned[name])
