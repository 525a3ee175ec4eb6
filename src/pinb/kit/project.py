"""The project the kit works on: a root folder, the chapters registered for it, and its run store.

By default the chapters come from `pinb.chapters.registry.chapters()` and the root is the nearest folder above
the working directory holding `pyproject.toml` or `.git`. Both can be replaced, which is how the kit's tests (and
another book) bring their own chapters: pass a `Project` directly, or set `PINB_ROOT` to a folder and
`PINB_REGISTRY` to `module:function` returning `{chapter_id: chapter}`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pinb import __version__
from pinb.backends import PI_MODELLED_VERSION, Backend
from pinb.claims import Claim
from pinb.errors import KitError
from pinb.kit.claims import validate_chapter_id
from pinb.kit.fingerprint import code_fingerprint
from pinb.kit.notebook import notebook_fingerprint, read_notebook
from pinb.kit.record import Inputs
from pinb.kit.store import RunStore


class ChapterLike(Protocol):
    """What the kit reads of a registered chapter (`pinb.chapters.registry.Chapter` has these fields)."""

    id: str
    number: str
    title: str
    notebook: str
    text_fingerprint: str
    claims: tuple[Claim, ...]


#: The notebook parameter for generated witnesses per property claim, and what `pinb verify` sets it to: the
#: recorded evidence then covers the hand-written witness and this many seeded generated ones.
WITNESSES_PARAMETER = "witnesses"
VERIFY_WITNESSES = 5


def default_parameters(backend: str, declared: Collection[str] = ()) -> dict[str, Any]:
    """What `pinb verify` injects for a backend when no `-p` parameters are given (`declared`: the names the
    notebook's parameters cell declares; a notebook with a `witnesses` parameter records generated witnesses)."""
    parsed = Backend.parse(backend)
    found: dict[str, Any] = {"backend": "standin"}
    if parsed.family != "standin":
        found = {"backend": "pi", "pi_version": parsed.pi_version}
    if WITNESSES_PARAMETER in declared:
        found[WITNESSES_PARAMETER] = VERIFY_WITNESSES
    return found


@dataclass(frozen=True)
class Project:
    root: Path
    chapters: Mapping[str, ChapterLike]
    runs_dir: Path = field(default=Path())
    kernel_name: str = "python3"
    #: The Pi version `pi` runs default to and that counts as current for status.
    pi_version: str = PI_MODELLED_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())
        if self.runs_dir == Path():
            object.__setattr__(self, "runs_dir", self.root / "runs")

    @property
    def store(self) -> RunStore:
        return RunStore(self.runs_dir)

    def chapter(self, chapter_id: str) -> ChapterLike:
        try:
            validate_chapter_id(chapter_id)
        except Exception:
            raise KitError(f"invalid chapter id {chapter_id!r}") from None
        found = self.chapters.get(chapter_id)
        if found is None:
            known = ", ".join(sorted(self.chapters)) or "none"
            raise KitError(f"unknown chapter {chapter_id!r} (known: {known})")
        return found

    def select(self, chapter_ids: tuple[str, ...] | list[str] | None) -> list[ChapterLike]:
        if not chapter_ids:
            return list(self.chapters.values())
        return [self.chapter(chapter_id) for chapter_id in dict.fromkeys(chapter_ids)]

    def notebook_path(self, chapter: ChapterLike) -> Path:
        path = (self.root / chapter.notebook).resolve()
        if not path.is_relative_to(self.root):
            raise KitError(f"chapter {chapter.id}: notebook {chapter.notebook!r} is outside the project")
        if not path.is_file():
            raise KitError(f"chapter {chapter.id}: notebook {chapter.notebook} not found")
        return path

    def current_inputs(self, chapter: ChapterLike, backend: str, parameters: dict[str, Any] | None = None) -> Inputs:
        return Inputs(
            notebook_sha256=_notebook_hash(self.notebook_path(chapter)),
            pinb_version=__version__,
            text_fingerprint=chapter.text_fingerprint,
            backend=backend,
            parameters=default_parameters(backend, _declared(self.notebook_path(chapter)))
            if parameters is None
            else parameters,
            pinb_code=getattr(chapter, "code_fingerprint", "") or code_fingerprint(),
        )

    def expected_inputs(self, chapter: ChapterLike, run_inputs: Inputs) -> Inputs:
        """What a run with `run_inputs` would use now; where the chapter text cannot be read, its fingerprint is
        unverified and the run's own is taken (the chapter's `text_note` says so), rather than assumed changed."""
        now = self.current_inputs(chapter, run_inputs.backend)
        if not chapter.text_fingerprint:
            now = now.model_copy(update={"text_fingerprint": run_inputs.text_fingerprint})
        return now


_HASHES: dict[tuple[Path, int, int], str] = {}
_DECLARED: dict[tuple[Path, int, int], tuple[str, ...]] = {}


def _declared(path: Path) -> tuple[str, ...]:
    """The parameter names the notebook's parameters cell declares (cached by file identity)."""
    from pinb.kit.notebook import inspect_notebook

    info = path.stat()
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _DECLARED:
        _DECLARED[key] = inspect_notebook(path).parameter_names
    return _DECLARED[key]


def _notebook_hash(path: Path) -> str:
    """The notebook's fingerprint (`pinb.kit.notebook`: sources only, so a saved Jupyter session changes nothing)."""
    info = path.stat()
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _HASHES:
        _HASHES[key] = notebook_fingerprint(read_notebook(path))
    return _HASHES[key]


def find_root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return here


def load_registry(spec: str | None = None, root: Path | None = None) -> Mapping[str, ChapterLike]:
    spec = spec or os.environ.get("PINB_REGISTRY")
    if spec:
        module_name, _, attr = spec.partition(":")
        try:
            function = getattr(importlib.import_module(module_name), attr or "chapters")
        except (ImportError, AttributeError, ValueError) as exc:
            raise KitError(f"cannot load chapter registry {spec!r}: {exc}") from None
        if not callable(function):
            raise KitError(f"chapter registry {spec!r} is not a function returning {{chapter_id: chapter}}")
        try:
            found = function()
        except Exception as exc:  # a foreign function: its failure is the user's configuration, said in one line
            raise KitError(f"chapter registry {spec!r} failed: {type(exc).__name__}: {_one_line(exc)}") from None
        return _checked_registry(spec, found)
    from pinb.chapters.registry import chapters

    return chapters(root)


def load_project(root: Path | str | None = None, registry: str | None = None) -> Project:
    if root is None and os.environ.get("PINB_ROOT"):
        root = os.environ["PINB_ROOT"]
    resolved = Path(root) if root is not None else find_root()
    if not resolved.is_dir():
        raise KitError(f"project root {resolved} is not a folder")
    return Project(root=resolved, chapters=load_registry(registry, resolved))


_CHAPTER_FIELDS = ("id", "number", "title", "notebook", "text_fingerprint", "claims")


def _checked_registry(spec: str, found: object) -> Mapping[str, ChapterLike]:
    if not isinstance(found, Mapping):
        raise KitError(f"chapter registry {spec!r} returned {type(found).__name__}, not {{chapter_id: chapter}}")
    for key, chapter in found.items():
        missing = [name for name in _CHAPTER_FIELDS if not hasattr(chapter, name)]
        if not isinstance(key, str) or missing or getattr(chapter, "id", None) != key:
            what = f"lacks {', '.join(missing)}" if missing else "is not keyed by its id"
            raise KitError(f"chapter registry {spec!r}: entry {key!r} {what}")
    return found


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
