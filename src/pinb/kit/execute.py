"""Execute one chapter notebook headlessly with papermill and record the run.

With `pinb.kit.engine`, the only modules that import papermill and nbclient. `execute_run` reads as its steps:
inspect the notebook (before anything is written), reserve a run folder, execute with parameters injected into the
`parameters` cell, always keep the executed notebook (failure, timeout, dead kernel, SIGINT, SIGTERM alike), read
the claim outcomes back from its outputs, and commit the run record next to it — in that order, whatever signal
arrives on the way (`pinb.kit.stop`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import papermill
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from papermill.exceptions import PapermillExecutionError

from pinb.errors import KitError
from pinb.kit.claims import ClaimOutcome
from pinb.kit.engine import ENGINE_NAME, Progress
from pinb.kit.environment import ipykernel_on_this_interpreter
from pinb.kit.evidence import notebook_outcomes
from pinb.kit.fingerprint import sha256_file
from pinb.kit.notebook import check_parameters, inspect_notebook, read_notebook
from pinb.kit.record import (
    EXECUTED_NOTEBOOK,
    Artifact,
    Environment,
    Inputs,
    NotebookRef,
    RunRecord,
    RunStatus,
    utc_now,
)
from pinb.kit.stop import StopRequest, redeliver, stop_requests
from pinb.kit.store import RunStore, StoredRun

#: A notebook that declares this parameter gets a folder for its own artefacts (traces...), hashed into the record.
ARTIFACTS_PARAMETER = "artifacts_dir"
ARTIFACTS_DIR = "artifacts"
#: The kernel process's own stdout and stderr.
KERNEL_LOG = "kernel.log"
#: How long a stopped run waits for its client to write the notebook once its kernel is killed.
STOP_GRACE = 30.0


@dataclass(frozen=True)
class ExecutionRequest:
    """Everything one execution needs; built by `pinb verify` (or a test) and handed to `execute_run`."""

    chapter: str
    #: Absolute path of the source notebook, and the same relative to the project root for the record.
    notebook: Path
    notebook_ref: str
    parameters: dict[str, Any]
    backend: str
    inputs: Inputs
    command: str
    environment: Environment
    kernel_name: str = "python3"
    cell_timeout: float | None = 600.0
    timeout: float | None = 1800.0
    #: Claim ids the chapter registers; outcomes for other ids are kept and warned about.
    known_claims: frozenset[str] = field(default_factory=frozenset)


def execute_run(request: ExecutionRequest, store: RunStore) -> StoredRun:
    info = inspect_notebook(request.notebook)
    parameters = dict(request.parameters)
    check_parameters(request.notebook, info, parameters)
    if info.fingerprint != request.inputs.notebook_sha256:
        raise KitError(f"{request.notebook.name} changed while pinb was preparing its run; run verify again")

    stored: StoredRun | None = None
    stop = StopRequest()
    try:
        with stop_requests() as stop:
            stored = _execute_and_record(request, store, info.fingerprint, info.parameter_names, parameters, stop)
    finally:
        if stop and (stored is None or stored.record.status != "interrupted"):
            # the stop came after the notebook had finished (recorded as it was) or while the kit failed: it goes
            # on to the handler that was there before
            redeliver(stop)
    return stored


def _execute_and_record(
    request: ExecutionRequest,
    store: RunStore,
    notebook_sha256: str,
    declared: tuple[str, ...],
    parameters: dict[str, Any],
    stop: StopRequest,
) -> StoredRun:
    pending = store.begin(request.chapter)
    try:
        output = pending.path / EXECUTED_NOTEBOOK
        injected = dict(parameters)
        if ARTIFACTS_PARAMETER in declared:
            (pending.path / ARTIFACTS_DIR).mkdir()
            # relative to the kernel's working directory (the notebook's folder): the executed notebook, which is
            # evidence and may be committed, names no path of the machine it ran on
            injected[ARTIFACTS_PARAMETER] = os.path.relpath(pending.path / ARTIFACTS_DIR, request.notebook.parent)
            parameters[ARTIFACTS_PARAMETER] = ARTIFACTS_DIR
        started_at = utc_now()
        status, failure = _execute(request, injected, output, stop)
        finished_at = utc_now()
        if not output.exists():  # the kernel never started: keep the parameterised source as the artefact
            _write_source_copy(request.notebook, output)
        claims, warnings = collect_outcomes(output, request.backend, request.known_claims)
        record = RunRecord(
            run_id=pending.run_id,
            chapter=request.chapter,
            notebook=NotebookRef(path=request.notebook_ref, sha256=notebook_sha256),
            parameters=parameters,
            backend=request.backend,
            command=request.command,
            started_at=started_at,
            finished_at=finished_at,
            status=status,
            failure=failure,
            environment=request.environment,
            claims=claims,
            artifacts=_artifacts(pending.path),
            inputs=request.inputs,
            warnings=warnings,
        )
        return pending.commit(record)
    except BaseException:
        pending.abandon()
        raise


def _execute(
    request: ExecutionRequest, parameters: dict[str, Any], output: Path, stop: StopRequest
) -> tuple[RunStatus, str | None]:
    """Run papermill (with pinb's engine) in a worker thread, keeping this thread free to enforce the notebook's
    deadline (even while a kernel hangs on start-up) and to act on a stop request: it kills the kernel, the engine
    then writes the executed notebook as far as it got, and the run is recorded as interrupted.
    """
    began = time.monotonic()
    kernels: list[AsyncKernelManager] = []
    progress = Progress()
    outcome: dict[str, BaseException | None] = {}
    finished = threading.Event()

    def cell_timeout(_cell: Any) -> float | None:
        # nbclient asks per cell; the notebook's deadline caps each cell at the time left
        limits = [request.cell_timeout] if request.cell_timeout else []
        if request.timeout:
            limits.append(max(request.timeout - (time.monotonic() - began), 0.05))
        return min(limits) if limits else None

    def work() -> None:
        try:
            papermill.execute_notebook(  # papermill records both paths in the notebook: keep them relative
                _relative(request.notebook),
                _relative(output),
                parameters=parameters,
                engine_name=ENGINE_NAME,
                kernel_name=request.kernel_name,
                progress_bar=False,
                log_output=False,
                cwd=str(request.notebook.parent),
                timeout_func=cell_timeout,
                kernel_manager_class=_tracking_kernel_manager(kernels, log, sockets),
                pinb_progress=progress,
            )
            outcome["error"] = None
        except BaseException as exc:  # reported by the calling thread
            outcome["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name=f"pinb-{request.chapter}", daemon=True)
    stopped: str | None = None
    with (
        open(output.parent / KERNEL_LOG, "wb") as log,
        _papermill_log_to(log),
        _socket_folder() as sockets,
    ):
        worker.start()
        # waits on an Event, never in Thread.join with a timeout (which a signal can break on Python 3.11)
        given_up_at: float | None = None
        while not finished.wait(0.1):
            now = time.monotonic()
            if stopped is None and stop:
                stopped = "interrupted"
            elif stopped is None and request.timeout and now - began > request.timeout + 2:
                stopped = "timeout"  # a hung kernel start or a cell ignoring its own timeout
            if stopped is None:
                continue
            _kill(kernels)  # again each time: a kernel may still have been starting
            given_up_at = given_up_at or now + STOP_GRACE
            if now > given_up_at:
                progress.seal()  # the client is stuck even with its kernel gone: keep what it had
                break
        if finished.is_set():
            worker.join()
    error = outcome.get("error")
    if stopped == "interrupted" or (stop and error is not None):
        return "interrupted", stop.reason()
    if stopped == "timeout":
        return "failed", f"the notebook timed out after {request.timeout:g} s"
    match error:
        case None:
            return "completed", None
        case PapermillExecutionError():
            return "failed", f"cell {error.exec_count} raised {error.ename}: {_first_line(error.evalue)}"
        case CellTimeoutError():
            if request.timeout and time.monotonic() - began >= request.timeout - 0.5:
                return "failed", f"the notebook timed out after {request.timeout:g} s"
            return "failed", f"a cell ran longer than {request.cell_timeout:g} s"
        case DeadKernelError():
            return "failed", f"the kernel died: {_one_line(error)}"
        case KeyboardInterrupt():
            return "interrupted", "interrupted (Ctrl-C)"
        case _:  # the kit could not run it: no such kernel, kernel start timeout, unwritable output
            return "error", f"{type(error).__name__}: {_one_line(error)}"


def _relative(path: Path) -> str:
    """`path` relative to the working directory when it lies below it, else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _tracking_kernel_manager(
    kernels: list[AsyncKernelManager], log: IO[bytes], sockets: Path | None
) -> type[AsyncKernelManager]:
    """A kernel manager that lets the calling thread find the kernel process, and keeps the kernel's own
    stdout/stderr (start-up warnings, a crash's last words) in the run folder instead of the user's terminal.

    With `sockets` (a private folder), the kernel talks over Unix sockets there instead of TCP ports: a TCP port is
    chosen free and then bound by the kernel a moment later, and a kernel started at the same time elsewhere on the
    machine (`--jobs 2`, another user) can take it in between — the kernel dies on start and the run waits 60 s
    for it ("Kernel didn't respond").
    """

    class TrackingKernelManager(AsyncKernelManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if sockets is not None:
                self.transport = "ipc"
                self.ip = str(sockets / f"k{len(kernels)}")
            kernels.append(self)

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            # an IPython kernel always runs on this interpreter (the one pinb and the notebook's imports live in),
            # whatever interpreter an installed kernel spec names
            return ipykernel_on_this_interpreter(super().format_kernel_cmd(extra_arguments))

        async def start_kernel(self, **kwargs: Any) -> None:  # type: ignore[override]
            kwargs.setdefault("stdout", log)
            kwargs.setdefault("stderr", log)
            await super().start_kernel(**kwargs)

    return TrackingKernelManager


@contextmanager
def _socket_folder() -> Iterator[Path | None]:
    """A private folder for the kernel's Unix sockets (short: socket paths are limited to about 100 bytes), or
    None where there are no Unix sockets."""
    if os.name != "posix":
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="pinb-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _papermill_log_to(log: IO[bytes]) -> Iterator[None]:
    """papermill and nbclient log through the `papermill` logger; their lines belong with the kernel's."""

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            log.write(f"[{record.levelname}] {record.getMessage()}\n".encode())
            log.flush()

    logger = logging.getLogger("papermill")
    handler, propagate = Handler(logging.INFO), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _kill(kernels: list[AsyncKernelManager]) -> None:
    """Kill each kernel, and what it started (a Node process of the `pi` backend): jupyter_client starts a kernel
    in a session of its own, so its process group is the kernel and its children."""
    for manager in kernels:
        process = getattr(getattr(manager, "provisioner", None), "process", None)
        if process is None or process.poll() is not None:
            continue
        try:
            if hasattr(os, "killpg") and os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
                continue
        except OSError:
            pass
        process.kill()


def collect_outcomes(
    executed: Path, backend: str, known_claims: frozenset[str]
) -> tuple[tuple[ClaimOutcome, ...], tuple[str, ...]]:
    """Read every pinb claim output of an executed notebook, in order (as `pinb status` reads it back)."""
    return notebook_outcomes(executed, backend, known_claims)


def _artifacts(run_dir: Path) -> tuple[Artifact, ...]:
    found = [Artifact(path=EXECUTED_NOTEBOOK, sha256=sha256_file(run_dir / EXECUTED_NOTEBOOK), kind="notebook")]
    if (run_dir / KERNEL_LOG).is_file():
        found.append(Artifact(path=KERNEL_LOG, sha256=sha256_file(run_dir / KERNEL_LOG), kind="file"))
    extra = run_dir / ARTIFACTS_DIR
    if extra.is_dir():
        for item in sorted(p for p in extra.rglob("*") if p.is_file()):
            kind = "trace" if item.suffix == ".jsonl" else "file"
            found.append(Artifact(path=item.relative_to(run_dir).as_posix(), sha256=sha256_file(item), kind=kind))
    return tuple(found)


def _write_source_copy(source: Path, output: Path) -> None:
    """The source notebook without the outputs a Jupyter session may have saved in it: they are no run's."""
    nb = read_notebook(source)
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    output.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
