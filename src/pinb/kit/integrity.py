"""Does a run record still match the evidence beside it? Checked before any run is counted.

A run counts only when all of these hold:

- its folder is `runs/<chapter>/<run-id>/` for the chapter and run id its record names;
- its record lists the executed notebook, and every artefact it lists is a file in the folder with the recorded
  sha256; nothing else is in the folder (besides `run.json`);
- the claim outcomes in `run.json` are exactly those the executed notebook emitted (its pinb outputs are the
  evidence; the record is an index of them), and so are the warnings saying some outputs could not be read;
- every other field of the record (status, failure, times, command, parameters, backend, environment, inputs
  with the chapter text fingerprint and pinb's code fingerprint) is the one the kit sealed into the executed
  notebook's metadata (`metadata.pinb_seal`) when it recorded the run, and so is the list of the other artefacts;
- the record's times are UTC instants as the kit writes them (`2026-12-01T17:24:47.779Z`), the finish not before
  the start and not in the future;
- the notebook's execution metadata agrees with the record: it was written for this run (the output path papermill
  recorded names this run's folder), inside the record's start and finish times, with the record's parameters,
  on the Python version the record names, and a `completed` record's notebook records no exception;
- no other run has the same executed notebook (a copied run).

Records written before the seal (`schema_version` 1) are checked on what their notebook does carry: everything
above but the seal, and a notebook that ran every cell without an exception must have a `completed` record. Their
chapter text and code fingerprints, command and environment (Python aside) cannot be recomputed.

A run's verdict is cached in `<runs>/.verified.json`, keyed by a digest of the bytes of every file in its folder
and authenticated with a key kept outside the project (`verification_key`): an entry that another key wrote, or
that was added by hand, vouches for nothing. The cache only saves re-reading a notebook already verified; deleting
it changes no answer. The time checks depend on the clock and are made every time, outside the cache.

This catches edits and accidents. It is not a signature: someone who rewrites the notebook's metadata and
recomputes every hash can forge a record, and only the project's history (git) shows it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from pinb.files import NotRegularFile, user_cache_dir
from pinb.kit.evidence import UnreadableNotebook, load_notebook, outcomes_in
from pinb.kit.fingerprint import sha256_file
from pinb.kit.record import (
    EXECUTED_NOTEBOOK,
    MALFORMED_OUTPUT,
    RECORD_FILE,
    SEAL_KEY,
    SEALED_SCHEMA,
    UNREADABLE_NOTEBOOK,
    RunRecord,
    sealed_artifacts,
    sealed_fields,
)

#: The start of every reason a run is not counted.
MISMATCH = "record does not match its notebook"
#: The notebook parameter whose value names the run folder; it differs between the record and the notebook.
_ARTIFACTS_PARAMETER = "artifacts_dir"
#: Clock slack between the kit's timestamps and papermill's.
_SLACK = timedelta(seconds=5)
_RUN_ID_IN_PATH = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")
#: The one form the kit writes its times in: a UTC instant, `Z`, never an offset (a string sorts as its instant).
_UTC_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$")
#: How far a record's finish may lie ahead of this machine's clock (another machine's clock may run ahead).
_FUTURE_SLACK = timedelta(minutes=5)


class _Mismatch(Exception):
    pass


def check_run(folder: Path, record: RunRecord, hashes: Mapping[str, str] | None = None) -> str | None:
    """`None` when the run at `folder` matches its record, else one line starting with `MISMATCH`. `hashes`: the
    sha256 of regular files just read (by relative path, as `_digest` collects them), not read again."""
    try:
        _check(folder, record, hashes or {})
    except _Mismatch as exc:
        return f"{MISMATCH}: {exc}"
    return None


def record_problem(record: RunRecord, now: datetime | None = None) -> str | None:
    """What is wrong with the record's own times, checked on every read (the answer depends on the clock)."""
    now = now or datetime.now(UTC)
    times = {}
    for name in ("started_at", "finished_at"):
        value = getattr(record, name)
        parsed = _time(value) if isinstance(value, str) and _UTC_TIME.match(value) else None
        if parsed is None:
            return f"{MISMATCH}: its {name} {value!r} is not a UTC time as the kit writes it (2026-12-01T17:24:47.779Z)"
        times[name] = parsed
    if times["finished_at"] < times["started_at"]:
        return f"{MISMATCH}: it finished ({record.finished_at}) before it started ({record.started_at})"
    if times["finished_at"] > now + _FUTURE_SLACK:
        return f"{MISMATCH}: its finished_at {record.finished_at} is in the future"
    return None


def _check(folder: Path, record: RunRecord, hashes: Mapping[str, str]) -> None:
    if folder.name != record.run_id:
        raise _Mismatch(f"it is in folder {folder.name} but its record names run {record.run_id} (a copied run)")
    if folder.parent.name != record.chapter:
        raise _Mismatch(f"it is under {folder.parent.name}/ but its record names chapter {record.chapter}")
    _check_inputs(record)
    listed = _check_artifacts(folder, record, hashes)
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
    _check_seal(nb, record)


def _check_inputs(record: RunRecord) -> None:
    inputs = record.inputs
    if inputs.backend != record.backend:
        raise _Mismatch(f"its inputs name backend {inputs.backend}, its record {record.backend}")
    if inputs.notebook_sha256 != record.notebook.sha256:
        raise _Mismatch("its inputs and its record name different source notebooks")
    if inputs.parameters != _without_artifacts(record.parameters):
        raise _Mismatch("its inputs and its record name different parameters")


def _check_artifacts(folder: Path, record: RunRecord, hashes: Mapping[str, str]) -> set[str]:
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
            actual = hashes.get(artifact.path) or sha256_file(target)
        except NotRegularFile as exc:
            raise _Mismatch(f"{artifact.path} is {exc.strerror}") from None
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


def _check_seal(nb: dict[str, Any], record: RunRecord) -> None:
    """Every field the kit sealed into the notebook when it recorded the run equals the record's."""
    metadata = nb.get("metadata")
    seal = metadata.get(SEAL_KEY) if isinstance(metadata, dict) else None
    if seal is None:
        if record.schema_version >= SEALED_SCHEMA:
            raise _Mismatch(f"the notebook carries no record seal (metadata.{SEAL_KEY}), yet the record is sealed")
        _check_legacy_status(nb, record)
        return
    if not isinstance(seal, dict) or not isinstance(seal.get("record"), dict):
        raise _Mismatch(f"the notebook's record seal (metadata.{SEAL_KEY}) is malformed")
    difference = _difference(sealed_fields(record), seal["record"], "")
    if difference:
        raise _Mismatch(difference)
    if sealed_artifacts(record) != seal.get("artifacts"):
        raise _Mismatch("its list of artefacts differs from the one sealed in the notebook")


def _difference(said: Any, sealed: Any, where: str) -> str | None:
    """`inputs.text_fingerprint is 'x' in the record, 'y' in the notebook`, for the first field that differs."""
    if isinstance(said, dict) and isinstance(sealed, dict):
        for name in dict.fromkeys([*said, *sealed]):
            found = _difference(said.get(name), sealed.get(name), f"{where}.{name}" if where else name)
            if found:
                return found
        return None
    if said == sealed:
        return None
    return f"{where} is {_short(said)} in the record, {_short(sealed)} in the notebook's seal"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def _check_legacy_status(nb: dict[str, Any], record: RunRecord) -> None:
    """An unsealed record: its status is recomputed from the notebook where the notebook decides it."""
    if record.status == "completed":
        return
    metadata = nb.get("metadata")
    papermill = metadata.get("papermill") if isinstance(metadata, dict) else None
    if not isinstance(papermill, dict) or papermill.get("exception") or not papermill.get("end_time"):
        return
    states = [
        cell.get("metadata", {}).get("papermill", {}).get("status") if isinstance(cell, dict) else None
        for cell in nb["cells"]
    ]
    if states and all(state == "completed" for state in states):
        raise _Mismatch(f"the notebook ran every cell without an exception, yet the record says {record.status}")


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
    for name, parsed in (("start_time", began), ("end_time", ended)):
        if papermill.get(name) is not None and parsed is None:
            raise _Mismatch(f"the notebook's {name} {papermill[name]!r} is not a time")
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
_KEY_FILE = "verification.key"


class VerificationCache:
    """`check_run` answers for run folders whose files have the same bytes as when they were last verified.

    An entry is `{digest of every file of the folder, signature, problem, mac}`, the mac made with
    `verification_key()`: the cache never answers for a folder whose bytes changed, nor with an entry this key did
    not write. The signature (`_signature`: every entry's size, inode and modification and change times) is kept
    only once the folder's newest change is seconds old; while every entry still has it, the folder's bytes are not
    read again (as git trusts its index). Any write, rename or copy over a file changes its change time, which no
    user can set. Where there is no key (no writable cache folder) every run is verified afresh.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / CACHE_FILE
        self.rules = _rules_version()
        self.key = verification_key()
        self.entries: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.changed = False
        if self.key is None:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return
        if isinstance(data, dict) and data.get("rules") == self.rules and isinstance(data.get("runs"), dict):
            self.entries = data["runs"]

    def check(self, folder: Path, record: RunRecord) -> str | None:
        key = f"{folder.parent.name}/{folder.name}"
        self.seen.add(key)
        if self.key is None:
            return check_run(folder, record)
        cached = self.entries.get(key)
        if not self._holds(key, cached):
            cached = None
        signature = _signature(folder)
        if cached is not None and signature is not None and cached.get("signature") == signature[0]:
            return cached.get("problem")  # not a byte changed: every entry has the size and times it had
        hashes: dict[str, str] = {}
        digest = _digest(folder, hashes)
        if cached is not None and digest is not None and cached.get("digest") == digest:
            problem = cached.get("problem")
        else:
            problem = check_run(folder, record, hashes if digest is not None else None)
        if digest is not None:
            # a file changed in the last seconds may change again within its clock tick: its times do not vouch
            settled = signature is not None and signature[1] < time.time_ns() - _SETTLED_NS
            kept = signature[0] if settled and signature is not None else None
            entry = {
                "digest": digest,
                "signature": kept,
                "problem": problem,
                "mac": self._mac(key, digest, kept, problem),
            }
            if entry != self.entries.get(key):
                self.entries[key] = entry
                self.changed = True
        return problem

    def _holds(self, key: str, cached: Any) -> bool:
        """`cached` is an entry this key wrote for `key`, under these rules."""
        return (
            isinstance(cached, dict)
            and isinstance(cached.get("digest"), str)
            and (cached.get("signature") is None or isinstance(cached.get("signature"), str))
            and (cached.get("problem") is None or isinstance(cached.get("problem"), str))
            and isinstance(cached.get("mac"), str)
            and hmac.compare_digest(
                cached["mac"], self._mac(key, cached["digest"], cached.get("signature"), cached.get("problem"))
            )
        )

    def _mac(self, key: str, digest: str, signature: str | None, problem: str | None) -> str:
        assert self.key is not None
        message = json.dumps([self.rules, key, digest, signature, problem]).encode("utf-8")
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()

    def save(self) -> None:
        """Write the cache back when it changed (a read-only store just goes without)."""
        if self.key is None:
            return
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


def verification_key() -> bytes | None:
    """This user's key for the verification cache, made on first use (readable by the user alone) in the user's
    cache folder (`pinb.files.user_cache_dir`), or None."""
    folder = user_cache_dir()
    path = folder / _KEY_FILE
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{_KEY_FILE}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # the first writer's key wins; a concurrent process reads it back
        tmp.unlink()
        key = path.read_bytes()
    except (OSError, RuntimeError):
        return None
    return key if len(key) >= 32 else None


def _entries(folder: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every entry below `folder` in a fixed order: its relative path (with "/"), its path, its `lstat`. Plain
    strings and one lstat per entry: a run holds hundreds of traces and every listing walks them."""
    root = os.fspath(folder)
    for directory, subdirs, files in sorted(os.walk(root)):
        below = os.path.relpath(directory, root)
        prefix = "" if below == os.curdir else below.replace(os.sep, "/") + "/"
        for name in sorted([*files, *subdirs]):
            path = os.path.join(directory, name)
            yield prefix + name, path, os.lstat(path)


def _digest(folder: Path, hashes: dict[str, str] | None = None) -> str | None:
    """sha256 over every entry below `folder`: its relative path, its kind, and a regular file's bytes (each
    file's own sha256 also put in `hashes`, by relative path)."""
    digest = hashlib.sha256()
    try:
        for relative, path, info in _entries(folder):
            if stat.S_ISLNK(info.st_mode):
                digest.update(f"link\0{relative}\0{os.readlink(path)}\0".encode())
            elif stat.S_ISDIR(info.st_mode):
                digest.update(f"dir\0{relative}\0".encode())
            else:
                file_hash = sha256_file(path)
                if hashes is not None:
                    hashes[relative] = file_hash
                digest.update(f"file\0{relative}\0{file_hash}\0".encode())
    except (OSError, ValueError):
        return None
    return digest.hexdigest()


#: How long ago a run's newest change must be for its files' sizes and times to stand for their bytes.
_SETTLED_NS = 2_000_000_000


def _signature(folder: Path) -> tuple[str, int] | None:
    """sha256 over every entry below `folder`: its relative path, kind, size, inode and modification and change
    times (what a write, rename or copy over it changes), with the newest of those times; None when unreadable."""
    digest = hashlib.sha256()
    newest = 0
    try:
        for relative, _, info in _entries(folder):
            newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
            fields = (info.st_mode, info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
            digest.update(f"{relative}\0{fields}\0".encode())
    except (OSError, ValueError):
        return None
    return digest.hexdigest(), newest


def _rules_version() -> str:
    """The verification rules' own source: a cache written under other rules is not used."""
    digest = hashlib.sha256()
    for module in (Path(__file__), Path(__file__).with_name("evidence.py"), Path(__file__).with_name("record.py")):
        with contextlib.suppress(OSError):
            digest.update(module.read_bytes())
    return digest.hexdigest()
