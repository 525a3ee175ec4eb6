"""`pinb verify` proved nothing on a new machine: it re-used every committed run ("unchanged … not re-run")
because a run's reuse key covered the notebook, pinb's code and the text but not the environment, so the reader
never learned whether the evidence reproduces there; and `verify --force` left `reports/` and the README's ledger
table as they were. Now the reuse key includes the environment that can change an outcome, `verify` re-executes
where it differs and ends with one line per chapter saying whether the committed outcomes reproduced, and it
rewrites the ledger files the project keeps."""

from __future__ import annotations

import re

import pytest

from kit.conftest import REGISTRY, RecordRun
from pinb.cli import main
from pinb.kit import environment
from pinb.kit.project import Project

pytestmark = pytest.mark.kernel

OTHER_MACHINE = {"python": "3.12.1", "platform": "Linux-aarch64", "pydantic": "2.99.0"}
README = "# A book\n\n<!-- ledger:start -->\nold table\n<!-- ledger:end -->\n\nThe end.\n"


@pytest.fixture(autouse=True)
def _environment(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))


def _pinb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_from_another_machine_is_re_executed_and_compared(
    project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.root / "reports").mkdir()
    (project.root / "README.md").write_text(README, encoding="utf-8")
    committed = record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "contradicted", "1 + 1 evaluated to 3"), ("kt-01.math.multiplies", "holds", "42")],
        inputs_update={"environment": OTHER_MACHINE},
    )
    # status counts the committed run on any machine, and says where this one differs
    code, out, _ = _pinb(capsys, "status", "kt-01-chapter")
    assert "CONTRADICTED  kt-01.math.adds" in out
    note = f"note: kt-01-chapter on standin: run {committed.record.run_id} was recorded with python 3.12.1 (here "
    assert note in out

    code, out, err = _pinb(capsys, "verify", "kt-01-chapter", "--no-progress")
    assert code == 0, err
    lines = out.splitlines()
    (line,) = [line for line in lines if line.startswith("kt-01-chapter on standin: ")]
    assert line.startswith("kt-01-chapter on standin: run ")
    assert f": 1/2 outcomes reproduce run {committed.record.run_id} (recorded with " in line
    assert "python 3.12.1 → " in line
    assert line.endswith("; differ: kt-01.math.adds contradicted → holds")
    assert lines[-1].startswith("updated reports/kt-01-chapter.md, reports/kt-01-chapter.json, reports/kt-02")
    assert lines[-1].endswith(", README.md")
    readme = (project.root / "README.md").read_text(encoding="utf-8")
    assert "| kt-01-chapter | overall | 2 | 2 | 0 | 0 | 0 | 0 | 0 | 0 |" in readme and readme.endswith("The end.\n")
    assert "OBSERVED" in (project.root / "reports" / "kt-01-chapter.md").read_text(encoding="utf-8")
    assert _pinb(capsys, "report", "--all", "--check")[:2] == (0, "0 ledger file(s) out of date\n")

    # the same machine again: re-used, and said so
    code, out, _ = _pinb(capsys, "verify", "kt-01-chapter", "--no-progress")
    assert code == 0
    assert "kt-01-chapter on standin: unchanged since run " in out and "in this environment; not re-run" in out

    # another machine (other versions of pinb's dependencies, say): re-executed, not re-used
    here = environment.reuse_key("standin")
    monkeypatch.setattr(environment, "reuse_key", lambda backend: here | {"pydantic": "9.9.9"})
    code, out, _ = _pinb(capsys, "verify", "kt-01-chapter", "--no-progress")
    assert code == 0
    assert ": 2/2 outcomes reproduce run " in out and f"pydantic {here['pydantic']} → 9.9.9" in out


def test_report_all_check_names_what_is_out_of_date(
    project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / "README.md").write_text(README, encoding="utf-8")
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    code, out, err = _pinb(capsys, "report", "--all", "--check")
    assert (code, out) == (1, "1 ledger file(s) out of date; run `pinb report --all`\n")
    assert err == "pinb: README.md differs from what the runs give\n"
    code, out, _ = _pinb(capsys, "report", "--all")
    assert code == 0 and out.startswith("updated reports/kt-01-chapter.md, ")
    assert _pinb(capsys, "report", "--all", "--check")[0] == 0
    # a report is about its runs: rendering it again, later or elsewhere, gives the same text, apart from the
    # date it says it was generated (the committed ledger files carry none: their date is their commit's)
    before = (project.root / "reports" / "kt-01-chapter.md").read_text(encoding="utf-8")
    again = _pinb(capsys, "report", "kt-01-chapter")[1]
    assert re.search(r"^- Report generated at \d{4}-\d\d-\d\dT[0-9:]{8}Z; e", again, re.MULTILINE)
    assert re.sub(r"^- Report generated at \S+; e", "- E", again, flags=re.MULTILINE) == before
