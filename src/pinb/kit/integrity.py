"""Does a run record still match the evidence beside it? Checked before any run is counted.

A run counts only when all of these hold:

- its folder is `runs/<chapter>/<run-id>/` for the chapter and run id its record names;
- its record lists the executed notebook, and every artefact it lists is a file in the folder with the recorded
  sha256; nothing else is in the folder (besides `run.json`);
- the claim outcomes in `run.json` are exactly those the executed notebook emitted (its pinb outputs are the
  evidence; the record is an index of them), and so are the warnings saying some outputs could not be read;
- the notebook's execution metadata agrees with the record: it was written for this run (the output path papermill
  recorded names this run's folder), inside the record's start and finish times, with the record's parameters,
  on the Python version the record names, and a `completed` record's notebook records no exception;
- no other run has the same executed notebook (a copied run).

A run's verdict is cached in `<runs>/.verified.json`, keyed by the size, modification time, change time and inode
of every file in its folder: any edit, copy or added file changes the change time (which no tool sets back), so
the cache only saves re-reading runs nothing touched since they were last verified.

This catches edits and accidents. It is not a signature: someone who rewrites the notebook's metadata and
recomputes every hash can forge a record, and only the project's history (git) shows it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from pinb.kit.evidence import UnreadableNotebook, load_notebook, outcomes_in
from pinb.kit.fingerprint import sha256_file
from pinb.kit.record import EXECUTED_NOTEBOOK, MALFORMED_OUTPUT, RECORD_FILE, UNREADABLE_NOTEBOOK, RunRecord

#: The start of every reason a run is not counted.
MISMATCH = "record does not match its notebook"
#: The notebook parameter whose value names the run folder; it differs between the record and the notebook.
_ARTIFACTS_PARAMETER = "artifacts_dir"
#: Clock slack between the kit's timestamps and papermill's.
_SLACK = timedelta(seconds=5)
_RUN_ID_IN_PATH = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


class _Mismatch(Exception):
    pass


def check_run(folder: Path, record: RunRecord) -> str | None:
    """`None` when the run at `folder` matches its record, else one line starting with `MISMATCH`."""
    try:
        _check(folder, record)
    except _Mismatch as exc:
        return f"{MISMATCH}: {exc}"
    return None


def _check(folder: Path, record: RunRecord) -> None:
    if folder.name != record.run_id:
        raise _Mismatch(f"it is in folder {folder.name} but its record names run {record.run_id} (a copied run)")
    if folder.parent.name != record.chapter:
        raise _Mismatch(f"it is under {folder.parent.name}/ but its record names chapter {record.chapter}")
    _check_inputs(record)
    listed = _check_artifacts(folder, record)
    unlisted = sorted(set(_files(folder)) - listed - {RECORD_FILE})
    if unlisted:
        raise _Mismatch(f"{unlisted[0]} is in the run folder but not in its record")
    try:
        nb = load_notebook(folder / EXECUTED_NOTEBOOK)
    except UnreadableNotebook as exc:
        if record.claims or not any(w.startswith(UNREADABLE_NOTEBOOK) for w in record.warnings):
            raise _Mismatch(f"the executed notebook cannot be read ({exc})") from None
        return  # recorded as unreadable, and nothing claimed from it
    _check_outcomes(nb, record)
    _check_execution(nb, record)


def _check_inputs(record: RunRecord) -> None:
    inputs = record.inputs
    if inputs.backend != record.backend:
        raise _Mismatch(f"its inputs name backend {inputs.backend}, its record {record.backend}")
    if inputs.notebook_sha256 != record.notebook.sha256:
        raise _Mismatch("its inputs and its record name different source notebooks")
    if inputs.parameters != _without_artifacts(record.parameters):
        raise _Mismatch("its inputs and its record name different parameters")


def _check_artifacts(folder: Path, record: RunRecord) -> set[str]:
    paths = [artifact.path for artifact in record.artifacts]
    if EXECUTED_NOTEBOOK not in paths:
        raise _Mismatch("its record lists no executed notebook")
    for artifact in record.artifacts:
        relative = PurePosixPath(artifact.path)
        if relative.is_absolute() or ".." in relative.parts or "\\" in artifact.path or paths.count(artifact.path) > 1:
            raise _Mismatch(f"artefact path {artifact.path!r} is not a plain path inside the run")
        target = folder / relative
        if target.is_symlink():
            raise _Mismatch(f"{artifact.path} is a link")
        try:
            actual = sha256_file(target)
        except OSError:
            raise _Mismatch(f"{artifact.path} is missing") from None
        if actual != artifact.sha256:
            raise _Mismatch(f"{artifact.path} was changed (its sha256 differs from the record's)")
    return set(paths)


def _files(folder: Path) -> Iterator[str]:
    """Every file and link below `folder`, hidden ones included, as POSIX paths relative to it."""
    for directory, subdirs, files in os.walk(folder):
        here = Path(directory)
        links = [name for name in subdirs if (here / name).is_symlink()]
        for name in [*files, *links]:
            yield (here / name).relative_to(folder).as_posix()


def _check_outcomes(nb: dict[str, Any], record: RunRecord) -> None:
    emitted, warnings = outcomes_in(nb, record.backend)
    if emitted != record.claims:
        raise _Mismatch(_first_difference(emitted, record))
    lost = tuple(w for w in warnings if w.startswith(UNREADABLE_NOTEBOOK) or MALFORMED_OUTPUT in w)
    if lost != record.lost_outcomes():
        raise _Mismatch("its warnings about unreadable claim outputs differ from what the notebook holds")


def _first_difference(emitted: tuple[Any, ...], record: RunRecord) -> str:
    for index, (said, seen) in enumerate(zip(record.claims, emitted, strict=False)):
        if said != seen:
            if said.claim_id != seen.claim_id:
                return f"outcome {index + 1} is {said.claim_id} in the record, {seen.claim_id} in the notebook"
            if said.outcome != seen.outcome:
                return f"{said.claim_id} is {said.outcome} in the record, {seen.outcome} in the notebook"
            return f"{said.claim_id}'s evidence differs between the record and the notebook"
    return f"the record lists {len(record.claims)} claim outcome(s), the notebook emitted {len(emitted)}"


def _check_execution(nb: dict[str, Any], record: RunRecord) -> None:
    metadata = nb.get("metadata")
    language = metadata.get("language_info") if isinstance(metadata, dict) else None
    ran_on = language.get("version") if isinstance(language, dict) else None
    if isinstance(ran_on, str) and ran_on:
        said = {record.environment.python, record.inputs.environment.get("python", record.environment.python)}
        if said != {ran_on}:
            raise _Mismatch(f"the notebook ran on Python {ran_on}, the record says {' and '.join(sorted(said))}")
    papermill = metadata.get("papermill") if isinstance(metadata, dict) else None
    if not isinstance(papermill, dict):
        if record.status == "completed":
            raise _Mismatch("the notebook carries no execution metadata, yet the record says completed")
        return  # the kernel never started: the kit kept the source notebook
    if record.status == "completed" and papermill.get("exception"):
        raise _Mismatch("the notebook records an exception, yet the record says completed")
    output_path = papermill.get("output_path")
    if isinstance(output_path, str):
        named = _RUN_ID_IN_PATH.findall(output_path)
        if record.run_id not in named:
            other = f"run {named[-1]}" if named else output_path
            raise _Mismatch(f"the notebook was written for {other}, not run {record.run_id}")
        if f"{record.chapter}/" not in output_path.replace("\\", "/"):
            raise _Mismatch(f"the notebook was written for another chapter ({output_path})")
    parameters = papermill.get("parameters")
    if isinstance(parameters, dict) and _without_artifacts(parameters) != _without_artifacts(record.parameters):
        raise _Mismatch("the notebook ran with other parameters than the record's")
    started, finished = _time(record.started_at), _time(record.finished_at)
    began, ended = _time(papermill.get("start_time")), _time(papermill.get("end_time"))
    if started and began and not started - _SLACK <= began <= (finished or began) + _SLACK:
        raise _Mismatch(f"the notebook started at {papermill['start_time']}, the record says {record.started_at}")
    if finished and ended and not (started or ended) - _SLACK <= ended <= finished + _SLACK:
        raise _Mismatch(f"the notebook ended at {papermill['end_time']}, the record says {record.finished_at}")


def _without_artifacts(parameters: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in parameters.items() if name != _ARTIFACTS_PARAMETER}


def _time(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else None


def shared_notebooks(runs: list[tuple[str, str]]) -> dict[str, str]:
    """`(run_id, executed notebook sha256)` pairs → `{run_id: reason}` for runs whose notebook another run has."""
    by_hash: dict[str, list[str]] = {}
    for run_id, digest in runs:
        by_hash.setdefault(digest, []).append(run_id)
    found = {}
    for run_ids in by_hash.values():
        for run_id in run_ids if len(run_ids) > 1 else ():
            others = ", ".join(other for other in run_ids if other != run_id)
            found[run_id] = f"{MISMATCH}: its executed notebook is the same file as run {others}'s (a copied run)"
    return found


CACHE_FILE = ".verified.json"
_SETTLED_NS = 2_000_000_000


class VerificationCache:
    """`check_run` answers for run folders whose files are unchanged since they were last verified."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / CACHE_FILE
        self.rules = _rules_version()
        self.entries: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.changed = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("rules") == self.rules and isinstance(data.get("runs"), dict):
            self.entries = data["runs"]

    def check(self, folder: Path, record: RunRecord) -> str | None:
        key = f"{folder.parent.name}/{folder.name}"
        self.seen.add(key)
        signature = _signature(folder)
        cached = self.entries.get(key)
        if isinstance(cached, dict) and cached.get("signature") == signature:
            return cached.get("problem")
        problem = check_run(folder, record)
        # a file changed in the last moments could change again within the file system's timestamp granularity
        # without its times moving: such a run is verified again next time, never answered from the cache
        newest = max((entry[4] for entry in signature), default=0)
        if newest < time.time_ns() - _SETTLED_NS:
            self.entries[key] = {"signature": signature, "problem": problem}
            self.changed = True
        return problem

    def save(self) -> None:
        """Write the cache back when it changed (a read-only store just goes without)."""
        kept = {key: value for key, value in self.entries.items() if key in self.seen or (self.root / key).is_dir()}
        if not self.changed and len(kept) == len(self.entries):
            return
        data = {"rules": self.rules, "runs": dict(sorted(kept.items()))}
        tmp = self.path.with_name(f"{CACHE_FILE}.{os.getpid()}")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            tmp.unlink()


def _signature(folder: Path) -> list[list[Any]]:
    entries = []
    for directory, subdirs, files in os.walk(folder):
        here = Path(directory)
        for name in [*files, *subdirs]:
            try:
                info = (here / name).lstat()
            except OSError:
                continue
            relative = (here / name).relative_to(folder).as_posix()
            kind = stat.S_IFMT(info.st_mode)
            entries.append([relative, kind, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino])
    return sorted(entries)


def _rules_version() -> str:
    """The verification rules' own source: a cache written under other rules is not used."""
    digest = hashlib.sha256()
    for module in (Path(__file__), Path(__file__).with_name("evidence.py")):
        with contextlib.suppress(OSError):
            digest.update(module.read_bytes())
    return digest.hexdigest()
