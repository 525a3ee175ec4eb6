"""Warm Node workers: one Node process per Pi release serves many scenarios (``reference/worker.mjs``).

Starting Node and importing pi-coding-agent costs about a second and a half; a worker pays it once. The pool keeps
the workers of a process (one per release and per thread that asked at the same time) until the process ends
(:func:`close_workers`, registered with :mod:`atexit`; also called by the CLI on Ctrl-C). A worker that crashes,
is killed or overruns a scenario's time limit is killed and replaced; that scenario gets a one-line
:class:`PiFault`, the next ones run on a fresh worker. Each worker lives in its own process group and exits by
itself when its stdin closes or its parent is gone, so none outlives pinb.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from pinb.errors import ExperimentFault, ReferenceError_

#: How long a fresh worker may take to load its package set and say it is ready.
START_TIMEOUT_S = 120
STDERR_KEPT_LINES = 40


class PiFault(ReferenceError_, ExperimentFault):
    """The experiment did not complete: Node was killed by a signal, ran out of memory or overran its time limit.

    Never a result about Pi: a claim whose run raised it is ERROR, never CONTRADICTED."""


def signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        return f"killed by {signal_name(returncode)}"
    return f"exit code {returncode}"


def fault_from_exit(returncode: int | None, stderr_lines: Sequence[str]) -> str | None:
    """The fault a Node exit shows, or None when Node ended on its own (a result, or the runner's own error).

    A signal, and Node's own out-of-memory abort (it prints "heap out of memory" and aborts), are faults."""
    if any("heap out of memory" in line for line in stderr_lines):
        return "out of memory (Node's heap limit)"
    if returncode is not None and returncode < 0:
        return f"killed by {signal_name(returncode)}"
    return None


class NodeWorker:
    """One ``worker.mjs`` process for one package set. Not thread-safe: the pool hands it to one thread at a time."""

    def __init__(self, label: str, command_for: Callable[[int, Path], list[str]], env: dict[str, str]) -> None:
        self.label = label
        self._command_for = command_for
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_KEPT_LINES)
        self._folder: Path | None = None
        self._next_id = 0
        self.started = 0
        """How many Node processes this worker has started (restarts included)."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    @property
    def folder(self) -> Path | None:
        """The worker's temporary folder (each scenario gets a fresh one inside it; removed with the worker)."""
        return self._folder

    def _start(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="pinb-pi-worker-"))
        read_end, write_end = os.pipe()
        env = self._env | {"TMPDIR": str(self._folder)}
        try:
            command = self._command_for(write_end, self._folder)
        except BaseException:  # e.g. a context file above the folder: nothing started, nothing left
            os.close(read_end)
            os.close(write_end)
            self._remove_folder()
            raise
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write_end,),
                env=env,
                cwd=self._folder,  # Pi resolves some inputs (a system prompt) as paths relative to its cwd
                start_new_session=True,  # Ctrl-C at a terminal reaches pinb, which closes the worker itself
            )
        except OSError as exc:
            os.close(read_end)
            self._remove_folder()
            raise ReferenceError_(f"{self.label}: cannot start Node ({exc})") from None
        finally:
            with contextlib.suppress(OSError):
                os.close(write_end)
        self.started += 1
        self._replies = queue.Queue()
        self._stderr = deque(maxlen=STDERR_KEPT_LINES)
        replies = os.fdopen(read_end, "rb")
        assert self._process.stderr is not None
        threading.Thread(target=self._read_replies, args=(replies, self._replies), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self._process.stderr, self._stderr), daemon=True).start()
        ready = self._await(START_TIMEOUT_S, "start")
        if not ready.get("ready"):
            self._kill()
            raise ReferenceError_(f"{self.label}: the worker did not start ({ready})")

    @staticmethod
    def _read_replies(stream: IO[bytes], replies: queue.Queue[dict[str, Any] | None]) -> None:
        with stream:
            for line in stream:
                try:
                    replies.put(json.loads(line))
                except ValueError:
                    continue
        replies.put(None)

    @staticmethod
    def _read_stderr(stream: IO[bytes], kept: deque[str]) -> None:
        with stream:
            for line in stream:
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    kept.append(text)

    def _await(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._kill()
            raise PiFault(f"{self.label} did not finish {what} within its {timeout:g} s time limit") from None
        if reply is None:
            returncode = self._reap()
            lines = list(self._stderr)
            fault = fault_from_exit(returncode, lines)
            self._kill()
            if fault is not None:
                raise PiFault(f"{self.label} failed on {what}: the experiment did not complete: {fault}")
            first = lines[0] if lines else exit_description(returncode)
            raise ReferenceError_(f"{self.label} failed on {what}: {first}")
        return reply

    def _reap(self) -> int | None:
        assert self._process is not None
        try:
            return self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def run(self, text: str, name: str, timeout: float) -> str:
        """Run the scenario whose JSON text is ``text`` (its file name ``name``, for messages); its trace (JSONL)."""
        if self._process is None or self._process.poll() is not None:
            self._kill()
            self._start()
        assert self._process is not None and self._process.stdin is not None
        self._next_id += 1
        self._stderr.clear()  # what Node prints from here on is this scenario's
        request = json.dumps({"id": self._next_id, "text": text}, ensure_ascii=False) + "\n"
        try:
            self._process.stdin.write(request.encode("utf-8"))
            self._process.stdin.flush()
        except OSError:
            pass  # the worker died: its exit is read below
        reply = self._await(timeout, name)
        if reply.get("recycle"):
            self.close()  # the scenario left something running: the next one gets a fresh process
        if "error" in reply:
            first = next((line for line in str(reply["error"]).splitlines() if line.strip()), "no message")
            raise ReferenceError_(f"{self.label} failed on {name}: {first.strip()}")
        return str(reply["trace"])

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        self._remove_folder()

    def _remove_folder(self) -> None:
        folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        """End the worker: close its stdin (it exits by itself), then kill its process group whatever it does."""
        process = self._process
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=2)
        self._kill()


class WorkerPool:
    """Idle workers by key (a package set and its confinement); a thread takes one, or a new one, and gives it back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[str, list[NodeWorker]] = {}
        self._all: list[NodeWorker] = []
        self._closed = False

    def run(self, key: str, make: Callable[[], NodeWorker], text: str, name: str, timeout: float) -> str:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            worker = idle.pop() if idle else None
            if worker is None:
                worker = make()
                self._all.append(worker)
        try:
            return worker.run(text, name, timeout)
        finally:
            with self._lock:
                if self._closed:
                    worker.close()
                else:
                    self._idle[key].append(worker)

    def workers(self) -> list[NodeWorker]:
        with self._lock:
            return list(self._all)

    def close(self) -> None:
        with self._lock:
            workers, self._all, self._idle = self._all, [], {}
        for worker in workers:
            worker.close()


_pool = WorkerPool()
_pool_pid = os.getpid()


def pool() -> WorkerPool:
    """This process's pool (a forked child gets its own: its parent's workers are not its to use)."""
    global _pool, _pool_pid
    if _pool_pid != os.getpid():
        _pool, _pool_pid = WorkerPool(), os.getpid()
    return _pool


def close_workers() -> None:
    """End every worker this process started (idempotent)."""
    if _pool_pid == os.getpid():
        _pool.close()


atexit.register(close_workers)
