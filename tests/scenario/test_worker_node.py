"""The warm worker and the confinement on real Node and Pi (skipped where Pi 1.6.0 is not installed).

What they prove: a scenario's trace does not depend on what ran before it in the same worker; the corpus comes out
byte for byte as recorded; code a scenario or a book brings cannot write outside its folder, start a process,
reach the network or leave anything behind; a context file above the run's folder never reaches a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import reference, worker

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def _installed(version: str) -> bool:
    try:
        return reference.is_installed(version)
    except ReferenceError_:
        return False


pytestmark = pytest.mark.skipif(not _installed("1.6.0"), reason="Pi 1.6.0 is not installed (pinb reference install)")


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[worker.WorkerPool]:
    """A pool of this test's own, closed afterwards."""
    fresh = worker.WorkerPool()
    monkeypatch.setattr(worker, "_pool", fresh)
    monkeypatch.setattr(worker, "_pool_pid", os.getpid())
    yield fresh
    fresh.close()


def _with_extension(tmp_path: Path, name: str, source: str, event: str = "session_start") -> Path:
    """An app scenario (two scripted replies) whose one extension is ``source``, with one handler on ``event``."""
    scenario = json.loads((SCENARIOS / "app-two-prompts.json").read_text(encoding="utf-8"))
    scenario["id"] = name
    scenario["extensions"] = [
        {
            "name": "probe",
            "handlers": [{"event": event, "label": "probe", "action": {"kind": "record"}}],
            "source": source,
        }
    ]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


DIRTY = """
export default function (pi) {
  globalThis.leftOver = { by: "dirty" };
  process.env.PINB_DIRTY = "1";
  delete process.env.PI_OFFLINE;
  pi.on("session_start", async () => { globalThis.leftOver.seen = true; });
}
"""


def _pids(pool: worker.WorkerPool) -> set[int | None]:
    return {w.pid for w in pool.workers()}


def test_a_scenario_alone_and_after_dirtying_ones_gives_the_same_trace(pool: worker.WorkerPool, tmp_path: Path) -> None:
    probe = SCENARIOS / "app-project-context-files.json"
    alone = reference.run_on_pi(probe, "1.6.0")
    pid = _pids(pool)
    for dirtying in (
        _with_extension(tmp_path, "dirty", DIRTY),
        SCENARIOS / "app-compaction-threshold.json",
        SCENARIOS / "app-extension-events.json",
        SCENARIOS / "agent-steering.json",
    ):
        reference.run_on_pi(dirtying, "1.6.0")
    after = reference.run_on_pi(probe, "1.6.0")
    assert _pids(pool) == pid  # the same Node process ran all of them
    assert after == alone
    reader = """
export default function (pi) {
  pi.on("session_start", async () => {
    const env = process.env;
    throw new Error(`leftOver=${typeof globalThis.leftOver} dirty=${env.PINB_DIRTY} offline=${env.PI_OFFLINE}`);
  });
}
"""
    seen = _ext_errors(reference.run_on_pi(_with_extension(tmp_path, "reader", reader), "1.6.0"))
    assert seen[0] == "leftOver=undefined dirty=undefined offline=1"
    assert _pids(pool) == pid


@pytest.mark.parametrize("version", ["1.6.0", "1.0.3"])
def test_every_corpus_trace_comes_out_of_one_worker_as_recorded(pool: worker.WorkerPool, version: str) -> None:
    if not _installed(version):
        pytest.skip(f"Pi {version} is not installed")
    differ = []
    for path in reference.corpus_scenarios():
        if version in reference.NO_APP_LAYER and reference._scenario_layer(path) != "agent":
            continue
        fresh = reference.run_on_pi(path, version)
        recorded = (reference.trace_folder(version) / f"{path.stem}.jsonl").read_text(encoding="utf-8")
        if reference._compared(fresh) != reference._compared(recorded):
            differ.append(path.stem)
    assert differ == []
    assert len(pool.workers()) == 1


def test_the_meta_line_says_what_confined_the_run(pool: worker.WorkerPool) -> None:
    meta = json.loads(reference.run_on_pi(SCENARIOS / "ch01-word-count.json", "1.6.0").splitlines()[0])
    assert meta["confinement"] == reference.confinement().model_dump()


def _ext_errors(trace: str) -> list[str]:
    return [line["error"] for line in map(json.loads, trace.splitlines()) if line.get("error")]


needs_confinement = pytest.mark.skipif(
    not (_installed("1.6.0") and reference.confinement().complete),
    reason="this machine cannot confine Node (no permission model or no network namespace)",
)


@needs_confinement
def test_extension_code_cannot_write_outside_its_folder(pool: worker.WorkerPool, tmp_path: Path) -> None:
    target = tmp_path / "written-by-extension.txt"
    source = f"""
import {{ writeFileSync }} from "node:fs";
export default function (pi) {{
  pi.on("session_start", async () => {{ writeFileSync({json.dumps(str(target))}, "owned"); }});
}}
"""
    trace = reference.run_on_pi(_with_extension(tmp_path, "writes", source), "1.6.0")
    assert any("Access to this API has been restricted" in error for error in _ext_errors(trace))
    assert not target.exists()


@needs_confinement
def test_extension_code_cannot_start_a_process(pool: worker.WorkerPool, tmp_path: Path) -> None:
    marker = tmp_path / "spawned"
    source = f"""
import {{ spawn, spawnSync }} from "node:child_process";
export default function (pi) {{
  pi.on("session_start", async () => {{
    spawn("/bin/sh", ["-c", "sleep 30; touch {marker}"], {{ detached: true, stdio: "ignore" }}).unref();
  }});
  pi.on("agent_start", async () => {{ spawnSync("touch", [{json.dumps(str(marker))}]); }});
}}
"""
    path = _with_extension(tmp_path, "spawns", source)
    scenario = json.loads(path.read_text(encoding="utf-8"))
    scenario["extensions"][0]["handlers"].append(
        {"event": "agent_start", "label": "sync", "action": {"kind": "record"}}
    )
    path.write_text(json.dumps(scenario), encoding="utf-8")
    trace = reference.run_on_pi(path, "1.6.0")
    errors = _ext_errors(trace)
    assert len(errors) >= 2 and all("Access to this API has been restricted" in error for error in errors)
    assert not marker.exists()
    assert _node_children_except(_pids(pool)) == []


@needs_confinement
def test_extension_code_cannot_reach_the_network(pool: worker.WorkerPool, tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    listener = threading.Thread(target=accept)
    listener.start()
    source = f"""
import {{ connect }} from "node:net";
export default function (pi) {{
  pi.on("session_start", async () => {{
    const code = await new Promise((done) => {{
      const s = connect({port}, "127.0.0.1");
      s.on("connect", () => done("connected"));
      s.on("error", (e) => done(e.code));
    }});
    throw new Error(`socket: ${{code}}`);
  }});
}}
"""
    try:
        trace = reference.run_on_pi(_with_extension(tmp_path, "connects", source), "1.6.0")
    finally:
        listener.join()
        server.close()
    assert accepted == []
    errors = _ext_errors(trace)
    assert errors and all(error.startswith("socket: E") for error in errors), errors


@needs_confinement
def test_extension_code_that_leaves_a_timer_gets_a_fresh_worker(pool: worker.WorkerPool, tmp_path: Path) -> None:
    source = """
export default function (pi) {
  pi.on("session_start", async () => { setInterval(() => {}, 1000); });
}
"""
    reference.run_on_pi(SCENARIOS / "ch01-word-count.json", "1.6.0")
    before = _pids(pool)
    reference.run_on_pi(_with_extension(tmp_path, "lingers", source), "1.6.0")
    assert _pids(pool) == {None}  # the worker that ran it is gone
    reference.run_on_pi(SCENARIOS / "ch01-word-count.json", "1.6.0")
    assert _pids(pool).isdisjoint(before)


@needs_confinement
@pytest.mark.parametrize(
    ("what", "program"),
    [
        ("write", 'import { writeFileSync } from "node:fs";\nwriteFileSync(TARGET, "owned");\n'),
        (
            "spawn",
            'import { spawnSync } from "node:child_process";\nconst r = spawnSync("touch", [TARGET]);\n'
            "if (r.error) throw r.error;\n",
        ),
        ("read", 'import { readFileSync } from "node:fs";\nconsole.log(readFileSync("/etc/passwd", "utf8"));\n'),
        (
            "connect",
            'import { connect } from "node:net";\nconnect(1, "127.0.0.1").on("connect", () => console.log("in"));\n',
        ),
    ],
)
def test_book_code_is_confined_the_same_way(tmp_path: Path, what: str, program: str) -> None:
    target = tmp_path / f"book-{what}"
    run = reference.run_book_example("probe", "1.6.0", program.replace("TARGET", json.dumps(str(target))))
    assert run.exit_code == 1
    markers = ("ENETUNREACH", "ECONNREFUSED") if what == "connect" else ("ERR_ACCESS_DENIED", "Access to this API")
    assert any(marker in line for line in run.stderr_head for marker in markers), run.stderr_head
    assert run.stdout == ""
    assert not target.exists()
    assert run.confinement == reference.confinement()


def test_a_context_file_above_the_run_folder_never_reaches_the_run(
    pool: worker.WorkerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "AGENTS.md").write_text("HOST CONTEXT THAT MUST NOT LEAK\n", encoding="utf-8")
    monkeypatch.setattr(tempfile, "tempdir", str(inner))
    probe = SCENARIOS / "app-project-context-files.json"
    with pytest.raises(ReferenceError_, match=r"AGENTS\.md would reach the real-Pi run"):
        reference.run_on_pi(probe, "1.6.0")
    (tmp_path / "AGENTS.md").unlink()
    trace = reference.run_on_pi(probe, "1.6.0")
    assert "HOST CONTEXT" not in trace
    assert reference._compared(trace) == reference._compared(
        (reference.trace_folder("1.6.0") / "app-project-context-files.jsonl").read_text(encoding="utf-8")
    )


def _node_children_except(keep: set[int | None]) -> list[int]:
    """Node processes whose parent is this test process, other than ``keep``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            name = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        pid = int(stat.parent.name)
        if int(fields[1]) == os.getpid() and name == "node" and pid not in keep and fields[0] != "Z":
            found.append(pid)
    return found


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _running(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_ctrl_c_of_pinb_leaves_no_node_process() -> None:
    pinb = Path(sys.executable).with_name("pinb")
    command = [str(pinb), "scenario", "conform", "--backend", "pi"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while not workers and time.monotonic() < deadline:
            time.sleep(0.1)
            workers = _children(process.pid)
        assert workers, "pinb started no Node worker"
        time.sleep(1)  # in the middle of the corpus
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        assert process.stderr is not None and process.stderr.read().strip().endswith("pinb: interrupted")
        assert not any(_running(pid) for pid in workers)
    finally:
        process.kill()
        process.wait()


def test_traces_are_the_same_whatever_the_number_of_workers(pool: worker.WorkerPool) -> None:
    from concurrent.futures import ThreadPoolExecutor

    paths = [p for p in reference.corpus_scenarios() if p.stem.startswith(("app-guard", "app-steer", "agent-ab"))]
    one = [reference.run_on_pi(path, "1.6.0") for path in paths]
    with ThreadPoolExecutor(max_workers=2) as threads:
        two = list(threads.map(lambda path: reference.run_on_pi(path, "1.6.0"), paths))
    assert two == one
    assert len(pool.workers()) == 2
