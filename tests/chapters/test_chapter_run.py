from __future__ import annotations

from pathlib import Path

from pinb.chapters.experiments import ChapterRun
from pinb.kit import claims


async def test_check_records_an_outcome_and_saves_the_trace(tmp_path: Path) -> None:
    run = ChapterRun("pi-01-chapter", "standin", artifacts_dir=str(tmp_path))
    before = len(claims.recorded())
    observation = await run.check("pi-01.example.three-lines", show=False)
    recorded = claims.recorded()[before:]
    assert [(o.claim_id, o.outcome, o.backend) for o in recorded] == [("pi-01.example.three-lines", "holds", "standin")]
    assert observation.status == "OBSERVED" and "stop: toolUse" in observation.evidence
    assert (tmp_path / "ch01-word-count-agent.jsonl").is_file()


async def test_unrun_claims_are_recorded_as_skipped_with_their_reason(capsys) -> None:
    run = ChapterRun("pi-01-chapter", "standin")
    before = len(claims.recorded())
    reported = await run.check("pi-01.fork.refuse-session")
    package = await run.check("pi-01.packages.core-size")
    skipped = claims.recorded()[before:]
    assert [(o.claim_id, o.outcome, o.backend) for o in skipped] == [
        ("pi-01.fork.refuse-session", "skipped", "standin"),
        ("pi-01.packages.core-size", "skipped", "standin"),
    ]
    assert reported.unrun and "fork" in reported.unrun and skipped[0].evidence == reported.unrun
    assert package.unrun and "cannot check" in package.unrun and skipped[1].evidence == package.unrun
    assert "– UNRUN pi-01.fork.refuse-session: reported, not run" in capsys.readouterr().out
    rows = {row["claim"]: row for row in run.summary_rows()}
    assert rows["pi-01.fork.refuse-session"]["status"] == "UNRUN"
    assert rows["pi-01.loop.turn-shape"]["why"] == "not checked in this run"


def test_traces_under_one_scenario_id_are_each_kept_once(tmp_path: Path) -> None:
    from pinb.scenario.trace import dumps_jsonl

    earlier = [{"seq": 1}]
    (tmp_path / "loop.jsonl").write_text(dumps_jsonl(earlier), encoding="utf-8")  # written before this run
    run = ChapterRun("pi-01-chapter", "standin", artifacts_dir=str(tmp_path))
    first, second = [{"seq": 1, "type": "a"}], [{"seq": 1, "type": "b"}]
    for trace in (first, second, first, second, earlier):
        run._save("loop", trace)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["loop-2.jsonl", "loop-3.jsonl", "loop.jsonl"]
    assert (tmp_path / "loop.jsonl").read_text(encoding="utf-8") == dumps_jsonl(earlier)
    assert '"a"' in (tmp_path / "loop-2.jsonl").read_text(encoding="utf-8")
    assert '"b"' in (tmp_path / "loop-3.jsonl").read_text(encoding="utf-8")
