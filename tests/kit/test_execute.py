"""Headless execution with real kernels (marked `kernel`; few and small): outcomes read back from the executed
notebook, the cache, failures that still leave their notebook, two verify processes at once, and Ctrl-C."""

from __future__ import annotations

import json
import signal
import sys
import types
from dataclasses import replace

import pytest

from pinb.kit.claims import CLAIM_MIME
from pinb.kit.cli import verify_exit_code, verify_table
from pinb.kit.fingerprint import sha256_file
from pinb.kit.notebook import inspect_notebook
from pinb.kit.project import Project
from pinb.kit.verify import VerifyOptions, verify

from .verify_process import start_verify, wait_until_ready

pytestmark = pytest.mark.kernel


def _options(*chapters: str, **changes) -> VerifyOptions:
    return replace(VerifyOptions(chapters=chapters, progress=False, command="pinb verify (test)"), **changes)


def _claims(result) -> dict[str, str]:
    rows, _ = verify_table(result)
    return {row.claim_id: row.status for row in rows if not isinstance(row, tuple)}


def test_verify_records_what_the_notebook_observed(project: Project) -> None:
    result = verify(project, _options("kt-01-chapter", "kt-02-chapter", "kt-03-chapter", "kt-07-chapter"))
    assert _claims(result) == {
        "kt-01.math.adds": "OBSERVED",
        "kt-01.math.multiplies": "OBSERVED",
        "kt-01.history.fork": "UNRUN",
        "kt-02.text.upper": "OBSERVED",
        "kt-02.text.words": "CONTRADICTED",
        # the notebook raised outside a check: the run is an attempt, never a verdict (its outcomes stay recorded)
        "kt-03.steps.first": "UNRUN",
        "kt-03.steps.guarded": "UNRUN",
        "kt-03.steps.after": "UNRUN",
        "kt-07.trace.written": "OBSERVED",
    }
    holds, finding, raises, traces = (item.run for item in result.results)
    assert holds is not None and finding is not None and raises is not None
    record = holds.record
    assert (record.status, record.failure, record.backend, record.parameters) == (
        "completed",
        None,
        "standin",
        {"backend": "standin"},
    )
    assert record.command == "pinb verify (test)"
    assert record.environment.kernel[0] == sys.executable
    assert record.environment.papermill and record.environment.nbclient and record.environment.ipykernel
    assert record.notebook.sha256 == inspect_notebook(project.root / "notebooks" / "holds.ipynb").fingerprint
    executed = holds.path / "executed.ipynb"
    assert record.artifacts[0].sha256 == sha256_file(executed)
    notebook = json.loads(executed.read_text())
    shown = [
        o["data"][CLAIM_MIME]
        for c in notebook["cells"]
        for o in c.get("outputs", [])
        if CLAIM_MIME in o.get("data", {})
    ]
    assert [claim["claim_id"] for claim in shown] == ["kt-01.math.adds", "kt-01.math.multiplies"]
    assert any("injected-parameters" in c["metadata"].get("tags", []) for c in notebook["cells"])
    papermill_metadata = notebook["metadata"]["papermill"]
    assert papermill_metadata["parameters"] == {"backend": "standin"}
    assert {name: p["default"] for name, p in papermill_metadata["default_parameters"].items()} == {
        "backend": '"standin"',
        "pi_version": '"1.6.0"',
    }
    log = (holds.path / "kernel.log").read_text()
    assert "Passed unknown parameter" not in log and "Unable to parse" not in log
    assert "over TCP" not in log  # Unix sockets: no port another kernel starting at the same moment can take
    assert finding.record.outcome("kt-02.text.words").evidence == "the title has 6 words, not 5"
    assert raises.record.status == "failed"
    assert raises.record.failure == "cell 6 raised RuntimeError: the notebook broke here"
    assert raises.record.outcome("kt-03.steps.guarded").evidence == "KeyError: 'missing'"
    raised = json.loads((raises.path / "executed.ipynb").read_text())["cells"]
    assert "papermill-error-cell-tag" in raised[0]["metadata"]["tags"]  # papermill's marker, as ever
    assert traces.record.parameters == {"backend": "standin", "artifacts_dir": "artifacts"}
    assert [(a.path, a.kind) for a in traces.record.artifacts] == [
        ("executed.ipynb", "notebook"),
        ("kernel.log", "file"),
        ("artifacts/loop.jsonl", "trace"),
    ]
    assert traces.record.artifacts[2].sha256 == sha256_file(traces.path / "artifacts" / "loop.jsonl")
    assert project.store.check()[1] == []
    rows, failures = verify_table(result)
    notes = dict(row for row in rows if isinstance(row, tuple))
    assert notes["kt-01-chapter on standin"] == (
        f"run {holds.record.run_id} recorded 2 outcome(s); no earlier completed run to compare with"
    )
    assert notes["kt-03-chapter on standin"] == (
        f"run {raises.record.run_id} failed: cell 6 raised RuntimeError: the notebook broke here; it recorded 2 "
        "outcome(s) before it stopped (not counted); no completed run to count"
    )
    assert verify_exit_code(result, rows) == 2
    assert failures == [
        f"kt-03-chapter: run {raises.record.run_id} failed: cell 6 raised RuntimeError: the notebook broke here"
    ]

    # nothing changed: the cache answers without a kernel, with the same runs
    again = verify(project, _options("kt-01-chapter", "kt-02-chapter"))
    assert [(item.cached, item.run.record.run_id) for item in again.results] == [
        (True, holds.record.run_id),
        (True, finding.record.run_id),
    ]
    assert verify_exit_code(again, verify_table(again)[0]) == 1
    assert dict(row for row in verify_table(again)[0] if isinstance(row, tuple))["kt-01-chapter on standin"] == (
        f"unchanged since run {holds.record.run_id} in this environment; not re-run (use --force to run it again)"
    )
    # run again: the outcomes reproduce
    forced = verify(project, _options("kt-01-chapter", force=True)).results[0]
    assert forced.reproduction == f"run {forced.run.record.run_id}: 2/2 outcomes reproduce run {holds.record.run_id}"
    assert verify_exit_code(verify(project, _options("kt-01-chapter")), []) == 0
    # a failed run is never a cache hit
    assert verify(project, _options("kt-03-chapter")).results[0].cached is False


def test_timeouts_and_a_dead_kernel_still_leave_their_notebook(project: Project) -> None:
    result = verify(project, _options("kt-04-chapter", "kt-05-chapter", jobs=2, cell_timeout=4.0))
    slow, dies = (item.run for item in result.results)
    assert slow is not None and dies is not None
    assert (slow.record.status, slow.record.failure) == ("failed", "a cell ran longer than 4 s")
    assert (dies.record.status, dies.record.failure) == ("failed", "the kernel died: Kernel died")
    for run, claim in ((slow, "kt-04.time.starts"), (dies, "kt-05.kernel.before")):
        assert run.record.outcome(claim).outcome == "holds"
        assert (run.path / "executed.ipynb").is_file()
    assert slow.record.outcome("kt-04.time.finishes") is None
    cells = json.loads((slow.path / "executed.ipynb").read_text())["cells"]
    statuses = [c["metadata"]["papermill"]["status"] for c in cells if c["cell_type"] == "code"]
    assert statuses[-2:] == ["failed", "pending"]  # the cell that timed out is marked; the next never ran
    deadline = verify(project, _options("kt-04-chapter", force=True, timeout=8.0))
    run = deadline.results[0].run
    assert (run.record.status, run.record.failure) == ("failed", "the notebook timed out after 8 s")
    assert run.record.outcome("kt-04.time.starts").outcome == "holds"


def test_an_unknown_kernel_is_an_error_run(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kernel starts here; the run is still recorded, with the pi backend's parameters and versions."""
    bridge = types.ModuleType("pinb.scenario.reference")
    bridge.node_version = lambda: "v22.19.0"  # type: ignore[attr-defined]
    bridge.resolved_versions = lambda version: {"@earendil-works/pi-ai": version}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pinb.scenario.reference", bridge)
    import pinb.scenario

    monkeypatch.setattr(pinb.scenario, "reference", bridge, raising=False)
    broken = replace(project, kernel_name="no-such-kernel")
    run = verify(broken, _options("kt-01-chapter", backend="pi", pi_version="1.0.3")).results[0].run
    assert run.record.status == "error"
    assert run.record.failure.startswith("NoSuchKernel")
    assert (run.path / "executed.ipynb").is_file()
    assert (run.record.backend, run.record.parameters) == ("pi@1.0.3", {"backend": "pi", "pi_version": "1.0.3"})
    assert (run.record.environment.node, run.record.environment.pi_packages) == (
        "v22.19.0",
        {"@earendil-works/pi-ai": "1.0.3"},
    )


def test_two_verify_processes_at_once_and_ctrl_c(project: Project, tmp_path) -> None:
    """Two `pinb verify` processes share the store; the second is interrupted inside its long cell."""
    ready = tmp_path / "ready"
    first = start_verify(project, "kt-01-chapter")
    second = start_verify(project, "kt-08-chapter", ready=ready)
    wait_until_ready(second, ready)
    second.send_signal(signal.SIGINT)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 130, err
    assert "interrupted" in out
    first_out, first_err = first.communicate(timeout=180)
    assert first.returncode == 0, first_err
    assert "OBSERVED" in first_out

    listing = project.store.list()
    assert listing.problems == []
    by_chapter = {run.record.chapter: run for run in listing.runs}
    assert by_chapter["kt-01-chapter"].record.status == "completed"
    interrupted = by_chapter["kt-08-chapter"]
    assert (interrupted.record.status, interrupted.record.failure) == ("interrupted", "interrupted (Ctrl-C)")
    assert interrupted.record.outcome("kt-08.wait.before").outcome == "holds"
    assert (interrupted.path / "executed.ipynb").is_file()
    assert not [p for p in project.runs_dir.rglob(".tmp-*")]


def test_evidence_names_no_path_of_the_machine(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The executed notebook and the run record are evidence that may be committed: paths in them are relative."""
    monkeypatch.chdir(project.root)
    (run,) = (item.run for item in verify(project, _options("kt-07-chapter")).results)
    assert run is not None and run.record.status == "completed"
    root = str(project.root.resolve())
    assert root not in (run.path / "executed.ipynb").read_text(encoding="utf-8")
    assert root not in (run.path / "run.json").read_text(encoding="utf-8")
    assert any((run.path / "artifacts").iterdir())  # the relative artifacts_dir reached the notebook
