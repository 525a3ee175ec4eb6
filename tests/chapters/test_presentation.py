"""What a reader sees of a claim: the experiment before it runs, the verdict following an edited scenario, the
recorded verdicts of other backends labelled as recorded, outputs with plain text of their own, Colab badges."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from pinb.chapters import registry, views
from pinb.chapters.card import Cards
from pinb.chapters.display import Shown
from pinb.chapters.experiments import ChapterRun

from .conftest import REPO
from .traces import guard_trace


def _build_module():  # notebooks/build.py is a script, not a package module
    spec = importlib.util.spec_from_file_location("pinb_notebook_build", REPO / "notebooks" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_experiment_is_shown_as_readable_steps_not_json() -> None:
    run = ChapterRun("pi-16-chapter", "standin")
    experiment = run.experiment("pi-16.dispatch.registration-order")
    assert experiment.kind == "scenarios" and list(experiment.scenarios) == ["order"]
    text = experiment.shown().text
    assert "model reply 1: call bash(" in text and "on tool_call" in text
    assert "{" not in text.splitlines()[0]


def test_an_edited_scenario_changes_the_verdict_and_says_it_was_edited(capsys: pytest.CaptureFixture[str]) -> None:
    """Reversing the extensions' load order keeps registration order OBSERVED (the expected order is the edited
    witness's own); leaving one extension removes the premise: NOT EXERCISED. Both say they were edited."""
    run = ChapterRun("pi-16-chapter", "standin")
    experiment = run.experiment("pi-16.dispatch.registration-order")
    as_built = asyncio.run(run.check("pi-16.dispatch.registration-order", experiment, show=False))
    assert as_built.status == "OBSERVED"
    experiment.scenarios["order"]["extensions"].reverse()
    assert experiment.edited
    edited = asyncio.run(run.check("pi-16.dispatch.registration-order", experiment, show=False))
    assert edited.status == "OBSERVED" and edited.evidence.startswith("[edited scenario")
    out = capsys.readouterr().out
    assert "[edited scenario, not the ledger's experiment]" in out and "CONTRADICTED" not in out
    del experiment.scenarios["order"]["extensions"][1:]
    asyncio.run(run.check("pi-16.dispatch.registration-order", experiment, show=False))
    assert "NOT EXERCISED" in capsys.readouterr().out


def test_recorded_verdicts_of_other_backends_are_shown_labelled_as_recorded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    recorded = {
        "pi-16.dispatch.registration-order": [
            {"backend": "standin", "status": "OBSERVED", "run_id": "r-own", "date": "2026-11-30", "evidence": "x"},
            {
                "backend": "pi@1.6.0",
                "status": "CONTRADICTED",
                "run_id": "20261130T000000Z-abcdef",
                "date": "2026-11-30",
                "evidence": "handlers ran b1 first",
                "source": "snapshot",
            },
        ]
    }
    run = ChapterRun("pi-16-chapter", "standin", recorded=recorded)
    asyncio.run(run.check("pi-16.dispatch.registration-order", show=False))
    out = capsys.readouterr().out
    assert "Recorded verdicts of other backends (not run here)" in out
    assert "recorded on pi@1.6.0: CONTRADICTED — run 20261130T000000Z-abcdef (2026-11-30, from the snapshot)" in out
    assert "r-own" not in out  # the live backend's own recording is not shown as another backend's


def test_outputs_carry_their_own_plain_text_and_the_timeline_as_svg() -> None:
    timeline = views.display_timeline(guard_trace(), title="guard")
    bundle = timeline._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg xmlns=") and bundle["text/plain"].startswith("guard (")
    for shown in (timeline, views.display_requests(guard_trace()), Cards(ChapterRun("pi-16-chapter")).summary()):
        assert isinstance(shown, Shown) and "object at" not in shown.text and "IPython" not in shown.text


def test_tables_are_left_aligned_cell_by_cell() -> None:
    html = Cards(ChapterRun("pi-16-chapter")).summary().html or ""
    cells = re.findall(r"<t[dh] style=\"([^\"]*)\"", html)
    assert cells and all("text-align:left" in style for style in cells)
    assert '<code style="white-space:nowrap">pi-16.guard.blocks-before-body</code>' in html


def test_colab_badges_point_at_the_notebooks_when_the_repository_is_set(tmp_path: Path) -> None:
    build = _build_module()
    chapters = list(registry.folders().values())
    block = build.colab_block("https://github.com/someone/pinb", chapters)
    links = re.findall(r"\]\((https://colab\.research\.google\.com/github/someone/pinb/blob/main/([^)]+))\)", block)
    assert len(links) == len(chapters)
    assert all((REPO / path).is_file() for _url, path in links)
    assert "[project.urls]" in build.colab_block(None, chapters)  # until it is set: the one line to add
    project = tmp_path / "pyproject.toml"
    project.write_text('[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/someone/pinb.git"\n')
    assert build.repository_url(tmp_path) == "https://github.com/someone/pinb"
    notebook = build.chapter_notebook(chapters[0], "https://github.com/someone/pinb")
    assert 'pinb_pip_spec = "git+https://github.com/someone/pinb"' in "".join(notebook.cells[3].source)


def test_the_committed_readme_badges_are_what_the_builder_writes() -> None:
    block = re.search(r"<!-- colab:start -->\n(.*?)<!-- colab:end -->", (REPO / "README.md").read_text(), re.S)
    assert block is not None
    build = _build_module()
    assert block.group(1) == build.colab_block(build.repository_url(REPO), list(registry.folders().values()))
