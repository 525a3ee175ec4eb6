"""An author's path end to end, on a sample chapter these tests write themselves (a fixture, not part of the book):
scaffold it, add three claims, build its notebook, verify it on the stand-in and read its report; adding it touches
nothing outside its folder, and adding or editing it leaves the book's chapters current."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pinb.chapters import registry
from pinb.chapters.scaffold import new_chapter
from pinb.errors import UsageError
from pinb.kit.project import Project

REPO = Path(__file__).resolve().parents[2]

#: The sample chapter's text: a test fixture about Pi's behaviour, written for these tests.
SAMPLE_TEXT = """\
Sample chapter (a test fixture of pinb, not part of the book)

A turn

Every turn of the agent is one model request. A turn that asks for tools also runs them before the next request.

Handlers

When two extensions listen to the same event, the one loaded first runs first.

The terminal

The terminal redraws the status line after every turn.
"""

CLAIMS = """\
claims:
- id: pi-90.turn.one-request
  quote: Every turn of the agent is one model request.
  location: A turn ¶1
  experiment: turn.one-request
  layer: agent
- id: pi-90.handlers.load-order
  quote: When two extensions listen to the same event, the one loaded first runs first.
  location: Handlers ¶1
  experiment: handlers.load-order
- id: pi-90.terminal.redraws
  quote: The terminal redraws the status line after every turn.
  location: The terminal ¶1
  kind: reported
  reason: behaviour only Pi's interactive terminal UI shows
"""

EXPERIMENTS = '''\
"""The sample chapter's experiments (a test fixture): each claim as a property."""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Experiment, Params, Premise, Property, PropertyExperiment, Witness


def _word_count(params: Params) -> dict[str, dict[str, Any]]:
    return {"word-count": sc.word_count("agent")}


def _turns_and_requests(w: Witness) -> dict[str, int]:
    lines = w.traces["word-count"]
    return {"turns": len(tq.events(tq.listener(lines), "turn_start")), "model requests": len(tq.requests(lines))}


def _one_request_per_reply(w: Witness) -> dict[str, int]:
    replies = len(w.scenarios["word-count"]["responses"])
    return {"turns": replies, "model requests": replies}


ONE_REQUEST = Property(
    _word_count,
    lambda w: Premise(len(w.scenarios["word-count"]["responses"]) > 0, "a run with scripted replies"),
    _one_request_per_reply,
    _turns_and_requests,
)


def _two_extensions(params: Params) -> dict[str, dict[str, Any]]:
    first = sc.extension("first", sc.handler("agent_start", "first"))
    second = sc.extension("second", sc.handler("agent_start", "second"))
    return {"order": sc.app("sample-load-order", "Hello.", [sc.text("Hi.")], extensions=[first, second])}


LOAD_ORDER = Property(
    _two_extensions,
    lambda w: Premise(len(w.scenarios["order"]["extensions"]) >= 2, "agent_start handlers in two extensions"),
    lambda w: [e["handlers"][0]["label"] for e in w.scenarios["order"]["extensions"]],
    lambda w: [line.get("handler") for line in tq.ext_lines(w.traces["order"], "agent_start")],
    words=lambda order: "agent_start handlers ran in the order " + " → ".join(map(str, order)),
)

EXPERIMENTS: dict[str, Experiment] = {
    "turn.one-request": PropertyExperiment(ONE_REQUEST),
    "handlers.load-order": PropertyExperiment(LOAD_ORDER),
}
'''


def _pinb(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pinb.cli", *argv], env=env, capture_output=True, text=True, check=False, timeout=600
    )


def _git_status() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    """A project (with the repository's notebook builder), a book holding only the sample text, a chapters folder."""
    (tmp_path / "project" / "notebooks").mkdir(parents=True)
    (tmp_path / "project" / "notebooks" / "build.py").write_bytes((REPO / "notebooks" / "build.py").read_bytes())
    (tmp_path / "project" / "pyproject.toml").write_text("[project]\nname = 'sample-book'\n", encoding="utf-8")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch90-sample.txt").write_text(SAMPLE_TEXT, encoding="utf-8")
    (tmp_path / "chapters").mkdir()
    return {name: tmp_path / name for name in ("project", "book", "chapters")}


def _env(workspace: dict[str, Path]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PINB_BOOK=str(workspace["book"]),
        PINB_CHAPTERS=str(workspace["chapters"]),
        XDG_CACHE_HOME=str(workspace["project"] / ".cache"),
    )
    env.pop("PINB_ROOT", None)
    return env


def _scaffold_and_fill(workspace: dict[str, Path], env: dict[str, str]) -> Path:
    project = str(workspace["project"])
    done = _pinb("chapter", "new", "90", "--title", "A sample chapter", "--text", "ch90-sample.txt",
                 "--into", str(workspace["chapters"]), "--root", project, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = workspace["chapters"] / "ch90"
    assert (workspace["project"] / "notebooks" / "90-chapter.ipynb").is_file()
    ledger = folder / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("claims: []\n", CLAIMS), encoding="utf-8")
    (folder / "experiments.py").write_text(EXPERIMENTS, encoding="utf-8")
    return folder


@pytest.mark.kernel
def test_a_sample_chapter_from_scaffold_to_report(workspace: dict[str, Path]) -> None:
    env = _env(workspace)
    before = _git_status()
    folder = _scaffold_and_fill(workspace, env)
    project = str(workspace["project"])
    build = [sys.executable, str(workspace["project"] / "notebooks" / "build.py"), "--chapter", "pi-90-chapter"]
    done = subprocess.run([*build, "--root", project], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    notebook = (workspace["project"] / "notebooks" / "90-chapter.ipynb").read_text(encoding="utf-8")
    assert "card = await cards.check('pi-90.handlers.load-order')" in notebook and "reported, not run" in notebook

    done = _pinb("verify", "pi-90-chapter", "--root", project, "--no-progress", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    status = _pinb("status", "pi-90-chapter", "--root", project, env=env).stdout
    verdicts = {line.split()[1]: line.split()[0] for line in status.splitlines() if " pi-90." in line}
    assert verdicts == {
        "pi-90.turn.one-request": "OBSERVED",
        "pi-90.handlers.load-order": "OBSERVED",
        "pi-90.terminal.redraws": "UNRUN",
    }, status
    report = _pinb("report", "pi-90-chapter", "--root", project, env=env)
    assert report.returncode == 0, report.stderr
    assert "pi-90.handlers.load-order" in report.stdout and "agent_start handlers ran in the order" in report.stdout
    assert "behaviour only Pi's interactive terminal UI shows" in report.stdout
    assert "the chapter text is not available" not in report.stdout

    # Nothing outside the chapter's folder, its notebook and the project's runs was touched.
    assert _git_status() == before
    made = {p.relative_to(workspace["project"]).parts[0] for p in workspace["project"].iterdir()}
    assert made <= {"notebooks", "runs", "pyproject.toml", ".cache"}
    assert sorted(p.name for p in workspace["chapters"].iterdir()) == ["ch90"]
    assert {p.name for p in folder.iterdir()} >= {"__init__.py", "ledger.yaml", "experiments.py", "notebook.py"}


def test_the_empty_ledger_validates_and_mistakes_are_one_line(workspace: dict[str, Path], monkeypatch) -> None:
    monkeypatch.setenv("PINB_BOOK", str(workspace["book"]))
    made = new_chapter("90", "A sample chapter", "ch90-sample.txt", workspace["chapters"])
    assert made.chapter_id == "pi-90-chapter" and made.notebook == "notebooks/90-chapter.ipynb"
    for number, title, text, message in [
        ("90", "A sample chapter", "ch90-sample.txt", "already exists"),
        ("ninety", "x", "ch90-sample.txt", "chapter number"),
        ("91", "x", "../ch90-sample.txt", "not a path"),
        ("91", "x", "missing.txt", "has no missing.txt"),
    ]:
        with pytest.raises(UsageError, match=message):
            new_chapter(number, title, text, workspace["chapters"])


def _fingerprints(project: Project) -> dict[str, tuple[str, str]]:
    return {cid: (c.code_fingerprint, c.text_fingerprint) for cid, c in project.chapters.items()}


def test_adding_or_editing_a_chapter_leaves_the_other_chapters_current(
    workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch, book: Path
) -> None:
    """The book's chapters' inputs are the same with and without the sample chapter, and after editing it; the
    sample's own runs go stale on a real edit of its experiments but not on a formatting-only one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(workspace["project"] / ".cache"))
    registry.refresh()
    before = Project(root=REPO, chapters=registry.chapters())
    inputs = {cid: before.current_inputs(c, "standin") for cid, c in before.chapters.items()}

    monkeypatch.setenv("PINB_CHAPTERS", str(workspace["chapters"]))
    sample_book = workspace["book"]  # the book's texts plus the sample's; the book beside the checkout is not touched
    for path in book.iterdir():
        (sample_book / path.name).write_bytes(path.read_bytes())
    monkeypatch.setenv("PINB_BOOK", str(sample_book))
    new_chapter("90", "A sample chapter", "ch90-sample.txt", workspace["chapters"])
    folder = workspace["chapters"] / "ch90"
    ledger = folder / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("claims: []\n", CLAIMS), encoding="utf-8")
    (folder / "experiments.py").write_text(EXPERIMENTS, encoding="utf-8")
    try:
        registry.refresh()
        added = Project(root=REPO, chapters=registry.chapters())
        assert "pi-90-chapter" in added.chapters
        for cid, expected in inputs.items():
            assert added.current_inputs(added.chapters[cid], "standin") == expected, cid
        sample = added.chapters["pi-90-chapter"]
        assert sample.text_note == ""

        reformatted = EXPERIMENTS.replace("    return {", "    # the scenarios, keyed by name\n    return {")
        (folder / "experiments.py").write_text(reformatted, encoding="utf-8")
        registry.refresh()
        edited = Project(root=REPO, chapters=registry.chapters())
        assert edited.chapters["pi-90-chapter"].code_fingerprint == sample.code_fingerprint

        (folder / "experiments.py").write_text(EXPERIMENTS.replace('"Hello."', '"Hello again."'))
        registry.refresh()
        changed = Project(root=REPO, chapters=registry.chapters())
        assert changed.chapters["pi-90-chapter"].code_fingerprint != sample.code_fingerprint
        for cid, expected in inputs.items():
            assert changed.current_inputs(changed.chapters[cid], "standin") == expected, cid
    finally:
        monkeypatch.delenv("PINB_CHAPTERS")
        registry.refresh()
        sys.modules.pop("pinb.chapters.ch90.experiments", None)
        sys.modules.pop("pinb.chapters.ch90", None)
        import pinb.chapters

        if str(workspace["chapters"]) in pinb.chapters.__path__:
            pinb.chapters.__path__.remove(str(workspace["chapters"]))
