"""A failed run erased findings: on a machine without the Pi packages, `pinb verify … --backend pi --force`
recorded a failed run and the chapter's five CONTRADICTED claims became ERROR (a killed kernel or a timeout did
the same); afterwards `pinb verify` without `--force` printed the old OBSERVED run and exited 0 while `status` said
ERROR; and no command removed a run. Now only completed runs give verdicts, a newer failed run is named as the last
attempt, a backend that is not installed is an error before anything is recorded, `verify` prints what `status`
says, and `pinb runs rm` / `pinb runs prune` exist."""

from __future__ import annotations

import json
import sys
import types

import pytest

from kit.conftest import REGISTRY, RecordRun
from pinb.cli import main
from pinb.kit.project import Project


@pytest.fixture(autouse=True)
def _environment(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))


def _pinb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _json_status(capsys: pytest.CaptureFixture[str], chapter: str) -> dict[str, dict]:
    code, out, _ = _pinb(capsys, "status", chapter, "--json")
    assert code == 0
    return {claim["claim_id"]: claim for claim in json.loads(out)["claims"]}


@pytest.mark.parametrize(
    ("status", "failure"),
    [
        ("failed", "cell 4 raised ReferenceError_: Pi 1.6.0 is not installed"),
        ("failed", "the kernel died: Kernel died"),
        ("failed", "the notebook timed out after 1800 s"),
        ("interrupted", "interrupted (Ctrl-C)"),
        ("error", "NoSuchKernel: No such kernel named python3"),
    ],
)
def test_a_failed_attempt_never_replaces_a_finding(
    project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str], status: str, failure: str
) -> None:
    done = record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "PI"), ("kt-02.text.words", "contradicted", "6 words")],
        backend="pi@1.6.0",
    )
    failed = record_run("kt-02-chapter", [], backend="pi@1.6.0", status=status, failure=failure)
    statuses = _json_status(capsys, "kt-02-chapter")
    words = statuses["kt-02.text.words"]
    assert (words["status"], words["run_id"]) == ("CONTRADICTED", done.record.run_id)
    assert words["backends"][0]["last_attempt"] == f"run {failed.record.run_id} {status}: {failure}"
    assert statuses["kt-02.text.upper"]["status"] == "OBSERVED"
    # the README table keeps the finding
    _, out, _ = _pinb(capsys, "status", "--summary")
    assert "`kt-02.text.words` on pi@1.6.0" in out
    # and the report names the failed attempt beside it
    _, out, _ = _pinb(capsys, "report", "kt-02-chapter")
    assert f"last attempt: run {failed.record.run_id} {status}: {failure}" in out
    assert "| **CONTRADICTED** |" in out


def test_pi_not_installed_is_an_error_before_anything_is_recorded(
    project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bridge = types.ModuleType("pinb.scenario.reference")
    bridge.SUPPORTED_VERSIONS = ("1.6.0", "1.0.3")  # type: ignore[attr-defined]
    bridge.is_installed = lambda version: False  # type: ignore[attr-defined]
    bridge.node_version = lambda: "v22.19.0"  # type: ignore[attr-defined]
    bridge.resolved_versions = lambda version: {"@earendil-works/pi-ai": version}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pinb.scenario.reference", bridge)
    import pinb.scenario

    monkeypatch.setattr(pinb.scenario, "reference", bridge, raising=False)
    record_run("kt-02-chapter", [("kt-02.text.words", "contradicted", "6 words")], backend="pi@1.6.0")
    before = sorted(p.name for p in (project.runs_dir / "kt-02-chapter").iterdir())
    code, _, err = _pinb(capsys, "verify", "kt-02-chapter", "--backend", "pi", "--force", "--no-progress")
    assert code == 2
    assert err == (
        "pinb: error: Pi 1.6.0 is not installed here, so nothing was run or recorded: "
        "run `pinb reference install --pi-version 1.6.0` (it needs Node and npm)\n"
    )
    assert sorted(p.name for p in (project.runs_dir / "kt-02-chapter").iterdir()) == before
    assert _json_status(capsys, "kt-02-chapter")["kt-02.text.words"]["status"] == "CONTRADICTED"


def test_runs_rm_and_prune(project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str]) -> None:
    old = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    failed = record_run("kt-01-chapter", [], status="failed", failure="cell 2 raised")
    latest = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    after = record_run("kt-01-chapter", [], status="interrupted", failure="interrupted (Ctrl-C)")
    other = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")])
    leftover = project.runs_dir / "kt-01-chapter" / ".tmp-20261130T000000Z-abcdef-999999999"
    leftover.mkdir()
    (leftover / "executed.ipynb").write_text("{}")

    code, out, _ = _pinb(capsys, "runs", "prune", "--dry-run")
    assert (code, out.splitlines()[-1]) == (0, "4 run folder(s) would remove")
    assert all(path.exists() for path in (old.path, failed.path, after.path, leftover))
    code, out, _ = _pinb(capsys, "runs", "prune")
    assert code == 0
    assert f"removed runs/kt-01-chapter/{old.record.run_id}: superseded by run {latest.record.run_id}" in out
    assert f"removed runs/kt-01-chapter/{failed.record.run_id}: failed: cell 2 raised" in out
    assert f"removed runs/kt-01-chapter/{after.record.run_id}: interrupted: interrupted (Ctrl-C)" in out
    assert "incomplete run (its writer stopped)" in out
    remaining = {run.record.run_id for run in project.store.list().runs}
    assert remaining == {latest.record.run_id, other.record.run_id}
    assert not leftover.exists()

    (project.root / "README.md").write_text("<!-- ledger:start -->\n<!-- ledger:end -->\n", encoding="utf-8")
    code, out, _ = _pinb(capsys, "runs", "rm", other.record.run_id)
    assert (code, out) == (0, f"removed run {other.record.run_id} (kt-02-chapter)\nupdated README.md\n")
    assert "| kt-02-chapter | overall | 2 | 0 | 0 | 0 | 0 | 0 | 0 | 2 |" in (project.root / "README.md").read_text()
    assert {run.record.run_id for run in project.store.list().runs} == {latest.record.run_id}
    code, _, err = _pinb(capsys, "runs", "rm", latest.record.run_id, "20261130T000000Z-000000")
    assert (code, err.count("\n")) == (2, 1) and "no run 20261130T000000Z-000000" in err
    assert latest.path.exists()  # every id is checked before anything is removed
    assert _pinb(capsys, "runs", "rm", "../kt-01-chapter")[0] == 2


def test_verify_after_a_failed_attempt_says_what_status_says(
    project: Project, record_run: RecordRun, capsys: pytest.CaptureFixture[str]
) -> None:
    from pinb.kit.environment import reuse_key

    here = {"environment": reuse_key("standin")}
    done = record_run(
        "kt-02-chapter",
        [("kt-02.text.upper", "holds", "PI"), ("kt-02.text.words", "contradicted", "6 words")],
        inputs_update=here,
    )
    failed = record_run(
        "kt-02-chapter", [], status="failed", failure="the kernel died: Kernel died", inputs_update=here
    )
    code, out, _ = _pinb(capsys, "status", "kt-02-chapter")
    note = (
        f"note: kt-02-chapter on standin: last attempt failed: run {failed.record.run_id} failed: the kernel died: "
        f"Kernel died; the verdicts are from run {done.record.run_id}"
    )
    assert note in out.splitlines()
    assert f"CONTRADICTED  kt-02.text.words  standin  {done.record.run_id}" in out
    # verify re-uses the completed run (same inputs, same environment) and prints the same verdicts: exit 1, a finding
    code, out, _ = _pinb(capsys, "verify", "kt-02-chapter", "--no-progress")
    assert code == 1
    assert f"CONTRADICTED  kt-02.text.words  standin  {done.record.run_id}" in out
    assert f"kt-02-chapter on standin: unchanged since run {done.record.run_id} in this environment" in out
