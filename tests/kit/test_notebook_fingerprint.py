"""A notebook's fingerprint covers what running it does not change, so reading it in Jupyter spoils no run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pinb.errors import KitError
from pinb.kit import environment
from pinb.kit.notebook import inspect_notebook
from pinb.kit.project import Project
from pinb.kit.status import chapter_statuses
from pinb.kit.verify import VerifyOptions, plan
from pinb.testing.jupyter import save_as_jupyter

from .conftest import RecordRun


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _save(path: Path, nb: dict[str, Any]) -> None:
    path.write_text(json.dumps(nb, indent=2), encoding="utf-8")


def _notebook(project: Project) -> Path:
    return project.root / "notebooks" / "finding.ipynb"


def test_a_jupyter_session_leaves_the_fingerprint_and_an_edit_changes_it(project: Project) -> None:
    path = _notebook(project)
    before = inspect_notebook(path)
    assert before.has_outputs is False
    save_as_jupyter(path)
    after = inspect_notebook(path)
    assert (after.fingerprint, after.has_outputs) == (before.fingerprint, True)
    nb = _load(path)
    nb["cells"][-1]["source"].append("\n# an edit")
    _save(path, nb)
    assert inspect_notebook(path).fingerprint != before.fingerprint


def test_the_parameters_defaults_and_tags_count(project: Project) -> None:
    path = _notebook(project)
    before = inspect_notebook(path).fingerprint
    nb = _load(path)
    tagged = next(cell for cell in nb["cells"] if "parameters" in cell["metadata"].get("tags", []))
    original = "".join(tagged["source"])
    tagged["source"] = original.replace('"standin"', '"pi"')
    assert tagged["source"] != original
    _save(path, nb)
    assert inspect_notebook(path).fingerprint != before
    tagged["source"], tagged["metadata"]["tags"] = original, []
    nb["cells"].append({"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": original, "outputs": []})
    _save(path, nb)
    assert inspect_notebook(path).fingerprint != before


def test_saving_a_session_leaves_every_run_current(project: Project, record_run: RecordRun) -> None:
    outcomes = [("kt-02.text.upper", "contradicted", "HELLO"), ("kt-02.text.words", "holds", "5")]
    record_run("kt-02-chapter", outcomes, inputs_update={"environment": environment.reuse_key("standin")})
    chapter = project.chapter("kt-02-chapter")

    def statuses() -> list[str]:
        return [s.status for s in chapter_statuses(project, chapter, project.store.list().runs, None)]

    assert statuses() == ["CONTRADICTED", "OBSERVED"]
    save_as_jupyter(_notebook(project))
    assert statuses() == ["CONTRADICTED", "OBSERVED"]
    options = VerifyOptions(chapters=("kt-02-chapter",), progress=False)
    todo, results = plan(project, options)
    assert (todo, results[0].cached) == ([], True)
    assert len(plan(project, replace(options, force=True))[0]) == 1  # unchanged sources: it may run again


def test_verify_refuses_an_edited_session(project: Project, record_run: RecordRun) -> None:
    record_run("kt-02-chapter", [("kt-02.text.upper", "contradicted", "HELLO"), ("kt-02.text.words", "holds", "5")])
    path = _notebook(project)
    save_as_jupyter(path)
    nb = _load(path)
    nb["cells"][-1]["source"].append("\n# an edited scenario")
    _save(path, nb)
    options = VerifyOptions(chapters=("kt-02-chapter",), progress=False)
    with pytest.raises(KitError) as caught:
        plan(project, options)
    assert str(caught.value) == (
        "notebooks/finding.ipynb was saved with outputs and its cells differ from every recorded run's (edited in "
        "Jupyter?), so it is not recorded: restore it with `git checkout -- notebooks/finding.ipynb`, or clear its "
        "outputs to record the edit"
    )
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    _save(path, nb)
    todo, _ = plan(project, options)  # the same edit without outputs is a developer's change: it runs
    assert len(todo) == 1
    runs = project.store.list().runs
    assert {s.status for s in chapter_statuses(project, project.chapter("kt-02-chapter"), runs, None)} == {"STALE"}
