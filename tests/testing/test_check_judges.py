"""`pinb claims check-judges`: every runnable claim's judge catches each fault it names (in memory, fast)."""

from __future__ import annotations

import json

import pytest

from pinb.cli import main
from pinb.testing.check_judges import JudgeReport, claim_faults
from pinb.testing.faults import FAULTS


def test_every_judge_catches_every_fault_it_names(report: JudgeReport) -> None:
    assert report.problems() == []
    counts = report.counts()
    assert counts["catches"] == counts["named"] > 0
    assert counts["faults"] == len(FAULTS)


def test_every_claim_the_standin_can_judge_names_a_fault(report: JudgeReport) -> None:
    judged = [c for c in report.claims if c.baseline != "UNRUN"]
    assert judged and all(c.faults for c in judged)
    assert {c.claim_id for c in judged} <= set(claim_faults())


def test_a_weak_judge_is_reported() -> None:
    from pinb.testing.check_judges import ClaimCheck, FaultCheck

    weak = ClaimCheck(
        "pi-16.guard.patterns", "pi-16-chapter", "OBSERVED", "", [FaultCheck("x", "OBSERVED", False, "e")]
    )
    weakened = JudgeReport([weak], all_chapters=False)
    assert weakened.problems() == [
        "pi-16.guard.patterns: still OBSERVED (the baseline) under x (e)",
        "fault x flips none of the claims that name it",
    ]


def test_cli_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "check-judges", "pi-16-chapter", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    entry = data["claims"][0]
    assert {"claim_id", "chapter", "faults"} <= set(entry)
    assert {"fault", "status", "caught"} == set(entry["faults"][0])
    assert all(c["chapter"] == "pi-16-chapter" for c in data["claims"])


def test_cli_unknown_chapter_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "check-judges", "pi-99-chapter"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pinb: error: unknown chapter") and err.count("\n") == 1
