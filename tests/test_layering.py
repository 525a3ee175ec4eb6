"""Each layer imports only the layers below it (design.md §1), the rule the book states for Pi's packages.

Imports are read from the source: `import` statements anywhere (also inside functions), and the dynamic forms
`importlib.import_module("pinb…")` and `__import__("pinb…")` (a string, or an f-string, starting with `pinb.`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "pinb"

#: The layers from the bottom up; each may import the ones before it.
ORDER = ("ai", "agent", "app", "scenario", "chapters", "scopes", "kit")
#: Leaf modules every layer may import; they import only each other.
LEAVES = {"errors", "_async", "_faults", "backends", "claims", "fingerprints", "files", "__init__"}
#: The command line, and the test-only fault switchboard, sit above every layer.
TOP = {"cli", "testing"}


def _dynamic_target(node: ast.Call) -> str | None:
    """The module an `importlib.import_module(...)` / `__import__(...)` call names, when it names one of pinb's."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in {"import_module", "__import__"} or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        text = first.value
    elif isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
        text = str(first.values[0].value)
    else:
        return None
    return text if text.startswith("pinb.") else None


def _submodule(name: str) -> str:
    """`from pinb import X`: X is a module of pinb, or a name of its `__init__`."""
    return name if (SRC / f"{name}.py").is_file() or (SRC / name / "__init__.py").is_file() else "__init__"


def _pinb_imports(path: Path) -> set[str]:
    """The pinb packages (second name component) the file imports, statically or dynamically."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = (
                [node.module] if node.module != "pinb" else [f"pinb.{_submodule(alias.name)}" for alias in node.names]
            )
        elif isinstance(node, ast.Call):
            target = _dynamic_target(node)
            names = [target] if target else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "pinb" and len(parts) > 1 and parts[1]:
                found.add(parts[1])
    return found


def _allowed(layer: str) -> set[str]:
    return set(ORDER[: ORDER.index(layer)]) | LEAVES | {layer}


def _chapter_faults(path: Path) -> bool:
    """A chapter folder's `faults.py`: part of the test-only fault switchboard (`pinb.testing` loads it), not of
    the chapter, so it may build on `pinb.testing.faults`."""
    return path.name == "faults.py" and path.parent.parent == SRC / "chapters"


@pytest.mark.parametrize("layer", ORDER)
def test_layer_imports_only_lower_layers(layer: str) -> None:
    offending = []
    for path in sorted((SRC / layer).rglob("*.py")):
        allowed = _allowed(layer) | (TOP & {"testing"} if _chapter_faults(path) else set())
        for imported in _pinb_imports(path) - allowed:
            offending.append(f"{path.relative_to(SRC)} imports pinb.{imported}")
    assert offending == []


def test_chapter_faults_are_loaded_only_by_the_switchboard() -> None:
    """No module but `pinb.testing` imports a chapter's faults: a fault is never on outside a judge check."""
    pattern = re.compile(r"pinb\.chapters\.ch\w+\.faults|from pinb\.chapters\.ch\w+ import .*\bfaults\b")
    offending = [
        path.relative_to(SRC).as_posix()
        for path in sorted(SRC.rglob("*.py"))
        if path.parent != SRC / "testing" and not _chapter_faults(path) and pattern.search(path.read_text("utf-8"))
    ]
    assert offending == []


def test_leaf_modules_import_only_leaves() -> None:
    offending = []
    for leaf in sorted(LEAVES):
        path = SRC / f"{leaf}.py"
        for imported in _pinb_imports(path) - LEAVES:
            offending.append(f"{leaf}.py imports pinb.{imported}")
    assert offending == []


def test_every_module_belongs_to_a_layer_a_leaf_or_the_top() -> None:
    known = set(ORDER) | LEAVES | TOP
    strays = [p.name for p in SRC.iterdir() if (p.suffix == ".py" and p.stem not in known)]
    strays += [p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name not in known]
    assert strays == []


@pytest.mark.parametrize(
    ("source", "imported"),
    [
        ("import importlib\nimportlib.import_module('pinb.chapters.registry')\n", {"chapters"}),
        ("from importlib import import_module\nimport_module(f'pinb.kit.{name}')\n", {"kit"}),
        ("__import__('pinb.scenario.reference')\n", {"scenario"}),
        ("def f():\n    from pinb.kit.status import x\n", {"kit"}),
        ("from pinb import claims\n", {"claims"}),
        ("importlib.import_module(name)\n", set()),
    ],
)
def test_the_checker_reads_every_kind_of_import(tmp_path: Path, source: str, imported: set[str]) -> None:
    path = tmp_path / "module.py"
    path.write_text(source, encoding="utf-8")
    assert _pinb_imports(path) == imported


def test_an_upward_edge_in_either_direction_would_fail() -> None:
    assert "chapters" not in _allowed("scenario") and "kit" not in _allowed("chapters")
    assert "chapters" in _allowed("kit")


def test_kit_uses_only_the_chapter_registry_the_book_and_the_scaffold() -> None:
    for path in sorted((SRC / "kit").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pinb.chapters"):
                allowed = {"pinb.chapters.registry", "pinb.chapters.book", "pinb.chapters.scaffold"}
                assert node.module in allowed, f"{path.name}: {node.module}"


#: How a chapter is named in text: "chapter 16", "ch01", a claim id `pi-16.…`, a chapter id `pi-01-chapter`.
CHAPTER_NAME = re.compile(r"\bchapter[ -]?\d+|\bch\d\d\b|\bpi-\d\d[.-]", re.IGNORECASE)


@pytest.mark.parametrize("layer", ["ai", "agent", "app", "scenario"])
def test_the_shared_layers_name_no_chapter(layer: str) -> None:
    named = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()[:80]}"
        for path in sorted((SRC / layer).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CHAPTER_NAME.search(line)
    ]
    assert named == []


def test_a_chapter_folder_imports_no_other_chapter() -> None:
    chapters = SRC / "chapters"
    folders = {p.name for p in chapters.iterdir() if (p / "ledger.yaml").is_file()}
    offending = []
    for name in sorted(folders):
        for path in sorted((chapters / name).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for other in folders - {name}:
                if re.search(rf"pinb\.chapters\.{other}\b|from pinb\.chapters import [^\n]*\b{other}\b", text):
                    offending.append(f"{path.relative_to(SRC)} uses chapter folder {other}")
    assert offending == []


def test_only_the_execution_modules_import_papermill_and_nbclient() -> None:
    for path in sorted(SRC.rglob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
        if imported & {"papermill", "nbclient"}:
            assert path.relative_to(SRC).as_posix() in {"kit/execute.py", "kit/engine.py"}, path


# --- the chapters' shared modules, by job ----------------------------------------------------------------------

CHAPTERS = SRC / "chapters"


def _jobs() -> dict[str, tuple[str, ...]]:
    from pinb.chapters import JOBS

    return JOBS


def _job_of() -> dict[str, str]:
    return {module: job for job, modules in _jobs().items() for module in modules}


def _shared_imports(path: Path) -> set[str]:
    """The shared modules of `pinb.chapters` a file imports (`from pinb.chapters import tq` or `pinb.chapters.tq`)."""
    shared = {p.stem for p in CHAPTERS.glob("*.py")} - {"__init__"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "pinb.chapters":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pinb.chapters."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("pinb.chapters.")}
    return found & shared


def test_every_shared_chapter_module_has_exactly_one_job() -> None:
    listed = [module for modules in _jobs().values() for module in modules]
    assert len(listed) == len(set(listed)), "a module is listed under two jobs"
    on_disk = {p.stem for p in CHAPTERS.glob("*.py")} - {"__init__"}
    assert set(listed) - on_disk == set(), "JOBS names a module that does not exist"
    assert on_disk - set(listed) == set(), "add the module to pinb.chapters.JOBS under its job"


def test_the_author_needs_five_modules() -> None:
    assert _jobs()["the author's toolkit"] == ("properties", "scenarios", "tq", "common", "cells")


def test_what_a_chapter_claims_imports_only_its_own_job() -> None:
    job_of = _job_of()
    offending = [
        f"{module}.py imports {imported} ({job_of[imported]})"
        for module in _jobs()["what a chapter claims"]
        for imported in sorted(_shared_imports(CHAPTERS / f"{module}.py"))
        if job_of[imported] != "what a chapter claims"
    ]
    assert offending == []


def test_the_toolkit_draws_nothing() -> None:
    job_of = _job_of()
    offending = [
        f"{module}.py imports {imported}"
        for module in _jobs()["the author's toolkit"]
        for imported in sorted(_shared_imports(CHAPTERS / f"{module}.py"))
        if job_of[imported] == "pictures"
    ]
    assert offending == []


def test_a_chapter_folder_never_imports_how_a_claim_is_checked() -> None:
    job_of = _job_of()
    folders = [p for p in CHAPTERS.iterdir() if (p / "ledger.yaml").is_file()]
    offending = [
        f"{path.relative_to(SRC)} imports pinb.chapters.{imported}"
        for folder in folders
        for path in sorted(folder.rglob("*.py"))
        for imported in sorted(_shared_imports(path))
        if job_of[imported] == "how a claim is checked"
    ]
    assert offending == []


def test_the_scaffold_hands_an_author_the_toolkit_only() -> None:
    from pinb.chapters import scaffold

    templates = "\n".join(v for k, v in vars(scaffold).items() if k.endswith("_TEMPLATE") and isinstance(v, str))
    named = set(re.findall(r"pinb\.chapters\.(\w+)", templates)) | set(
        name for line in re.findall(r"from pinb\.chapters import ([\w, ]+)", templates) for name in line.split(", ")
    )
    assert named and named <= set(_jobs()["the author's toolkit"]), named
