"""End to end: JupyterLab on localhost, driven in headless Chromium (the system's, never a downloaded browser).

Opens a copy of notebooks/16-chapter.ipynb, runs all cells, and checks that the guard tester widget renders and
answers a command typed into it.
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


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server serving a temporary copy of the notebook (the committed one is never written)."""
    pytest.importorskip("jupyterlab")
    shutil.copy(REPO / "notebooks" / "16-chapter.ipynb", tmp_path / "16-chapter.ipynb")
    port, token = _free_port(), "pinb-e2e"
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
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
        yield f"{base}/lab/tree/16-chapter.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_guard_tester_renders_and_answers(lab: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(lab)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-mod-idle", timeout=90_000)
            select_kernel = page.locator(".jp-Dialog button:has-text('Select')")
            # a fresh JupyterLab may ask which kernel to start; the notebook names python3
            with contextlib.suppress(sync_api.TimeoutError):
                select_kernel.first.click(timeout=10_000)
            page.click("div.lm-MenuBar-itemLabel:text-is('Run')")
            page.locator("li.lm-Menu-item:has-text('Run All Cells')").first.click()
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
