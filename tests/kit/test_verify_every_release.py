"""`pinb verify --backend pi --pi-version all`: every installed release planned into one pool, a release without any
layer a chapter needs reported UNRUN instead of run, the longest runs first (no kernel is started here)."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.cli import main
from pinb.errors import KitError
from pinb.kit import environment
from pinb.kit import verify as verify_module
from pinb.kit.project import Project
from pinb.kit.verify import VerifyOptions, plan, verify
from pinb.scenario import reference

from .conftest import REGISTRY, RecordRun


@pytest.fixture
def pi_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pi 1.0.3, 1.3.0 and 1.6.0 'installed' (no Node is asked)."""
    installed = {"1.0.3", "1.3.0", "1.6.0"}
    monkeypatch.setattr(environment, "pi_installed", lambda version: version in installed)
    monkeypatch.setattr(environment, "pi_environment", lambda version: ("v22.19.0", {"pi": version}, ()))
    monkeypatch.setattr(reference, "is_installed", lambda version: version in installed)


def test_every_release_is_planned_into_one_pool(project: Project, pi_here: None) -> None:
    options = VerifyOptions(
        chapters=("kt-01-chapter", "kt-02-chapter"),
        backend="pi",
        pi_versions=("1.0.3", "1.3.0", "1.6.0"),
        skip={("kt-02-chapter", "pi@1.0.3"): "no app layer"},
    )
    requests, results = plan(project, options)
    planned = sorted((r.chapter, r.backend) for r in requests)
    assert planned == [
        ("kt-01-chapter", "pi@1.0.3"),
        ("kt-01-chapter", "pi@1.3.0"),
        ("kt-01-chapter", "pi@1.6.0"),
        ("kt-02-chapter", "pi@1.3.0"),
        ("kt-02-chapter", "pi@1.6.0"),
    ]
    assert {r.backend: r.environment.pi_packages for r in requests} == {
        f"pi@{v}": {"pi": v} for v in ("1.0.3", "1.3.0", "1.6.0")
    }
    assert all(r.parameters["pi_version"] == r.backend.removeprefix("pi@") for r in requests)
    assert len(results) == 5


def test_a_release_not_installed_is_refused_before_anything_runs(project: Project, pi_here: None) -> None:
    with pytest.raises(KitError, match=r"^Pi 1\.5\.2 is not installed here, so nothing was run or recorded"):
        plan(project, VerifyOptions(chapters=("kt-01-chapter",), backend="pi", pi_versions=("1.3.0", "1.5.2")))


def test_results_are_kept_per_chapter_and_release(
    project: Project, pi_here: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[str, str]] = []

    def fake_run(request: Any, store: Any) -> Any:
        ran.append((request.chapter, request.backend))
        raise KitError(f"fake failure on {request.backend}")

    monkeypatch.setattr(verify_module, "execute_run", fake_run)
    options = VerifyOptions(
        chapters=("kt-01-chapter",), backend="pi", pi_versions=("1.3.0", "1.6.0"), progress=False, refresh_ledger=False
    )
    result = verify(project, options)
    assert sorted(ran) == [("kt-01-chapter", "pi@1.3.0"), ("kt-01-chapter", "pi@1.6.0")]
    assert {(item.backend, item.error) for item in result.results} == {
        ("pi@1.3.0", "fake failure on pi@1.3.0"),
        ("pi@1.6.0", "fake failure on pi@1.6.0"),
    }


def test_the_longest_last_run_goes_first(
    project: Project, pi_here: None, record_run: RecordRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = [("kt-01.math.adds", "holds", "ok"), ("kt-01.math.multiplies", "holds", "ok")]
    for version in ("1.3.0", "1.6.0"):
        record_run("kt-01-chapter", outcomes, backend=f"pi@{version}")
    took = {"pi@1.3.0": 60.0, "pi@1.6.0": 540.0}
    monkeypatch.setattr(verify_module, "_took", lambda run: took[run.record.backend] if run else float("inf"))
    options = VerifyOptions(
        chapters=("kt-01-chapter",), backend="pi", pi_versions=("1.0.3", "1.3.0", "1.6.0"), force=True
    )
    requests, _ = plan(project, options)
    assert [r.backend for r in requests] == ["pi@1.0.3", "pi@1.6.0", "pi@1.3.0"]  # never run (unknown) first


def test_how_long_a_run_took(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "ok")])
    assert verify_module._took(run) == 5.0
    assert verify_module._took(None) == float("inf")


def test_the_command_reports_what_it_leaves_unrun(
    project: Project, pi_here: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))
    seen: list[VerifyOptions] = []

    def fake_verify(project: Project, options: VerifyOptions) -> Any:
        seen.append(options)
        return verify_module.VerifyResult(results=[])

    monkeypatch.setattr(verify_module, "verify", fake_verify)
    main(["verify", "kt-01-chapter", "--backend", "pi", "--pi-version", "all"])
    err = capsys.readouterr().err
    (options,) = seen
    assert options.pi_versions == ("1.0.3", "1.3.0", "1.6.0")
    assert "pinb: pi@1.5.2: UNRUN: not installed (pinb reference install --pi-version 1.5.2)" in err
    # the sample chapter's claims need a session (layer app), which the 1.0.3 package set has not
    assert options.skip.keys() == {("kt-01-chapter", "pi@1.0.3")}
    assert "pinb: kt-01-chapter on pi@1.0.3: UNRUN: the pi@1.0.3 reference set has only pi-agent-core" in err


def test_all_needs_the_pi_backend(project: Project, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("PINB_REGISTRY", REGISTRY)
    monkeypatch.setenv("PINB_ROOT", str(project.root))
    assert main(["verify", "--pi-version", "all"]) == 2
    assert capsys.readouterr().err == "pinb: error: --pi-version all needs --backend pi\n"


def test_each_finding_is_listed_once_whatever_the_releases(project: Project, record_run: RecordRun) -> None:
    from pinb.kit.cli import verify_findings

    outcomes = [("kt-01.math.adds", "contradicted", "2 + 2 = 5"), ("kt-01.math.multiplies", "holds", "6")]
    runs = [record_run("kt-01-chapter", outcomes, backend=f"pi@{v}") for v in ("1.3.0", "1.6.0")]
    chapter = project.chapter("kt-01-chapter")
    result = verify_module.VerifyResult(
        results=[verify_module.ChapterResult(chapter=chapter, run=run, backend=run.record.backend) for run in runs]
    )
    text = verify_findings(project, result)
    said = [line for line in text.splitlines() if "kt-01.math.adds" in line]
    assert [line.count("kt-01.math.adds") for line in said] == [1]  # both releases saw it alike: one line
    assert "kt-01.math.adds on pi@1.3.0, pi@1.6.0 (" in said[0] or "kt-01.math.adds on pi@1.6.0, pi@1.3.0 (" in said[0]
