"""End to end: JupyterLab on localhost, driven in headless Chromium (the system's, never a downloaded browser).

Opens a copy of notebooks/16-chapter.ipynb, runs all cells, and checks that the guard tester widget renders and
answers a command typed into it. Then, for each chapter notebook, Run All as a reader would (1280×800, every cell
rendered): every picture has a viewBox, holds its content and fits its cell; the corpus table is there; each widget
answers after an edit; each claim is a card whose collapsed details open on request; the findings table is in the
first screen; saving the executed notebook leaves its fingerprint (so every recorded run) as it was; and it prints
and asserts the length targets: the document height in screen-heights (document height ÷ 800 px) and the cells.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


NOTEBOOKS = ("01-chapter.ipynb", "16-chapter.ipynb")
#: The length targets: at most this many screen-heights after Run All, and (chapter 16) this many cells.
SCREENS = {"01-chapter.ipynb": 50, "16-chapter.ipynb": 35}
CELLS = {"16-chapter.ipynb": 60}
#: The reader's screen the length figures are measured on.
SCREEN = {"width": 1280, "height": 800}
#: Every cell rendered (JupyterLab otherwise lays out off-screen cells lazily, so the height would be a guess).
ALL_CELLS_RENDERED = '{"windowingMode": "none"}'


@pytest.fixture
def lab(lab_root: str) -> str:
    return lab_root.format(notebook="16-chapter.ipynb")


@pytest.fixture
def lab_root(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server serving temporary copies of the notebooks (the committed ones are never written); the
    address with a `{notebook}` placeholder."""
    pytest.importorskip("jupyterlab")
    for name in NOTEBOOKS:
        shutil.copy(REPO / "notebooks" / name, tmp_path / name)
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(ALL_CELLS_RENDERED, encoding="utf-8")
    port, token = _free_port(), "pinb-e2e"
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
    }
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
            f"--IdentityProvider.token={token}", "--allow-root", f"--ServerApp.root_dir={tmp_path}",
        ],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield f"{base}/lab/tree/{{notebook}}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _run_all(page: Any, address: str, sync_api: Any) -> None:
    """Open the notebook and start Run All."""
    page.goto(address)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-mod-idle", timeout=90_000)
    select_kernel = page.locator(".jp-Dialog button:has-text('Select')")
    # a fresh JupyterLab may ask which kernel to start; the notebook names python3
    with contextlib.suppress(sync_api.TimeoutError):
        select_kernel.first.click(timeout=10_000)
    page.get_by_text("| Idle").first.wait_for(state="attached", timeout=90_000)  # the kernel is connected
    started = (
        "() => [...document.querySelectorAll('.jp-InputPrompt')].some((p) => /\\[(\\*|\\d+)\\]/.test(p.textContent))"
    )
    for _attempt in range(3):  # a Run All given before the kernel is wired up runs nothing: give it again
        page.click("div.lm-MenuBar-itemLabel:text-is('Run')")
        page.locator("li.lm-Menu-item:has-text('Run All Cells')").first.click()
        with contextlib.suppress(sync_api.TimeoutError):
            page.wait_for_function(started, timeout=30_000)
            return
    raise AssertionError("Run All did not start any cell")


def test_guard_tester_renders_and_answers(lab: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            _run_all(page, lab, sync_api)
            # JupyterLab renders off-screen cells lazily: wait for the widget to exist, then bring it into view.
            command_box = page.locator(".jupyter-widgets.widget-text input").first
            command_box.wait_for(state="attached", timeout=180_000)
            command_box.scroll_into_view_if_needed(timeout=30_000)
            # The answer is one ordinary output under the controls, redrawn in place (never a second copy).
            widget_result = page.locator(".jp-OutputArea-output .pinb-guard").first
            widget_result.wait_for(state="attached", timeout=30_000)
            assert widget_result.get_attribute("data-blocked") == "true"  # the book's force push, the parameter

            command_box.fill("git status")
            command_box.press("Enter")
            page.wait_for_function(
                "() => document.querySelector('.jp-OutputArea-output .pinb-guard')"
                "?.getAttribute('data-blocked') === 'false'",
                timeout=30_000,
            )
            command_box.fill("git clean -fdx")
            command_box.press("Enter")
            page.wait_for_function(
                "() => { const el = document.querySelector('.jp-OutputArea-output .pinb-guard');"
                " return el && el.getAttribute('data-blocked') === 'true' && el.textContent.includes('clean'); }",
                timeout=30_000,
            )
            assert page.locator(".pinb-guard").count() == 1  # the first answer did not stay standing under it
        except Exception:
            page.screenshot(path=str(tmp_path / "failure.png"))
            print("screenshot:", tmp_path / "failure.png")
            raise
        finally:
            browser.close()


#: Every picture's boxes against its viewBox, and its rendered width against its output area's.
PICTURES_JS = """() => [...document.querySelectorAll('.jp-OutputArea-output svg.pinb-timeline')].map((svg) => {
  const box = svg.viewBox.baseVal;
  const out = [];
  for (const el of svg.querySelectorAll('rect, text')) {
    const b = el.getBBox();
    if (b.x < box.x - 0.5 || b.y < box.y - 0.5 || b.x + b.width > box.x + box.width + 0.5
        || b.y + b.height > box.y + box.height + 0.5) out.push(el.textContent || el.tagName);
  }
  const area = svg.closest('.jp-OutputArea-output').getBoundingClientRect().width;
  return {viewBox: box.width > 0, outside: out, wider: svg.getBoundingClientRect().width > area + 1};
})"""


#: The five tallest cells, with the start of their text: where a notebook's length goes.
TALLEST_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]
  .map((cell, index) => ({index, height: Math.round(cell.getBoundingClientRect().height),
                          text: (cell.textContent || '').replace(/\\s+/g, ' ').slice(0, 60)}))
  .sort((a, b) => b.height - a.height).slice(0, 5)"""


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_a_reader_runs_all(lab_root: str, notebook: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chapter = f"pi-{notebook[:2]}-chapter"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport=SCREEN)
            _run_all(page, lab_root.format(notebook=notebook), sync_api)
            # the last cell, cards.summary(), prints the chapter's counts once every cell before it has run
            page.get_by_text(f"{chapter} on standin:").first.wait_for(state="attached", timeout=420_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-mod-idle", timeout=60_000)
            height = page.evaluate(
                "() => { const el = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')"
                " || document.querySelector('.jp-NotebookPanel .jp-Notebook'); return el.scrollHeight; }"
            )
            cells = page.locator(".jp-Notebook .jp-Cell").count()
            print(f"\n{notebook}: {cells} cells; document height {height} px = {height / SCREEN['height']:.1f} "
                  f"screen-heights of {SCREEN['height']} px after Run All")  # fmt: skip
            tallest = page.evaluate(TALLEST_JS)
            print("tallest cells:", "; ".join(f"#{c['index']} {c['height']} px {c['text']!r}" for c in tallest))
            screens = height / SCREEN["height"]
            assert cells <= CELLS.get(notebook, cells), f"{notebook}: {cells} cells"
            assert screens <= SCREENS[notebook], f"{notebook}: {screens:.1f} screen-heights"
            _findings_first_and_cards(page, sync_api)
            page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            pictures = page.evaluate(PICTURES_JS)
            assert pictures, "the notebook draws timelines"
            assert [p for p in pictures if not p["viewBox"] or p["outside"] or p["wider"]] == []
            if notebook == "16-chapter.ipynb":
                _widgets_answer_after_an_edit(page, sync_api)
            _saving_keeps_the_fingerprint(page, tmp_path / notebook, REPO / "notebooks" / notebook)
        except Exception:
            page.screenshot(path=str(tmp_path / f"failure-{notebook}.png"), full_page=True)
            print("screenshot:", tmp_path / f"failure-{notebook}.png")
            raise
        finally:
            browser.close()


def _saving_keeps_the_fingerprint(page: Any, saved: Path, committed: Path) -> None:
    """File → Save writes the outputs, the opened details and JupyterLab's metadata, none of which the run
    fingerprint covers: every recorded run stays current (status shows no STALE for it)."""
    from pinb.kit.notebook import has_outputs, notebook_fingerprint, read_notebook

    page.click("div.lm-MenuBar-itemLabel:text-is('File')")
    page.locator("li.lm-Menu-item[data-command='docmanager:save']").first.click()
    deadline = time.monotonic() + 60
    while not has_outputs(read_notebook(saved)):
        assert time.monotonic() < deadline, "File → Save did not write the executed notebook"
        time.sleep(0.5)
    assert notebook_fingerprint(read_notebook(saved)) == notebook_fingerprint(read_notebook(committed))


def _findings_first_and_cards(page: Any, sync_api: Any) -> None:
    """The findings table is in the first screen; each claim is a card with its backends side by side; a card's
    collapsed details, opened, draw its timeline."""
    page.evaluate(
        "() => { const el = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')"
        " || document.querySelector('.jp-NotebookPanel .jp-Notebook'); el.scrollTop = 0; }"
    )
    findings = page.get_by_text("What the recorded runs found:").first
    box = findings.bounding_box()
    assert box is not None and box["y"] + box["height"] <= SCREEN["height"], box
    card = page.locator(".pinb-card").first
    assert card.locator("table.pinb-card-table th").count() >= 2  # the row labels, then a column per backend
    summary = page.locator("details.pinb-card-details:has(svg.pinb-timeline) > summary").first
    summary.scroll_into_view_if_needed(timeout=30_000)
    details = summary.locator("xpath=..")
    assert details.get_attribute("open") is None  # collapsed until asked
    summary.click()
    drawn = details.locator("svg.pinb-timeline").first
    assert drawn.bounding_box() is not None and drawn.bounding_box()["width"] > 100


def _widgets_answer_after_an_edit(page: Any, sync_api: Any) -> None:
    """The corpus table is drawn, and each widget's answer follows an edit of its controls."""
    corpus = page.get_by_text("guard corpus: ").first
    corpus.wait_for(state="attached", timeout=30_000)
    assert page.locator("table.pinb-table code:text-is('git··push·--force')").count() >= 1
    # the guard tester: a harmless command, then the book's own command line stays beside it
    command_box = page.locator(".jupyter-widgets.widget-text input").first
    command_box.scroll_into_view_if_needed(timeout=30_000)
    command_box.fill("git status")
    command_box.press("Enter")
    page.wait_for_function(
        "() => { const el = document.querySelector('.jp-OutputArea-output .pinb-guard');"
        " return el && el.getAttribute('data-blocked') === 'false'"
        ' && el.textContent.includes("book\'s own command"); }',
        timeout=30_000,
    )
    # the timeline explorer: another line highlighted after the slider moves
    explorer = page.locator(".jp-OutputArea-output .pinb-explorer b").first
    before = explorer.text_content()
    handle = page.locator(".widget-slider .noUi-handle, .widget-slider .ui-slider-handle").first  # ipywidgets 8, 7
    handle.scroll_into_view_if_needed(timeout=30_000)
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "(before) => document.querySelector('.jp-OutputArea-output .pinb-explorer b')?.textContent !== before",
        arg=before,
        timeout=30_000,
    )
    # the playground: run the edited scenario, and the verdict of its claim appears, marked as an edit
    page.locator("button:has-text('Run on the stand-in')").first.click()
    page.get_by_text("pi-16.guard.blocks-force-push: OBSERVED on the edited run").first.wait_for(
        state="attached", timeout=60_000
    )
