"""`pinb report CH --format brief`: the research brief's seven sections, pasted into the brief's own template."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pinb.cli import main
from pinb.kit.brief import AUTHOR, BRIEF_HEADINGS, PROPOSED

#: These tests read the chapter texts; a checkout without the book beside it skips them.
pytestmark = pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2].parent / "shared" / "book").is_dir(),
    reason="the book texts (../shared/book) are not next to this checkout",
)


def _template_headings() -> list[str]:
    """The headings section 9 of the chapter's research brief requires, as the brief writes them."""
    from pinb.chapters.book import book_dir

    book = book_dir()
    assert book is not None
    text = (book / "brief-pi-16-chapter.txt").read_text(encoding="utf-8")
    required = text.split("== 9. Required output ==", 1)[1]
    return [m.group(1).strip() for m in re.finditer(r"^## (\d\. [^—]+)—", required, re.MULTILINE)]


@pytest.fixture(scope="module")
def brief() -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "pi-16-chapter", "--format", "brief"]) == 0
    return out.getvalue()


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_exactly_the_brief_s_seven_headings_in_order(brief: str) -> None:
    headings = re.findall(r"^## (.+)$", brief, re.MULTILINE)
    assert headings == list(BRIEF_HEADINGS) == _template_headings()
    assert not re.search(r"^# (?!Research report)", brief, re.MULTILINE)


def test_the_claim_audit_has_one_row_per_claim_with_the_brief_s_columns(brief: str) -> None:
    from pinb.chapters.registry import folders

    audit = _sections(brief)["2. Claim audit"]
    rows = [line for line in audit.splitlines() if line.startswith("| `pi-16.")]
    claims = folders()["pi-16-chapter"].ledger.claims
    assert len(rows) == len(claims)
    header = next(line for line in audit.splitlines() if line.startswith("| Claim"))
    assert header == "| Claim and where it appears | Current evidence | Concern | Priority | Proposed response |"
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row)[1:-1]
        assert len(cells) == 5, row
        assert cells[2].strip() == cells[3].strip() == cells[4].strip() == AUTHOR  # the ledger has no author fields
        evidence = cells[1]
        assert any(
            words in evidence
            for words in (
                "reproduced locally on Pi",
                "reproduced on pinb's model of Pi",
                "reported by a source",
                "UNVERIFIED",
            )
        ), row


def test_provenance_names_both_fingerprints_and_the_generation_date(brief: str) -> None:
    context = _sections(brief)["1. Context and provenance"]
    assert "c987520a8e284d95716f749150902a2c587eaac78eb48950f61f18aa25ce97d0" in context  # the brief's own
    assert "pinb's text fingerprint, of the text read above" in context
    assert "The brief's own fingerprint, as the brief `brief-pi-16-chapter.txt` states it" in context
    assert re.search(r"this report was generated at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", context)
    assert "an excerpt of `brief-pi-16-chapter.txt`" in context and "UNVERIFIED beyond this point" in context


def test_sources_findings_and_proposals_come_from_the_evidence(brief: str) -> None:
    sections = _sections(brief)
    sources = sections["3. Source ledger"]
    assert "`@earendil-works/pi-coding-agent@1.0.3` (published tarball)" in sources
    assert "integrity `sha512-" in sources
    findings = sections["4. Findings"]
    assert [h for h in re.findall(r"^### (.+)$", findings, re.MULTILINE)] == [
        "Supporting",
        "Qualifying",
        "Contradictory",
        "Unresolved",
    ]
    contradictory = findings.split("### Contradictory", 1)[1].split("### Unresolved", 1)[0]
    assert "`pi-16.events.tool-result`" in contradictory and "no field result" in contradictory
    proposal = sections["5. Upgrade proposal"]
    assert "`pi-16.events.tool-result`" in proposal
    assert all(line.endswith(PROPOSED) for line in proposal.splitlines() if line.startswith("- `"))


def test_every_experiment_stub_is_marked_unrun_with_a_pinb_command(brief: str) -> None:
    stubs = [line for line in _sections(brief)["6. Experiment opportunities"].splitlines() if line.startswith("- ")]
    assert stubs
    assert all(line.startswith("- **UNRUN** — ") for line in stubs)
    assert "`pi-16.events.user-bash`" in "\n".join(stubs)  # a reported claim
    assert "on Pi 1.0.3" in "\n".join(stubs)  # a release no run of this chapter covers (no app layer there)
    commands = re.findall(r"Command[^`]*`(pinb [^`]+)`", _sections(brief)["6. Experiment opportunities"])
    assert len(commands) == len(stubs)


def test_the_checklist_has_a_decision_line_per_finding(brief: str) -> None:
    checklist = _sections(brief)["7. Review checklist"]
    lines = [line for line in checklist.splitlines() if line.startswith("- [ ] ")]
    assert lines and all("accept / revise / defer / reject — [author]" in line for line in lines)


def test_md_and_json_stay_and_say_when_they_were_generated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "pi-16-chapter", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.lstrip().startswith("{")
    assert re.search(r'"reported_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"', out)
    assert main(["report", "pi-16-chapter"]) == 0
    md = capsys.readouterr().out
    assert re.search(r"^- Report generated at \d{4}-\d\d-\d\dT[0-9:]{8}Z; evidence as of ", md, re.MULTILINE)
    assert "- pinb code digest (sha256 of the code the verdicts depend on): `" in md
