"""Killing the Node process of the book's program once (as the OOM killer would) produced a completed, counted run
with a false CONTRADICTED (`pi-01.example.node-runs-typescript`: "exit code -9, printed nothing") that replaced real
findings' evidence. A Node process killed by a signal, out of memory or stopped at its time limit is now a fault:
the claim is ERROR ("the experiment did not complete: killed by SIGKILL"), the error propagates so the run fails,
and a failed run never replaces a finding (the store's rule, tested in test_failed_run_keeps_findings)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chapters.conftest import book  # noqa: F401
from pinb.chapters.experiments import ChapterRun
from pinb.claims import checking
from pinb.errors import ExperimentFault
from pinb.kit import claims
from pinb.scenario import reference
from pinb.scenario.confinement import Confinement
from pinb.scenario.worker import PiFault

ROOT = Path(__file__).resolve().parents[2]
CONFINED = Confinement(node_permissions=True, network_namespace="unshare -n")


@pytest.fixture
def fake_node(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.CompletedProcess[str]]:
    """run_book_example / run_on_pi(warm=False) with Node replaced: the test sets what the process returned."""
    outcome: list[subprocess.CompletedProcess[str]] = []
    monkeypatch.setattr(reference, "is_installed", lambda version: True)
    monkeypatch.setattr(reference, "node_path", lambda: Path("node"))
    monkeypatch.setattr(reference, "node_version", lambda: "v22.19.0")
    monkeypatch.setattr(reference, "confinement", lambda: CONFINED)

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if not outcome:
            raise subprocess.TimeoutExpired(command, 60)
        return outcome[0]

    monkeypatch.setattr(reference.subprocess, "run", fake_run)
    return outcome


@pytest.mark.parametrize(
    ("returncode", "stderr", "says"),
    [
        (-9, "", "killed by SIGKILL"),
        (-15, "", "killed by SIGTERM"),
        (134, "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n", "out of memory"),
    ],
)
def test_a_killed_book_program_is_a_fault(
    fake_node: list[subprocess.CompletedProcess[str]], returncode: int, stderr: str, says: str
) -> None:
    fake_node.append(subprocess.CompletedProcess([], returncode, "", stderr))
    with pytest.raises(PiFault, match=f"the experiment did not complete: {says}"):
        reference.run_book_example("probe", "1.6.0", "console.log(1)\n")


def test_a_book_program_stopped_at_its_time_limit_is_a_fault(fake_node: list[subprocess.CompletedProcess[str]]) -> None:
    with pytest.raises(PiFault, match=r"did not finish within 60 s: the experiment did not complete"):
        reference.run_book_example("probe", "1.6.0", "while (true) {}\n")


def test_a_failing_program_is_still_a_result(fake_node: list[subprocess.CompletedProcess[str]]) -> None:
    fake_node.append(subprocess.CompletedProcess([], 1, "", "SyntaxError: nope\n"))
    run = reference.run_book_example("probe", "1.6.0", "x y\n")
    assert (run.exit_code, run.stderr_head, run.confinement) == (1, ["SyntaxError: nope"], CONFINED)


@pytest.mark.parametrize("returncode", [-9, -6])
def test_a_killed_scenario_runner_is_a_fault(
    fake_node: list[subprocess.CompletedProcess[str]], returncode: int
) -> None:
    fake_node.append(subprocess.CompletedProcess([], returncode, "", ""))
    with pytest.raises(PiFault, match=r"the experiment did not complete: killed by SIG(KILL|ABRT)$"):
        reference.run_on_pi(ROOT / "scenarios" / "ch01-word-count.json", "1.6.0", warm=False)


def test_checking_records_a_fault_as_error_and_lets_it_fail_the_run() -> None:
    before = len(claims.recorded())
    with pytest.raises(PiFault), checking("pi-01.example.node-runs-typescript", backend="pi@1.6.0"):
        raise PiFault("Pi 1.6.0: the book's program x.ts: the experiment did not complete: killed by SIGKILL")
    [outcome] = claims.recorded()[before:]
    assert outcome.outcome == "error"
    assert outcome.evidence.endswith("the experiment did not complete: killed by SIGKILL")
    assert issubclass(PiFault, ExperimentFault)


@pytest.mark.usefixtures("book")
async def test_the_chapter_claim_is_error_and_the_check_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(name: str, version: str, program: str) -> object:
        raise PiFault(f"Pi {version}: the book's program {name}.ts: the experiment did not complete: killed by SIGKILL")

    monkeypatch.setattr(reference, "run_book_example", killed)
    before = len(claims.recorded())
    run = ChapterRun("pi-01-chapter", "pi", "1.6.0")
    with pytest.raises(PiFault):
        await run.check("pi-01.example.node-runs-typescript", show=False)
    assert [(o.outcome, o.evidence.rsplit(": ", 1)[-1]) for o in claims.recorded()[before:]] == [
        ("error", "killed by SIGKILL")
    ]


@pytest.mark.usefixtures("book")
async def test_an_old_record_of_a_killed_run_is_a_fault_too(monkeypatch: pytest.MonkeyPatch) -> None:
    killed = reference.recorded_book_example("ch01-agent-core", "1.0.3").model_copy(
        update={"exit_code": -9, "stdout": "", "stderr_head": []}
    )
    monkeypatch.setattr(reference, "run_book_example", lambda name, version, program: killed)
    before = len(claims.recorded())
    with pytest.raises(PiFault, match="killed by SIGKILL"):
        await ChapterRun("pi-01-chapter", "pi", "1.0.3").check("pi-01.example.node-runs-typescript", show=False)
    assert [o.outcome for o in claims.recorded()[before:]] == ["error"]
