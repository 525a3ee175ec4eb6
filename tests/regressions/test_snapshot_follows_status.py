"""A `-p` run rewrote the packaged snapshot from itself: the notebooks' recorded verdicts read
"STALE (recorded CONTRADICTED)" while `pinb status` said CONTRADICTED. Now the snapshot is written from the runs
status counts, by status's rules: a run on other parameters, or one that did not complete, never replaces them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit.conftest import project_copy, recorded_template
from pinb.cli import main
from pinb.kit.project import Project
from pinb.kit.verify import VerifyOptions, verify

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = recorded_template(tmp_path_factory.mktemp("template"), ("kt-02-chapter",))
    (root / "src" / "pinb" / "recorded").mkdir(parents=True)  # a checkout of pinb's own: it keeps the snapshot
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return project_copy(template, tmp_path, monkeypatch)


def _snapshot(project: Project) -> dict[str, list[dict]]:
    path = project.root / "src" / "pinb" / "recorded" / "kt-02-chapter.json"
    return json.loads(path.read_text(encoding="utf-8"))["claims"]


def test_a_run_with_other_parameters_leaves_the_snapshot_as_status_says(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    options = VerifyOptions(chapters=("kt-02-chapter",), progress=False, parameters={"pi_version": "1.0.3"})
    (item,) = verify(project, options).results
    assert item.run is not None and item.run.record.inputs.parameters == {"backend": "standin", "pi_version": "1.0.3"}
    assert main(["status", "kt-02-chapter", "--json"]) == 0
    statuses = {claim["claim_id"]: claim for claim in json.loads(capsys.readouterr().out)["claims"]}
    snapshot = _snapshot(project)
    assert statuses["kt-02.text.words"]["status"] == "CONTRADICTED"
    for claim_id, status in statuses.items():
        if status["kind"] == "runnable":
            (row,) = snapshot[claim_id]
            assert (row["status"], row["run_id"]) == (status["status"], status["run_id"])
