"""`pinb verify`: plan every chapter's run (all checks before anything is written), skip what the cache says is
unchanged, execute the rest (in parallel processes with `jobs > 1`), and hand back what each chapter's evidence is.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from pinb.backends import Backend
from pinb.errors import KitError, PinbError
from pinb.kit import environment
from pinb.kit import store as run_store
from pinb.kit._imports import skip_unused_schema_extras
from pinb.kit.notebook import NotebookInfo, check_parameters, inspect_notebook
from pinb.kit.project import ChapterLike, Project, default_parameters
from pinb.kit.record import Inputs
from pinb.kit.reproduction import verify_line
from pinb.kit.status import ClaimStatus, chapter_statuses
from pinb.kit.stop import ignore_stop_signals, stop_requests
from pinb.kit.store import Listing, RunStore, StoredRun

if TYPE_CHECKING:
    from pinb.kit.execute import ExecutionRequest


@dataclass(frozen=True)
class VerifyOptions:
    chapters: tuple[str, ...] = ()
    #: `standin` or `pi`.
    backend: str = "standin"
    pi_version: str | None = None
    #: `--pi-version all`: every one of these releases (backend pi), all planned into one pool of `jobs` workers.
    pi_versions: tuple[str, ...] = ()
    #: (chapter id, backend label) pairs not to run, with why (a release without any layer the chapter needs).
    skip: dict[tuple[str, str], str] = field(default_factory=dict)
    jobs: int = 1
    force: bool = False
    cell_timeout: float | None = 600.0
    timeout: float | None = 1800.0
    #: Extra parameters (`-p NAME=VALUE`), checked against each notebook's `parameters` cell.
    parameters: dict[str, Any] = field(default_factory=dict)
    command: str = "pinb verify"
    progress: bool = True
    #: After recording a run, rewrite `reports/` and the README's ledger table where the project has them.
    refresh_ledger: bool = True


@dataclass
class ChapterResult:
    chapter: ChapterLike
    #: The run whose outcomes stand for this chapter: new, or reused from the cache.
    run: StoredRun | None = None
    cached: bool = False
    #: Why the kit could not produce a run at all.
    error: str | None = None
    #: The backend it ran on (`standin`, `pi@1.6.0`).
    backend: str = ""
    #: The latest completed run of the chapter on this backend and parameters before this verify: what reproduces.
    previous: StoredRun | None = None
    #: The chapter's status on this backend after the run (what `pinb status --backend` now says).
    statuses: list[ClaimStatus] = field(default_factory=list)
    #: One line: did the outcomes reproduce (`verify_line`).
    reproduction: str = ""


#: Each chapter's result by (chapter id, backend label).
ByTarget = dict[tuple[str, str], ChapterResult]


@dataclass
class VerifyResult:
    results: list[ChapterResult]
    interrupted: bool = False
    #: Files the ledger refresh rewrote (`reports/…`, `README.md`).
    refreshed: list[Path] = field(default_factory=list)
    #: Why the ledger was not rewritten (an unreadable run record), when it was not.
    ledger_error: str = ""
    #: Files the refresh left as committed, with why: rendered here they would be weaker (`ledger.weaker`).
    held_back: dict[Path, str] = field(default_factory=dict)
    #: Every run of the store once this verify's are written (each verified), as its conclusion read them.
    stored: list[StoredRun] = field(default_factory=list)


def _refuse_edited_session(
    project: Project, chapter: ChapterLike, notebook: Path, info: NotebookInfo, listing: Listing
) -> None:
    """A notebook saved with outputs is a reader's session: harmless while its cells are a recorded run's, but an
    edited one (a changed scenario, say) is not the chapter's notebook and is not recorded as its evidence."""
    if not info.has_outputs:
        return
    recorded = {run.record.inputs.notebook_sha256 for run in listing.runs if run.record.chapter == chapter.id}
    if recorded and info.fingerprint not in recorded:
        where = notebook.relative_to(project.root).as_posix()
        raise KitError(
            f"{where} was saved with outputs and its cells differ from every recorded run's (edited in Jupyter?), "
            f"so it is not recorded: restore it with `git checkout -- {where}`, or clear its outputs to record the edit"
        )


def _backends(project: Project, options: VerifyOptions) -> list[str]:
    """The backend labels to verify on: one, or with `pi_versions` every release asked for (each checked)."""
    if options.pi_version and options.backend != "pi":
        raise KitError("--pi-version applies to --backend pi only")
    if options.pi_versions and options.backend != "pi":
        raise KitError("--pi-version all needs --backend pi")
    if options.backend != "pi":
        return [Backend.parse(options.backend).label]
    versions = list(options.pi_versions) or [options.pi_version or project.pi_version]
    supported = environment.supported_pi_versions()
    for version in versions:
        if supported is not None and version not in supported:
            raise KitError(f"unknown Pi version {version!r}: supported are {', '.join(supported)}")
    return [Backend.parse("pi", version).label for version in versions]


def plan(project: Project, options: VerifyOptions) -> tuple[list[ExecutionRequest], list[ChapterResult]]:
    """Build every request, or raise `KitError` for the first bad input; nothing is written."""
    if options.jobs < 1:
        raise KitError("--jobs must be at least 1")
    backends = _backends(project, options)
    chapters = project.select(list(options.chapters))
    if not chapters:
        raise KitError("no chapters are registered")
    listing = project.store.list()
    todo: list[tuple[ChapterLike, Path, Inputs, dict[str, Any], str]] = []
    results: list[ChapterResult] = []
    for backend in backends:
        here = environment.reuse_key(backend)
        for chapter in chapters:
            if (chapter.id, backend) in options.skip:
                continue
            notebook = project.notebook_path(chapter)
            info = inspect_notebook(notebook)
            parameters = default_parameters(backend, info.parameter_names) | dict(options.parameters)
            check_parameters(notebook, info, parameters)
            _refuse_edited_session(project, chapter, notebook, info, listing)
            inputs = project.current_inputs(chapter, backend, parameters).model_copy(update={"environment": here})
            completed = [
                run
                for run in listing.runs
                if run.record.chapter == chapter.id
                and run.record.backend == backend
                and run.record.inputs.parameters == parameters
                and run.record.status == "completed"
                and run.verified
            ]
            result = ChapterResult(chapter=chapter, backend=backend, previous=completed[-1] if completed else None)
            results.append(result)
            # re-used only on equal inputs *and* environment: on another machine the notebook runs again
            cached = [run for run in completed if run.record.inputs == inputs]
            if cached and not options.force:
                result.run, result.cached = cached[-1], True
                continue
            todo.append((chapter, notebook, inputs, parameters, backend))
    if not todo:
        return [], results
    for backend in dict.fromkeys(item[4] for item in todo):
        version = backend.split("@", 1)[1] if backend.startswith("pi@") else None
        if version is not None and environment.pi_installed(version) is False:
            raise KitError(
                f"Pi {version} is not installed here, so nothing was run or recorded: "
                f"run `pinb reference install --pi-version {version}` (it needs Node and npm)"
            )
    project.store.ensure_writable()
    skip_unused_schema_extras()
    from pinb.kit.execute import ExecutionRequest  # papermill and nbformat load only when something runs

    envs = {backend: environment.collect(project.root, backend, project.kernel_name) for *_, backend in todo}
    # the longest first (as their last runs took; unknown ones first), so a pool of N ends together
    previous = {(result.chapter.id, result.backend): result.previous for result in results}
    todo.sort(key=lambda item: -_took(previous.get((item[0].id, item[4]))))
    requests = [
        ExecutionRequest(
            chapter=chapter.id,
            notebook=notebook,
            notebook_ref=Path(chapter.notebook).as_posix(),
            parameters=parameters,
            backend=backend,
            inputs=inputs,
            command=options.command,
            environment=envs[backend],
            kernel_name=project.kernel_name,
            cell_timeout=options.cell_timeout,
            timeout=options.timeout,
            known_claims=frozenset(claim.id for claim in chapter.claims),
        )
        for chapter, notebook, inputs, parameters, backend in todo
    ]
    return requests, results


def _took(run: StoredRun | None) -> float:
    """How long a run took in seconds; infinity when unknown."""
    from datetime import datetime

    if run is None:
        return float("inf")
    try:
        started = datetime.fromisoformat(run.record.started_at.replace("Z", "+00:00"))
        finished = datetime.fromisoformat(run.record.finished_at.replace("Z", "+00:00"))
    except ValueError:
        return float("inf")
    return (finished - started).total_seconds()


def verify(project: Project, options: VerifyOptions) -> VerifyResult:
    requests, results = plan(project, options)
    by_chapter = {(result.chapter.id, result.backend): result for result in results}
    outcome = VerifyResult(results=results)
    if requests:
        bar = tqdm(total=len(requests), desc="pinb verify", unit="notebook", disable=None if options.progress else True)
        try:
            if options.jobs == 1 or len(requests) == 1:
                outcome.interrupted = _run_sequential(requests, project.store, by_chapter, bar)
            else:
                outcome.interrupted = _run_parallel(requests, project.store, by_chapter, bar, options.jobs)
        finally:
            bar.close()
    with project.store.unchanged():  # its runs are written: the conclusion and the ledger read them once
        _conclude(project, outcome)
        if options.refresh_ledger and any(item.run is not None and not item.cached for item in results):
            from pinb.kit import ledger

            try:
                weak = ledger.weaker(project)
                outcome.refreshed = ledger.refresh(project, keep=weak)
                outcome.held_back = ledger.held_back(project, weak)
            except KitError as exc:
                outcome.ledger_error = str(exc)
    return outcome


def _conclude(project: Project, outcome: VerifyResult) -> None:
    """Each chapter's status on its backend now, and whether its outcomes reproduced."""
    listing = project.store.list()
    outcome.stored = listing.runs
    by_id = {run.record.run_id: run for run in listing.runs}
    for item in outcome.results:
        if item.run is not None:  # read back: the stored run, verified like any other
            item.run = by_id.get(item.run.record.run_id, item.run)
        item.statuses = chapter_statuses(project, item.chapter, listing.runs, item.backend)
        item.reproduction = verify_line(item.run, item.previous, cached=item.cached, error=item.error)


def execute_run(request: ExecutionRequest, store: RunStore) -> StoredRun:
    from pinb.kit.execute import execute_run as run

    return run(request, store)


def _run_sequential(requests: list[ExecutionRequest], store: RunStore, by_chapter: ByTarget, bar: tqdm) -> bool:
    for request in requests:
        bar.set_postfix_str(f"{request.chapter} on {request.backend}")
        result = by_chapter[request.chapter, request.backend]
        try:
            result.run = execute_run(request, store)
        except PinbError as exc:
            result.error = str(exc)
        bar.update()
        if result.run is not None and result.run.record.status == "interrupted":
            return True
    return False


#: In a worker process: set by the parent once verify is stopping, so no queued notebook starts after that.
_stopping: Any = None


def _init_worker(stopping: Any, parent: int) -> None:
    global _stopping
    _stopping = stopping
    ignore_stop_signals()
    run_store.commit_allowed = lambda: os.getppid() == parent
    threading.Thread(target=_watch_parent, args=(parent,), name="pinb-watch-parent", daemon=True).start()


#: How often a worker looks whether the `pinb verify` that started it is still there.
_WATCH_INTERVAL = 0.2


def _watch_parent(parent: int) -> None:
    """A worker outlives its parent (killed with SIGKILL, say) by at most a moment: it kills what it started (the
    kernel and the kernel's own children) and exits, committing nothing (`run_store.commit_allowed`)."""
    while os.getppid() == parent:
        time.sleep(_WATCH_INTERVAL)
    _kill_descendants()
    os._exit(1)


def _kill_descendants() -> None:
    try:
        import psutil  # a dependency of ipykernel
    except ImportError:
        return
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error, OSError):
                os.killpg(child.pid, signal.SIGKILL) if os.getpgid(child.pid) == child.pid else child.kill()


def _execute_in_worker(request: ExecutionRequest, runs_dir: str) -> StoredRun | str:
    if _stopping is not None and _stopping.is_set():
        return "error: not run: verify was stopped first"
    try:
        return execute_run(request, RunStore(Path(runs_dir)))
    except PinbError as exc:
        return f"error: {exc}"


def _run_parallel(
    requests: list[ExecutionRequest],
    store: RunStore,
    by_chapter: ByTarget,
    bar: tqdm,
    jobs: int,
) -> bool:
    """Workers ignore the stop signals except while they write a run (`execute_run` listens then); this process
    passes a stop on to them — a Ctrl-C at a terminal reaches them too, a SIGTERM or a signal sent to this process
    alone does not — and waits until each has stopped its notebook and recorded the run as interrupted."""
    context = multiprocessing.get_context()
    stopping = context.Event()
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(requests), os.cpu_count() or jobs),
        mp_context=context,
        initializer=_init_worker,
        initargs=(stopping, os.getpid()),
    )
    pending: dict[Future[StoredRun | str], ExecutionRequest] = {
        pool.submit(_execute_in_worker, request, str(store.root)): request for request in requests
    }
    with stop_requests() as stop:
        try:
            while pending and not stop:
                done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    _settle(pending.pop(future), future, by_chapter)
                    bar.update()
            if stop:
                stopping.set()
                for future in pending:
                    future.cancel()
                _signal_workers(pool, stop.signum or signal.SIGINT)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for future, request in pending.items():
            if future.done() and not future.cancelled():
                _settle(request, future, by_chapter)
    return bool(stop) or any(r.run is not None and r.run.record.status == "interrupted" for r in by_chapter.values())


def _signal_workers(pool: ProcessPoolExecutor, signum: int) -> None:
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(ProcessLookupError, AttributeError):
            os.kill(process.pid, signum)


def _settle(request: ExecutionRequest, future: Future[StoredRun | str], by_chapter: ByTarget) -> None:
    result = by_chapter[request.chapter, request.backend]
    try:
        value = future.result()
    except BaseException as exc:  # a worker that died (BrokenProcessPool) or was interrupted
        result.error = f"the worker running {request.chapter} stopped: {type(exc).__name__}: {exc}".strip()
        return
    if isinstance(value, str):
        result.error = value.removeprefix("error: ")
    else:
        result.run = value
