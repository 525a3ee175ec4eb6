"""The run store: `runs/<chapter-id>/<run-id>/` folders, written once and then only read.

A run is prepared in a hidden temporary folder next to its final place
(`runs/<chapter>/.tmp-<run-id>-<pid>-<process start>/`) and renamed into place when its record is complete, so a
reader (another `pinb` process) sees either no run or the whole run. The writer's pid and start time tell a run
being written now from the leftover of a process that has ended (whose pid another process may have since):
leftovers are reported by readers and removed by the next writer of that chapter.

Renaming a folder onto an existing non-empty one fails, so two processes can never share a run id.
Files of a completed run are made read-only.

Reading never fails on one bad entry: foreign files and stray temporary folders are reported by name as
`StoreProblem`s and skipped. A run folder whose record cannot be read (missing, not UTF-8 JSON, an unknown key, a
merge conflict, not a file) is never skipped quietly: it is listed as an *unreadable* run (`StoredRun.unreadable`)
that makes its backend's verdicts ERROR — every backend's when the backend cannot be told — naming the file and the
problem, until it is repaired or removed.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import secrets
import shlex
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from pydantic import ValidationError

from pinb.errors import KitError, UsageError
from pinb.files import FileError, pid_alive, write_atomic
from pinb.kit.claims import BACKEND_RE, CHAPTER_ID_RE, validate_chapter_id
from pinb.kit.integrity import VerificationCache, check_run, record_problem, shared_notebooks
from pinb.kit.record import (
    EXECUTED_NOTEBOOK,
    RECORD_FILE,
    RUN_ID_RE,
    Environment,
    Inputs,
    NotebookRef,
    RunRecord,
)

TMP_PREFIX = ".tmp-"
_TMP_NAME = re.compile(r"^\.tmp-\d{8}T\d{6}Z-[0-9a-f]{6}-(?P<pid>\d+)(?:-(?P<start>\d+))?$")


def validate_run_id(value: str) -> str:
    if not isinstance(value, str) or not RUN_ID_RE.match(value):
        raise KitError(f"invalid run id {value!r}: run ids look like 20261130T195500Z-3f9a1c")
    return value


def new_run_id(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class StoredRun:
    record: RunRecord
    path: Path
    #: Why the record does not match the evidence beside it (`pinb.kit.integrity`); such a run is never counted.
    problem: str | None = None
    #: The record could not be read at all: `record` is a placeholder (its run id, chapter and, where the file
    #: or the notebook tells it, backend; `""` when unknown) that only carries `problem` to its verdicts.
    unreadable: bool = False

    @property
    def verified(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class StoreProblem:
    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


@dataclass
class Listing:
    runs: list[StoredRun] = field(default_factory=list)
    problems: list[StoreProblem] = field(default_factory=list)

    @property
    def unreadable(self) -> list[StoredRun]:
        """Runs whose record could not be read (their verdicts are ERROR)."""
        return [run for run in self.runs if run.unreadable]


def _always() -> bool:
    return True


#: Asked just before a run is moved into place: a `pinb verify` worker whose parent is gone says no (its run is
#: abandoned, never committed).
commit_allowed: Callable[[], bool] = _always


class PendingRun:
    """A run being written: a temporary folder that `commit()` turns into `runs/<chapter>/<run-id>/`."""

    def __init__(self, store: RunStore, chapter: str, run_id: str, path: Path) -> None:
        self.store = store
        self.chapter = chapter
        self.run_id = run_id
        self.path = path

    def commit(self, record: RunRecord) -> StoredRun:
        if record.run_id != self.run_id or record.chapter != self.chapter:
            raise KitError(f"record {record.run_id}/{record.chapter} does not belong to {self.chapter}/{self.run_id}")
        _write_atomic(self.path / RECORD_FILE, record.model_dump_json(indent=2) + "\n")
        final = self.store.chapter_dir(self.chapter) / self.run_id
        if not commit_allowed():
            self.abandon()
            raise KitError(f"run {self.run_id} not recorded: the pinb verify that started it has ended")
        for item in self.path.rglob("*"):
            if item.is_file():
                item.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        try:
            os.rename(self.path, final)
        except OSError as exc:
            raise KitError(f"cannot move run {self.run_id} into {final}: {exc.strerror or exc}") from None
        return StoredRun(record=record, path=final)

    def abandon(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class RunStore:
    #: Listings kept while a store is `unchanged()`, by the store's folder and the chapter asked for.
    _held: ClassVar[dict[Path, dict[str | None, Listing]]] = {}

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @contextlib.contextmanager
    def unchanged(self) -> Iterator[None]:
        """While nothing writes this store (a verify's runs are all written; it is concluding and rendering its
        ledger), `list` reads and verifies the store once per chapter asked for and answers from that listing."""
        if self.root in RunStore._held:  # already held by an enclosing block
            yield
            return
        RunStore._held[self.root] = {}
        try:
            yield
        finally:
            RunStore._held.pop(self.root, None)

    def chapter_dir(self, chapter: str) -> Path:
        try:
            validate_chapter_id(chapter)
        except UsageError as exc:
            raise KitError(str(exc)) from None
        return self.root / chapter

    def ensure_writable(self) -> None:
        """Raise `KitError` now, before any work, if runs cannot be written here."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KitError(f"cannot write the run store {self.root}: {exc.strerror or exc}") from None
        if not self.root.is_dir() or not os.access(self.root, os.W_OK):
            raise KitError(f"cannot write the run store {self.root}: not a writable folder")

    def begin(self, chapter: str) -> PendingRun:
        """Reserve a new run id and its temporary folder."""
        folder = self.chapter_dir(chapter)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KitError(f"cannot write the run store {self.root}: {exc.strerror or exc}") from None
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise KitError(f"cannot write the run store {folder}: not a writable folder")
        _remove_leftovers(folder)
        for _ in range(20):
            run_id = new_run_id()
            # Ids are random within a second: one taken by a run, finished or still being written, is drawn again.
            if (folder / run_id).exists() or any(folder.glob(f"{TMP_PREFIX}{run_id}-*")):
                continue
            tmp = folder / f"{TMP_PREFIX}{run_id}-{writer_token(os.getpid())}"
            try:
                tmp.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise KitError(f"cannot write the run store {folder}: {exc.strerror or exc}") from None
            return PendingRun(self, chapter, run_id, tmp)
        raise KitError(f"could not reserve a unique run id under {folder}")

    # --- reading ---------------------------------------------------------------------------------------------

    def list(self, chapter: str | None = None) -> Listing:
        """Every readable run (oldest first), each verified against its evidence, and the problems met on the way."""
        held = RunStore._held.get(self.root)
        if held is None:
            return self._list(chapter)
        if chapter not in held:
            held[chapter] = self._list(chapter)
        return held[chapter]

    def _list(self, chapter: str | None) -> Listing:
        listing = Listing()
        if not self.root.exists():
            return listing
        if not self.root.is_dir():
            listing.problems.append(StoreProblem(self.root, "not a folder"))
            return listing
        if chapter is not None:
            folders = [self.chapter_dir(chapter)]
        else:
            folders = []
            for entry in sorted(self.root.iterdir()):
                if entry.name.startswith("."):
                    continue
                if entry.is_dir() and CHAPTER_ID_RE.match(entry.name):
                    folders.append(entry)
                else:
                    listing.problems.append(StoreProblem(entry, "foreign entry (not a chapter folder); skipped"))
        cache = VerificationCache(self.root)
        for folder in folders:
            if not folder.is_dir():
                continue
            try:
                entries = sorted(folder.iterdir())
            except OSError as exc:
                problem = f"cannot read the run folder {folder}: {exc.strerror or exc}"
                listing.runs.append(_unreadable_run(folder.name, folder / "(unreadable)", problem, ""))
                continue
            for entry in entries:
                self._read_entry(folder.name, entry, listing, cache)
        cache.save()
        # verified records' times are UTC instants in one form, so they sort as text; the run id breaks ties
        listing.runs.sort(key=lambda run: (run.record.started_at, run.record.run_id))
        copies = shared_notebooks(
            [
                (run.record.run_id, artifact.sha256)
                for run in listing.runs
                for artifact in run.record.artifacts
                # a run the kit could not start keeps the source notebook: two such runs share it honestly
                if artifact.path == EXECUTED_NOTEBOOK and run.record.status == "completed"
            ]
        )
        listing.runs = [
            replace(run, problem=copies[run.record.run_id])
            if run.problem is None and run.record.run_id in copies
            else run
            for run in listing.runs
        ]
        return listing

    def _read_entry(self, chapter: str, entry: Path, listing: Listing, cache: VerificationCache) -> None:
        if entry.name.startswith(TMP_PREFIX):
            if _writer_alive(entry.name):
                return  # a run being written right now by a live process
            if _leftover(entry.name):
                why = "incomplete run left by a process that has ended; skipped (`pinb runs prune` removes it)"
            elif _writer(entry.name) is None:
                why = f"a temporary folder pinb did not name; skipped (remove it with: rm -r {shlex.quote(str(entry))})"
            else:  # a live pid without a start time (an older pinb): it may still be writing
                why = (
                    "incomplete run of a process that may still be running; skipped (once it has ended, remove it "
                    f"with: rm -r {shlex.quote(str(entry))})"
                )
            listing.problems.append(StoreProblem(entry, why))
            return
        if entry.name.startswith("."):
            return
        if not entry.is_dir() or not RUN_ID_RE.match(entry.name):
            listing.problems.append(StoreProblem(entry, "foreign entry (not a run folder); skipped"))
            return
        record_path = entry / RECORD_FILE
        text = ""
        try:
            if not record_path.is_file() or record_path.is_symlink():
                raise _Unreadable("missing" if not record_path.exists() else "not a regular file")
            raw = record_path.read_bytes()
            text = raw.decode("utf-8", errors="replace")
            record = RunRecord.model_validate_json(raw.decode("utf-8"))
        except _Unreadable as exc:
            detail = str(exc)
        except OSError as exc:
            detail = f"cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError as exc:
            detail = f"not UTF-8 (byte {exc.start})"
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            conflict = " (it holds merge conflict markers)" if "\n<<<<<<< " in f"\n{text}" else ""
            detail = f"corrupt{conflict}: {where}: {first['msg']}"
        else:
            problem = record_problem(record)
            if record.run_id != entry.name or record.chapter != chapter:
                # a copied or moved run: listed under its folder's name and chapter, never counted
                problem = problem or check_run(entry, record)
                record = record.model_copy(update={"run_id": entry.name, "chapter": chapter})
                listing.runs.append(StoredRun(record=record, path=entry, problem=problem))
                return
            listing.runs.append(StoredRun(record=record, path=entry, problem=problem or cache.check(entry, record)))
            return
        problem = f"the run record {record_path} is unreadable: {detail}"
        listing.runs.append(_unreadable_run(chapter, entry, problem, _backend_of(entry, text)))

    def get(self, run_id: str) -> StoredRun:
        validate_run_id(run_id)
        listing = self.list()
        for run in listing.runs:
            if run.record.run_id == run_id and not run.unreadable:
                return run
        raise KitError(f"no readable run {run_id} in {self.root}")

    def locate(self, run_id: str) -> Path:
        """The folder of run `run_id` in any chapter, readable or not."""
        validate_run_id(run_id)
        if self.root.is_dir():
            for folder in sorted(self.root.iterdir()):
                candidate = folder / run_id
                if CHAPTER_ID_RE.match(folder.name) and candidate.is_dir() and not candidate.is_symlink():
                    return candidate
        raise KitError(f"no run {run_id} in {self.root}")

    def remove(self, folder: Path) -> None:
        """Delete one run folder (or a leftover temporary one) of this store."""
        folder = Path(folder)
        if folder.parent.parent.resolve() != self.root.resolve() or folder.is_symlink():
            raise KitError(f"{folder} is not a run folder of {self.root}")
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            raise KitError(f"cannot remove {folder}: {exc.strerror or exc}") from None

    def leftovers(self) -> builtins.list[Path]:
        """Temporary folders of runs whose writing process is gone."""
        found = []
        if self.root.is_dir():
            for folder in sorted(self.root.iterdir()):
                if CHAPTER_ID_RE.match(folder.name) and folder.is_dir():
                    found += [
                        entry
                        for entry in sorted(folder.iterdir())
                        if entry.name.startswith(TMP_PREFIX) and entry.is_dir() and _leftover(entry.name)
                    ]
        return found

    def check(self) -> tuple[builtins.list[StoredRun], builtins.list[StoreProblem]]:
        """Verify every run against its evidence; return the runs checked and every mismatch or problem."""
        listing = self.list()
        problems = list(listing.problems)
        problems += [StoreProblem(run.path, run.problem) for run in listing.runs if run.problem]
        return listing.runs, problems


class _Unreadable(Exception):
    pass


def _unreadable_run(chapter: str, folder: Path, problem: str, backend: str) -> StoredRun:
    """A placeholder for a run whose record cannot be read: it only carries `problem` to the verdicts."""
    run_id = folder.name
    match = re.match(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", run_id)
    when = "{}-{}-{}T{}:{}:{}.000Z".format(*match.groups()) if match else ""
    inputs = Inputs.model_construct(
        notebook_sha256="", pinb_version="", text_fingerprint="", backend=backend, parameters={}, pinb_code=""
    )
    record = RunRecord.model_construct(
        run_id=run_id,
        chapter=chapter,
        notebook=NotebookRef.model_construct(path="", sha256=""),
        parameters={},
        backend=backend,
        command="",
        started_at=when,
        finished_at=when,
        status="error",
        failure=problem,
        environment=Environment.model_construct(python="", platform="", pinb=""),
        inputs=inputs,
    )
    return StoredRun(record=record, path=folder, problem=problem, unreadable=True)


def _backend_of(folder: Path, text: str) -> str:
    """The backend a damaged record names (each side of a merge conflict alike), else the one its executed
    notebook ran with; `""` when neither tells."""
    named = {value for value in re.findall(r'"backend"\s*:\s*"([^"\\]{1,40})"', text) if BACKEND_RE.match(value)}
    if len(named) == 1:
        return named.pop()
    from pinb.kit.evidence import UnreadableNotebook, load_notebook

    try:
        nb = load_notebook(folder / EXECUTED_NOTEBOOK)
    except UnreadableNotebook:
        return ""
    metadata = nb.get("metadata")
    papermill = metadata.get("papermill") if isinstance(metadata, dict) else None
    parameters = papermill.get("parameters") if isinstance(papermill, dict) else None
    if not isinstance(parameters, dict):
        return ""
    if parameters.get("backend") == "standin":
        return "standin"
    version = parameters.get("pi_version")
    if parameters.get("backend") == "pi" and isinstance(version, str) and BACKEND_RE.match(f"pi@{version}"):
        return f"pi@{version}"
    return ""


def writer_token(pid: int) -> str:
    """`<pid>-<start>`: the start time tells this process from a later one given the same pid."""
    start = _process_start(pid)
    return f"{pid}-{start}" if start else str(pid)


def _process_start(pid: int) -> str | None:
    """The process's start time as the system counts it (clock ticks since boot on Linux), or None."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return stat_line.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        pass
    try:  # elsewhere, where psutil is installed (a dependency of ipykernel on most platforms)
        import psutil

        return str(round(psutil.Process(pid).create_time() * 100))
    except Exception:
        return None


def _writer(name: str) -> tuple[int, str | None] | None:
    """The pid and start time a temporary folder's name gives (no start time from an older pinb), or None."""
    match = _TMP_NAME.match(name)
    if match is None:
        return None
    return int(match["pid"]), match["start"]


def _writer_alive(name: str) -> bool:
    """Whether the process named in a temporary folder's name is still the one writing it."""
    writer = _writer(name)
    if writer is None or not pid_alive(writer[0]):
        return False
    if writer[1] is None:
        return False  # alive, but nothing says it is the writer: reported, never hidden for good
    return _process_start(writer[0]) in (writer[1], None)


def _remove_leftovers(folder: Path) -> None:
    for entry in folder.glob(f"{TMP_PREFIX}*"):
        if entry.is_dir() and _leftover(entry.name):
            shutil.rmtree(entry, ignore_errors=True)


def _leftover(name: str) -> bool:
    """Only what certainly has no live writer: its process is gone, or its pid now names another process."""
    writer = _writer(name)
    if writer is None:
        return False  # not a name pinb gives: reported, left alone
    if writer[1] is None:
        return not pid_alive(writer[0])
    return not _writer_alive(name)


def _write_atomic(path: Path, text: str) -> None:
    try:
        write_atomic(path, text)
    except FileError as exc:
        raise KitError(str(exc)) from None
