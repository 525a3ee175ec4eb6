"""The kit's commands on bad input and on a ledger of synthetic runs (no kernel is started here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinb.kit.project import Project

from .conftest import RecordRun


def _runs_untouched(project: Project) -> bool:
    return not project.runs_dir.exists() or not any(project.runs_dir.rglob("*"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["verify", "kt-99-chapter"], "pinb: error: unknown chapter 'kt-99-chapter' (known: kt-01-chapter, "),
        (["verify", "../runs"], "pinb: error: invalid chapter id '../runs'"),
        (["verify", "kt-06-chapter"], "pinb: error: noparams.ipynb has no cell tagged 'parameters'"),
        (["verify", "kt-01-chapter", "-p", "seed=3"], "pinb: error: holds.ipynb has no parameter 'seed'"),
        (["verify", "kt-01-chapter", "-p", "oops"], "pinb: error: parameter 'oops' is not NAME=VALUE"),
        (["verify", "--jobs", "0"], "pinb: error: --jobs must be at least 1"),
        (["verify", "--backend", "pi", "--pi-version", "9.9.9"], "pinb: error: unknown Pi version '9.9.9': supported"),
        (["verify", "--pi-version", "1.0.3"], "pinb: error: --pi-version applies to --backend pi only"),
        (["verify", "kt-01-chapter", "--backend", "pi", "-p", "x=1"], "pinb: error: holds.ipynb has no parameter 'x'"),
        (["verify", "--cell-timeout", "soon"], "pinb: error: argument --cell-timeout: not a number of seconds"),
        (["verify", "--backend", "node"], "pinb: error: argument --backend: invalid choice: 'node'"),
        (["runs", "show", "../../etc"], "pinb: error: invalid run id '../../etc'"),
        (["runs", "show", "20261130T195500Z-3f9a1c"], "pinb: error: no readable run 20261130T195500Z-3f9a1c"),
        (["status", "kt-99-chapter"], "pinb: error: unknown chapter 'kt-99-chapter'"),
        (["report"], "pinb: error: name a chapter (pinb report CHAPTER) or use --all"),
        (["report", "kt-01-chapter", "--check"], "pinb: error: --check applies to --all only"),
        (["report", "kt-01-chapter", "--all"], "pinb: error: --all writes every chapter's reports in both formats"),
        (["report", "--all", "--format", "json"], "pinb: error: --all writes every chapter's reports"),
        (["runs", "rm"], "pinb: error: the following arguments are required: RUN"),
        (["runs", "rm", "../kt-01-chapter"], "pinb: error: invalid run id '../kt-01-chapter'"),
        (["runs", "rm", "20261130T195500Z-3f9a1c"], "pinb: error: no run 20261130T195500Z-3f9a1c in "),
        (["runs", "prune", "--all"], "pinb: error: unrecognized arguments: --all"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(pinb, project: Project, argv: list[str], message: str) -> None:
    code, _, err = pinb(*argv)
    assert code == 2
    assert err.startswith(message)
    assert err.count("\n") == 1
    assert _runs_untouched(project)


def test_a_missing_notebook(pinb, project: Project) -> None:
    (project.root / "notebooks" / "holds.ipynb").unlink()
    code, _, err = pinb("verify", "kt-01-chapter")
    assert (code, err) == (2, "pinb: error: chapter kt-01-chapter: notebook notebooks/holds.ipynb not found\n")


def test_an_unwritable_run_store(pinb, project: Project) -> None:
    project.runs_dir.write_text("a file where the run store should be")
    code, _, err = pinb("verify", "kt-01-chapter")
    assert code == 2
    assert err.startswith("pinb: error: cannot write the run store") and err.count("\n") == 1
    assert project.runs_dir.read_text() == "a file where the run store should be"


def test_status_json_shape(pinb, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    code, out, err = pinb("status", "kt-01-chapter", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "claims": [
            {
                "claim_id": "kt-01.math.adds",
                "chapter": "kt-01-chapter",
                "kind": "runnable",
                "status": "OBSERVED",
                "run_id": run.record.run_id,
                "backend": "standin",
                "reason": "",
                "backends": [
                    {
                        "backend": "standin",
                        "status": "OBSERVED",
                        "run_id": run.record.run_id,
                        "evidence": "2",
                        "reason": "",
                        "current": True,
                    }
                ],
            },
            {
                "claim_id": "kt-01.math.multiplies",
                "chapter": "kt-01-chapter",
                "kind": "runnable",
                "status": "UNRUN",
                "run_id": None,
                "backend": "standin",
                "reason": f"run {run.record.run_id} completed without checking this claim",
                "backends": [
                    {
                        "backend": "standin",
                        "status": "UNRUN",
                        "run_id": run.record.run_id,
                        "evidence": "",
                        "reason": f"run {run.record.run_id} completed without checking this claim",
                        "current": True,
                    }
                ],
            },
            {
                "claim_id": "kt-01.history.fork",
                "chapter": "kt-01-chapter",
                "kind": "reported",
                "status": "UNRUN",
                "run_id": None,
                "backend": None,
                "reason": "reported from a fork's change records; nothing here can run them",
                "backends": [],
            },
        ]
    }


def test_status_per_backend(pinb, record_run: RecordRun) -> None:
    standin = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")])
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "pi | lower")], backend="pi@1.0.3")
    code, out, err = pinb("status", "kt-02-chapter")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1].split()[:4] == ["OBSERVED", "kt-02.text.upper", "standin", standin.record.run_id]
    # the other Pi version's verdict follows, indented, marked as not the current version
    assert lines[2].split() == [
        "CONTRADICTED",
        "↳",
        "(other",
        "Pi",
        "version)",
        "pi@1.0.3",
        old_pi.record.run_id,
        "pi",
        "|",
        "lower",
    ]
    assert lines[2].startswith("  CONTRADICTED")
    code, out, err = pinb("status", "kt-02-chapter", "--backend", "pi@1.0.3", "--json")
    claims = json.loads(out)["claims"]
    assert (code, err) == (0, "")
    assert [(c["claim_id"], c["status"], c["backend"], c["run_id"]) for c in claims] == [
        ("kt-02.text.upper", "CONTRADICTED", "pi@1.0.3", old_pi.record.run_id),
        ("kt-02.text.words", "UNRUN", "pi@1.0.3", None),
    ]
    assert [b["backend"] for b in claims[0]["backends"]] == ["pi@1.0.3"]
    code, out, _ = pinb("status", "kt-02-chapter", "--backend", "pi", "--json")
    assert [c["reason"] for c in json.loads(out)["claims"]] == ["no run on record on pi@1.6.0"] * 2
    code, _, err = pinb("status", "--backend", "node")
    assert (code, err) == (2, "pinb: error: invalid backend 'node': use standin, pi or pi@<version>\n")


def test_status_survives_a_corrupt_store(pinb, project: Project, record_run: RecordRun) -> None:
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    junk = project.runs_dir / "kt-01-chapter" / "20261130T000000Z-abcdef"
    junk.mkdir()
    (junk / "run.json").write_text("[]")
    code, out, err = pinb("status")
    # the table is still printed, but the unreadable record is an error: nothing says it was not the latest run
    assert code == 2
    problem = f"the run record {junk / 'run.json'} is unreadable: corrupt: record: Input should be an object"
    assert err.startswith(f"pinb: error: {problem}\n")
    assert out.splitlines()[1].split()[:2] == ["ERROR", "kt-01.math.adds"]
    assert problem[:60] in out


def test_runs_list_show_check(pinb, project: Project, record_run: RecordRun) -> None:
    first = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    second = record_run(
        "kt-02-chapter", [("kt-02.text.words", "contradicted", "6"), ("kt-02.text.upper", "holds", "x")]
    )
    code, out, _ = pinb("runs", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "CHAPTER", "BACKEND", "STATUS", "CLAIMS", "STARTED"]
    assert lines[1].startswith(f"{first.record.run_id}  kt-01-chapter  standin  completed  1 OBSERVED")
    assert "1 OBSERVED, 1 CONTRADICTED" in lines[2]
    code, out, _ = pinb("runs", "list", "kt-02-chapter")
    assert len(out.splitlines()) == 2
    code, out, _ = pinb("runs", "show", second.record.run_id)
    assert (code, json.loads(out)["run_id"]) == (0, second.record.run_id)
    assert pinb("runs", "check")[:2] == (0, "2 run(s) checked, 0 problem(s)\n")
    target = first.path / "executed.ipynb"
    target.chmod(0o644)
    target.write_text("edited")
    code, out, err = pinb("runs", "check")
    assert (code, out) == (1, "2 run(s) checked, 1 problem(s)\n")
    assert "record does not match its notebook: executed.ipynb was changed" in err


def test_runs_without_an_action_prints_usage(pinb) -> None:
    code, _, err = pinb("runs")
    assert code == 2
    assert err.startswith("usage:")


def test_fingerprint_of_a_folder_is_an_error(pinb, tmp_path: Path) -> None:
    code, _, err = pinb("fingerprint", str(tmp_path))
    assert code == 2 and err.startswith("pinb: error: cannot read")


def test_status_table_shows_another_versions_verdict_under_a_stale_row(pinb, record_run: RecordRun) -> None:
    old_pi = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")], backend="pi@1.0.3")
    code, out, _ = pinb("status", "kt-02-chapter")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split()[:4] == ["STALE", "kt-02.text.upper", "pi@1.0.3", old_pi.record.run_id]
    assert lines[2].split()[:7] == ["OBSERVED", "↳", "(other", "Pi", "version)", "pi@1.0.3", old_pi.record.run_id]
