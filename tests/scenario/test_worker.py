"""The warm worker's bookkeeping, without Node: a fake worker speaks reference/worker.mjs's protocol."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import worker
from pinb.scenario.worker import NodeWorker, PiFault, WorkerPool, fault_from_exit

FAKE = Path(__file__).with_name("fake_worker.py")


def _command(reply_fd: int, folder: Path) -> list[str]:
    return [sys.executable, str(FAKE), "--reply-fd", str(reply_fd)]


def _worker() -> NodeWorker:
    return NodeWorker("Pi 9.9.9", _command, dict(os.environ))


def _ask(do: str, **fields: str) -> str:
    return json.dumps({"do": do, **fields})


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not running: it only waits for its parent to read its status
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().split(")")[-1].split()[0] == "Z")


def test_one_process_serves_many_scenarios() -> None:
    w = _worker()
    try:
        traces = [w.run(_ask("echo", trace=f"line {n}\n"), f"s{n}.json", 10) for n in range(5)]
        assert traces == [f"line {n}\n" for n in range(5)]
        assert w.started == 1
    finally:
        w.close()


def test_the_runners_error_is_one_line_and_the_worker_stays() -> None:
    w = _worker()
    try:
        pid = w.run(_ask("pid"), "a.json", 10)
        with pytest.raises(ReferenceError_) as caught:
            w.run(_ask("error", error="TypeError: boom\n    at main (runner.mjs:1:1)"), "b.json", 10)
        assert str(caught.value) == "Pi 9.9.9 failed on b.json: TypeError: boom"
        assert not isinstance(caught.value, PiFault)
        assert w.run(_ask("pid"), "c.json", 10) == pid
    finally:
        w.close()


def test_a_crash_is_a_fault_and_the_next_scenario_gets_a_fresh_worker() -> None:
    w = _worker()
    try:
        first = int(w.run(_ask("pid"), "a.json", 10))
        with pytest.raises(PiFault) as caught:
            w.run(_ask("crash"), "crash.json", 10)
        assert str(caught.value) == (
            "Pi 9.9.9 failed on crash.json: the experiment did not complete: killed by SIGKILL"
        )
        assert not _alive(first)
        second = int(w.run(_ask("pid"), "b.json", 10))
        assert second != first and w.started == 2
    finally:
        w.close()


def test_out_of_memory_is_a_fault() -> None:
    w = _worker()
    try:
        with pytest.raises(PiFault, match=r"the experiment did not complete: out of memory \(Node's heap limit\)$"):
            w.run(_ask("oom"), "big.json", 10)
        assert w.run(_ask("echo", trace="ok"), "next.json", 10) == "ok"
    finally:
        w.close()


def test_a_hang_is_killed_at_the_time_limit_and_the_others_go_on() -> None:
    w = _worker()
    try:
        hung = int(w.run(_ask("pid"), "a.json", 10))
        started = time.monotonic()
        with pytest.raises(PiFault, match=r"^Pi 9\.9\.9 did not finish hang\.json within its 0\.5 s time limit$"):
            w.run(_ask("hang"), "hang.json", 0.5)
        assert time.monotonic() - started < 5
        assert not _alive(hung)
        assert w.run(_ask("echo", trace="after"), "b.json", 10) == "after"
    finally:
        w.close()


def test_a_scenario_that_leaves_something_running_gets_the_worker_replaced() -> None:
    w = _worker()
    try:
        first = int(w.run(_ask("pid"), "a.json", 10))
        assert w.run(_ask("recycle", trace="kept"), "leaves.json", 10) == "kept"
        assert w.pid is None
        assert int(w.run(_ask("pid"), "b.json", 10)) != first
    finally:
        w.close()


def test_close_ends_the_process_and_removes_its_folder() -> None:
    w = _worker()
    pid = int(w.run(_ask("pid"), "a.json", 10))
    folder = w.folder
    assert folder is not None and folder.is_dir()
    w.close()
    assert not _alive(pid)
    assert not folder.exists()
    w.close()  # idempotent


def test_the_worker_gets_its_folder_as_tmpdir(tmp_path: Path) -> None:
    seen = {}

    def command(reply_fd: int, folder: Path) -> list[str]:
        seen["folder"] = folder
        return _command(reply_fd, folder)

    w = NodeWorker("Pi 9.9.9", command, dict(os.environ))
    try:
        w.run(_ask("echo"), "a.json", 10)
        assert seen["folder"].name.startswith("pinb-pi-worker-")
    finally:
        w.close()


def test_the_pool_reuses_a_worker_and_runs_one_per_thread_at_once() -> None:
    pool = WorkerPool()
    made: list[NodeWorker] = []

    def make() -> NodeWorker:
        made.append(_worker())
        return made[-1]

    try:
        pids = {pool.run("9.9.9", make, _ask("pid"), f"s{n}.json", 10) for n in range(3)}
        assert len(pids) == 1 and len(made) == 1
        barrier = threading.Barrier(2)
        results: list[str] = []

        def hold() -> None:
            barrier.wait()
            results.append(pool.run("9.9.9", make, _ask("pid"), "x.json", 10))

        threads = [threading.Thread(target=hold) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(made) <= 2 and len(results) == 2
        assert pool.run("1.0.0", make, _ask("pid"), "other.json", 10) not in pids  # one worker per release
    finally:
        pool.close()
    assert all(w.pid is None for w in made)


@pytest.mark.parametrize(
    ("returncode", "stderr", "fault"),
    [
        (-9, [], "killed by SIGKILL"),
        (-15, [], "killed by SIGTERM"),
        (-6, ["FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"], "out of memory"),
        (134, ["<--- JS stacktrace --->", "FATAL ERROR: ... JavaScript heap out of memory"], "out of memory"),
        (1, ["TypeError: boom"], None),
        (0, [], None),
    ],
)
def test_which_exits_are_faults(returncode: int, stderr: list[str], fault: str | None) -> None:
    found = fault_from_exit(returncode, stderr)
    assert (found if found is None else found.split(" (")[0]) == fault


_HOLDER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, {tests!r})
    from pinb.scenario import worker
    from scenario.test_worker import _worker
    w = _worker()
    print(w.run('{{"do": "pid"}}', "a.json", 10), flush=True)
    worker.pool()._all.append(w)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_no_worker_outlives_its_parent(how: signal.Signals) -> None:
    """Ctrl-C (or a kill) of the process that owns a worker leaves no worker behind."""
    code = _HOLDER.format(tests=str(Path(__file__).resolve().parents[1]))
    if how == signal.SIGTERM:
        code = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(143))\n" + code
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert _alive(pid)
        parent.send_signal(how)
        parent.wait(timeout=20)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        parent.kill()
        parent.wait()


def test_a_forked_child_does_not_use_its_parents_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "_pool_pid", -1)
    fresh = worker.pool()
    assert fresh is worker.pool() and worker._pool_pid == os.getpid()


def test_a_worker_that_cannot_start_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def refuse(reply_fd: int, folder: Path) -> list[str]:
        raise ReferenceError_("refused")

    w = NodeWorker("Pi 9.9.9", refuse, dict(os.environ))
    with pytest.raises(ReferenceError_, match=r"^refused$"):
        w.run(_ask("echo"), "a.json", 10)
    assert list(tmp_path.iterdir()) == []
