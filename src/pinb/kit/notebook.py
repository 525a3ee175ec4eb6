"""Read a notebook file enough to plan its run: its fingerprint and the names its `parameters` cell declares.

The fingerprint covers only what running a notebook does not change: each cell's type, source and tags (the
parameters cell's defaults are part of its source), in order. Outputs, execution counts, cell ids, every other cell
metadata (execution times, collapsed or hidden views) and the notebook's metadata (kernel, language version) are
left out, so opening, running and saving a notebook in Jupyter leaves its runs current; editing any cell does not.

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

#: Bumped whenever the notebook fingerprint changes meaning.
NOTEBOOK_FINGERPRINT_VERSION = 2


@dataclass(frozen=True)
class NotebookInfo:
    #: `notebook_fingerprint` of the file (what runs record as the notebook's sha256).
    fingerprint: str
    parameter_names: tuple[str, ...]
    #: Whether any cell carries outputs or an execution count (the notebook was run and saved in Jupyter).
    has_outputs: bool


def read_notebook(path: Path) -> dict[str, Any]:
    """The notebook's JSON, checked to be nbformat 4 with a list of cells; one-line `KitError` otherwise."""
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
    return nb


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def notebook_fingerprint(nb: dict[str, Any]) -> str:
    """sha256 over each cell's type, source and tags, in order (see the module docstring)."""
    cells = [cell for cell in nb.get("cells", []) if isinstance(cell, dict)]
    content = [
        {"type": str(cell.get("cell_type", "")), "source": _source(cell), "tags": [str(tag) for tag in _tags(cell)]}
        for cell in cells
    ]
    text = json.dumps({"version": NOTEBOOK_FINGERPRINT_VERSION, "cells": content}, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def has_outputs(nb: dict[str, Any]) -> bool:
    return any(
        isinstance(cell, dict) and (cell.get("outputs") or cell.get("execution_count") is not None)
        for cell in nb.get("cells", [])
    )


def inspect_notebook(path: Path) -> NotebookInfo:
    """The notebook's fingerprint and declared parameters; one-line `KitError` if it cannot be used."""
    nb = read_notebook(path)
    cells = nb["cells"]
    tagged = [cell for cell in cells if isinstance(cell, dict) and "parameters" in _tags(cell)]
    if not tagged:
        raise KitError(f"{path.name} has no cell tagged 'parameters'; tag the cell that sets backend = ...")
    return NotebookInfo(
        fingerprint=notebook_fingerprint(nb),
        parameter_names=parameter_names(path, _source(tagged[0])),
        has_outputs=has_outputs(nb),
    )


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
