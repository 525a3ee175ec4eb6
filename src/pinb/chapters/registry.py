"""The chapters pinb knows, discovered: every folder of `pinb.chapters` that holds a `ledger.yaml` is a chapter.

Nothing lists the chapters. A chapter's folder holds its ledger (data), its `experiments.py` (the `EXPERIMENTS`
its ledger names), and optionally `notebook.py` (the knobs, pictures and widgets its notebook shows).
Each claim of a ledger is resolved once, when its chapter is discovered: `claim(id)` is that `pinb.claims.Claim`,
bound to its folder, so it finds its experiment itself (`claim.experiment`, `claim.property`, `claim.unrun`). Folders
outside the package join through `PINB_CHAPTERS` (folders separated like `PATH`), which is how a chapter being
written, or a test's sample chapter, is found without touching the package.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pinb
import pinb.chapters as _package
from pinb.chapters.book import chapter_text, text_note
from pinb.chapters.ledger import LEDGER_FILE, Ledger, LedgerError, load_ledger
from pinb.claims import Chapter, Claim
from pinb.fingerprints import code_fingerprint, fingerprint_text

#: Extra folders whose chapter subfolders are discovered too (`os.pathsep`-separated).
CHAPTERS_ENV = "PINB_CHAPTERS"

#: What every chapter's verdicts depend on besides its own folder (paths inside the pinb package): the layers its
#: experiments run, the leaf modules, the chapters' shared modules (`chapters/*.py`) and the kit's judging code.
SHARED_LAYERS: tuple[str, ...] = ("ai", "agent", "app", "scenario")
SHARED_FILES: tuple[str, ...] = (
    "__init__.py",
    "_async.py",
    "claims.py",
    "errors.py",
    "fingerprints.py",
    "kit/claims.py",
    "kit/engine.py",
    "kit/execute.py",
    "kit/notebook.py",
)


@dataclass(frozen=True)
class ChapterFolder:
    """One discovered chapter: its folder, its Python package name and its validated ledger."""

    folder: Path
    package: str
    ledger: Ledger

    @property
    def id(self) -> str:
        return self.ledger.id

    def code_files(self) -> dict[str, Path]:
        """The files this chapter's verdicts depend on (name → path): its folder and the shared code, not the
        other chapters' folders."""
        return {**_shared_code(), **_folder_files(self.folder)}

    def experiments(self) -> dict[str, Any]:
        """The chapter's experiments by name (its `experiments.EXPERIMENTS`, read on first use)."""
        return experiments(self.id)

    def module(self, name: str) -> ModuleType | None:
        """The chapter's own module `name` (e.g. `experiments`), or None when the folder has none."""
        if not (self.folder / f"{name}.py").is_file():
            return None
        return importlib.import_module(f"{self.package}.{name}")


def _folder_files(folder: Path) -> dict[str, Path]:
    return {
        f"chapters/{folder.name}/{path.relative_to(folder).as_posix()}": path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@cache
def _shared_code() -> dict[str, Path]:
    package = Path(pinb.__file__).resolve().parent
    files = {name: package / name for name in SHARED_FILES}
    for layer in SHARED_LAYERS:
        files.update({path.relative_to(package).as_posix(): path for path in (package / layer).rglob("*.py")})
    files.update({f"chapters/{path.name}": path for path in (package / "chapters").glob("*.py")})
    return files


def _extend_search_path() -> None:
    for folder in os.environ.get(CHAPTERS_ENV, "").split(os.pathsep):
        if folder and folder not in _package.__path__:
            _package.__path__.append(folder)


def _discover() -> list[ChapterFolder]:
    _extend_search_path()
    found: dict[str, ChapterFolder] = {}
    for base in list(_package.__path__):
        for child in sorted(Path(base).iterdir()) if Path(base).is_dir() else ():
            if not (child / LEDGER_FILE).is_file() or not child.name.isidentifier():
                continue
            ledger = load_ledger(child / LEDGER_FILE)
            if ledger.id in found:
                raise LedgerError(f"{child / LEDGER_FILE}: chapter {ledger.id} is also in {found[ledger.id].folder}")
            found[ledger.id] = ChapterFolder(child, f"{_package.__name__}.{child.name}", ledger)
            for claim in ledger.claims:  # resolved once: each claim finds its experiment through its folder
                claim.bind(found[ledger.id])
    return sorted(found.values(), key=lambda f: (f.ledger.number.zfill(4), f.ledger.id))


@cache
def folders() -> dict[str, ChapterFolder]:
    """Every chapter folder by chapter id, in book order."""
    return {folder.id: folder for folder in _discover()}


def refresh() -> None:
    """Forget what was discovered (after a chapter folder was added or changed in this process)."""
    import sys

    folders.cache_clear()
    experiments.cache_clear()
    _by_id.cache_clear()
    faults = sys.modules.get("pinb.testing.faults")
    if faults is not None:  # the chapters' own faults are found again with their folders
        faults.forget_chapter_faults()


def folder(chapter_id: str) -> ChapterFolder:
    try:
        return folders()[chapter_id]
    except KeyError:
        raise KeyError(chapter_id) from None


def chapter(found: ChapterFolder, root: Path | None = None) -> Chapter:
    """The chapter as the kit reads it: its ledger, its text as read now from the book directory (fingerprint and
    whether it still holds every quote) and the fingerprint of the code its verdicts depend on."""
    text = chapter_text(found.ledger, root)
    return found.ledger.to_chapter(
        text_fingerprint=fingerprint_text(text.text) if text is not None else "",
        text_note=text_note(found.ledger, text, root),
        code_fingerprint=code_fingerprint(found.code_files()),
    )


def chapters(root: Path | None = None) -> dict[str, Chapter]:
    """Every chapter as the kit reads it, in book order (`root`: the project whose `[tool.pinb] book` counts)."""
    return {chapter_id: chapter(found, root) for chapter_id, found in folders().items()}


def claims(chapter_id: str) -> tuple[Claim, ...]:
    """The chapter's claims as its ledger states them, in ledger order."""
    return folder(chapter_id).ledger.claims


@cache
def _by_id() -> dict[str, Claim]:
    return {claim.id: claim for found in folders().values() for claim in found.ledger.claims}


def claim(claim_id: str) -> Claim:
    """The claim by id, resolved in its chapter folder (`KeyError` for an unknown id)."""
    try:
        return _by_id()[claim_id]
    except KeyError:
        raise KeyError(claim_id) from None


@cache
def experiments(chapter_id: str) -> dict[str, Any]:
    """The chapter's experiments by name (its folder's `experiments.EXPERIMENTS`)."""
    module = folder(chapter_id).module("experiments")
    return dict(getattr(module, "EXPERIMENTS", {})) if module is not None else {}


__all__ = [
    "CHAPTERS_ENV",
    "Chapter",
    "ChapterFolder",
    "chapter",
    "chapters",
    "claim",
    "claims",
    "experiments",
    "folder",
    "folders",
    "refresh",
]
