"""Each layer imports only the layers below it (design.md §1), the rule the book states for Pi's packages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "pinb"

# What each package may import from pinb besides itself and the shared modules.
ALLOWED: dict[str, set[str]] = {
    "ai": set(),
    "agent": {"ai"},
    "app": {"ai", "agent"},
    "scenario": {"ai", "agent", "app"},
    "chapters": {"ai", "agent", "app", "scenario", "kit"},
    "kit": {"chapters"},
}
SHARED = {"errors", "_async", "__init__", "cli"}


def _pinb_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "pinb" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    offending = []
    for path in sorted((SRC / layer).rglob("*.py")):
        for imported in _pinb_imports(path) - SHARED - {layer} - ALLOWED[layer]:
            offending.append(f"{path.relative_to(SRC)} imports pinb.{imported}")
    assert offending == []


def test_kit_uses_only_the_chapter_registry() -> None:
    for path in sorted((SRC / "kit").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pinb.chapters"):
                assert node.module == "pinb.chapters.registry", f"{path.name} imports {node.module}"


def test_only_execute_imports_papermill_and_nbclient() -> None:
    for path in sorted(SRC.rglob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
        if imported & {"papermill", "nbclient"}:
            assert path.relative_to(SRC).as_posix() == "kit/execute.py", path
