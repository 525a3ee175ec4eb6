"""Read a notebook file enough to plan its run: its hash and the names its `parameters` cell declares.

Plain `json` and `ast`, no Jupyter imports: `pinb verify` with nothing to re-run must answer in a blink, and
importing nbformat (and the JSON-schema machinery behind it) costs seconds.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pinb.errors import KitError


@dataclass(frozen=True)
class NotebookInfo:
    sha256: str
    parameter_names: tuple[str, ...]


def inspect_notebook(path: Path) -> NotebookInfo:
    """The notebook's sha256 and declared parameters; one-line `KitError` if it cannot be used."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KitError(f"cannot read notebook {path}: {exc.strerror or exc}") from None
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KitError(f"{path.name} is not a readable notebook: {_one_line(exc)}") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not isinstance(nb.get("nbformat"), int) or nb["nbformat"] < 4:
        raise KitError(f"{path.name} is not a readable notebook: no nbformat 4 'cells' list")
    tagged = [cell for cell in cells if isinstance(cell, dict) and "parameters" in _tags(cell)]
    if not tagged:
        raise KitError(f"{path.name} has no cell tagged 'parameters'; tag the cell that sets backend = ...")
    source = tagged[0].get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    return NotebookInfo(sha256=hashlib.sha256(data).hexdigest(), parameter_names=parameter_names(path, source))


def parameter_names(path: Path, source: str) -> tuple[str, ...]:
    """Names assigned at the top level of the parameters cell (`x = 1`, `x: int = 1`), in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise KitError(f"{path.name}: the parameters cell is not valid Python (line {exc.lineno})") from None
    names: list[str] = []
    for node in tree.body:
        targets: list[Any] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    return tuple(names)


def check_parameters(path: Path, info: NotebookInfo, parameters: dict[str, Any]) -> None:
    unknown = [name for name in parameters if name not in info.parameter_names]
    if unknown:
        declared = ", ".join(info.parameter_names) or "none"
        raise KitError(f"{path.name} has no parameter {unknown[0]!r} (its parameters cell declares: {declared})")


def _tags(cell: dict[str, Any]) -> list[str]:
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return tags if isinstance(tags, list) else []


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
