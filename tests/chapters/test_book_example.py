"""Chapter 01's example claims: their properties judged on runs of the book's own program (the committed records;
no Node here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters.ch01.props_packages import PROGRAM_PROPERTIES
from pinb.chapters.experiments import ChapterRun
from pinb.chapters.properties import BookExampleExperiment, Witness, WitnessVerdict, judge_witness
from pinb.chapters.registry import claim
from pinb.errors import ReferenceError_
from pinb.kit import claims
from pinb.scenario import reference
from pinb.scenario.reference import BookExampleRun

EXAMPLE = "ch01-agent-core"


def _recorded(version: str) -> BookExampleRun:
    return reference.recorded_book_example(EXAMPLE, version)


def _judge(name: str, run: BookExampleRun) -> WitnessVerdict:
    """The claim's property (`PROGRAM_PROPERTIES[name]`) on one run of the book's program."""
    return judge_witness(PROGRAM_PROPERTIES[name], Witness(f"pi@{run.pi_version}", {}, {}, {"run": run}))


THREE, PINNED, NODE = "example.three-lines", "example.runs-on-pinned-packages", "example.node-runs-typescript"


def test_on_1_0_3_the_program_prints_the_three_lines_and_every_example_claim_holds() -> None:
    run = _recorded("1.0.3")
    three = _judge(THREE, run)
    assert three.status == "OBSERVED" and 'stop: toolUse → tool: word_count {"words":4}' in three.observed
    assert "Pi 1.0.3" in three.premise
    assert _judge(PINNED, run).status == "OBSERVED"
    assert _judge(NODE, run).status == "OBSERVED"


def test_on_1_6_0_the_program_fails_at_import_and_the_output_claims_are_contradicted() -> None:
    run = _recorded("1.6.0")
    for name in (THREE, PINNED):
        verdict = _judge(name, run)
        assert verdict.status == "CONTRADICTED"
        assert verdict.observed.startswith("(exit code 1) SyntaxError")
        assert "does not provide an export named 'Type'" in verdict.observed
    # Node did execute the TypeScript itself: the failure is in linking an import, after parsing.
    node = _judge(NODE, run)
    assert node.status == "OBSERVED" and "Node refused the TypeScript: no" in node.observed


def _variant(**changes: object) -> BookExampleRun:
    return _recorded("1.0.3").model_copy(update=changes)


def test_other_output_a_refused_ts_file_and_a_timeout_are_contradictions() -> None:
    other = _variant(stdout='stop: toolUse\ntool: word_count {"words":5}\nstop: stop\n')
    assert _judge(THREE, other).status == "CONTRADICTED"
    assert _judge(PINNED, _variant(stdout="stop: toolUse\n")).status == "CONTRADICTED"
    refused = _variant(
        exit_code=1,
        stdout="",
        stderr_head=['TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for <example-folder>/x.ts'],
    )
    verdict = _judge(NODE, refused)
    assert verdict.status == "CONTRADICTED" and "Node refused the TypeScript: yes" in verdict.observed
    assert _judge(NODE, _variant(node="v20.19.0")).status == "CONTRADICTED"
    assert _judge(NODE, _variant(command=["node", "--experimental-strip-types", "x.ts"])).status == "CONTRADICTED"
    stopped = _variant(exit_code=None, timed_out=True, stdout="", stderr_head=["stopped after 60 s"])
    assert _judge(THREE, stopped).status == "CONTRADICTED"
    assert _judge(NODE, stopped).status == "CONTRADICTED"
    runtime = _variant(exit_code=1, stdout="", stderr_head=["file:///x.ts:9", "TypeError: boom"])
    assert _judge(NODE, runtime).status == "CONTRADICTED"
    assert "TypeError: boom" in _judge(THREE, runtime).observed


def test_without_a_run_the_program_claims_are_not_exercised() -> None:
    for name in (THREE, PINNED, NODE):
        verdict = judge_witness(PROGRAM_PROPERTIES[name], Witness("pi@9.9.9", {}, {}, {"run": None, "why": "none"}))
        assert verdict.status == "NOT EXERCISED"


def test_the_example_claims_run_the_program_on_pi_and_the_port_on_the_stand_in() -> None:
    for claim_id in ("pi-01.example.three-lines", "pi-01.example.node-runs-typescript"):
        assert isinstance(claim(claim_id).experiment, BookExampleExperiment)
    typescript = claim("pi-01.example.node-runs-typescript")
    assert typescript.kind == "runnable" and typescript.unrun("pi", "1.0.3") is None
    assert typescript.unrun("standin")
    assert claim("pi-01.example.three-lines").unrun("standin") is None


async def test_pi_backend_judges_one_run_of_the_program_and_saves_it(monkeypatch, tmp_path: Path, book: Path) -> None:
    calls: list[tuple[str, str]] = []

    def fake_run(name: str, version: str, program: str) -> BookExampleRun:
        assert program.startswith("import { Agent") and program.rstrip().endswith("fox'?\");")
        calls.append((name, version))
        return _recorded(version)

    monkeypatch.setattr(reference, "run_book_example", fake_run)
    run = ChapterRun("pi-01-chapter", "pi", "1.6.0", artifacts_dir=str(tmp_path))
    before = len(claims.recorded())
    for claim_id in ("pi-01.example.three-lines", "pi-01.example.runs-on-pinned-packages"):
        await run.check(claim_id, show=False)
    await run.check("pi-01.example.node-runs-typescript", show=False)
    recorded = claims.recorded()[before:]
    assert [(o.outcome, o.backend) for o in recorded] == [
        ("contradicted", "pi@1.6.0"),
        ("contradicted", "pi@1.6.0"),
        ("holds", "pi@1.6.0"),
    ]
    assert "export named 'Type'" in recorded[0].evidence and recorded[0].witnesses[0].status == "CONTRADICTED"
    assert calls == [(EXAMPLE, "1.6.0")]
    assert (tmp_path / f"book-example-{EXAMPLE}.json").is_file()
    assert run.observations["pi-01.example.three-lines"].shown["book_example"]["exit_code"] == 1


async def test_a_missing_install_is_an_error_never_a_holds(monkeypatch, book: Path) -> None:
    def missing(name: str, version: str, program: str) -> BookExampleRun:
        raise ReferenceError_(f"Pi {version} is not installed")

    monkeypatch.setattr(reference, "run_book_example", missing)
    before = len(claims.recorded())
    await ChapterRun("pi-01-chapter", "pi", "1.0.3").check("pi-01.example.three-lines", show=False)
    assert [o.outcome for o in claims.recorded()[before:]] == ["error"]


async def test_stand_in_evidence_says_it_is_the_port_not_the_books_program() -> None:
    run = ChapterRun("pi-01-chapter", "standin")
    observation = await run.check("pi-01.example.three-lines", show=False)
    assert observation.status == "OBSERVED"
    assert observation.evidence.startswith("expected printed by the stand-in's port of the program")
    assert "not the book's TypeScript program" in observation.evidence


@pytest.mark.parametrize("version", ["1.0.3", "1.6.0"])
def test_recorded_runs_exist_for_both_versions(version: str) -> None:
    assert _recorded(version).pi_version == version


async def test_without_the_chapter_text_the_program_claims_stay_unrun(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PINB_BOOK", str(tmp_path / "no-book-here"))
    monkeypatch.setattr(reference, "run_book_example", lambda *args: pytest.fail("nothing to run"))
    observation = await ChapterRun("pi-01-chapter", "pi", "1.6.0").check("pi-01.example.three-lines", show=False)
    assert observation.unrun == (
        f"the chapter text is not available at {tmp_path / 'no-book-here'}: set PINB_BOOK; "
        "the book's program is read from it"
    )
