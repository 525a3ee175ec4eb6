"""The simulated Colab run (`bench/colab_run.py`): chapter 16's notebook on Python 3.12 with Colab's pinned
Jupyter stack, pinb installed without moving a pin. Minutes of installing: run only when asked,
`PINB_COLAB_RUN=1 pytest -s tests/chapters/test_colab_run.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import REPO

pytestmark = pytest.mark.skipif(os.environ.get("PINB_COLAB_RUN") != "1", reason="set PINB_COLAB_RUN=1 to run it")


def test_chapter_16_runs_on_colabs_stack_with_no_pin_moved() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "colab_run.py")], capture_output=True, text=True, timeout=1800
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["python_version"].startswith("3.12.") and figures["pins_moved"] == {}
    assert figures["execution_error"] == "" and "error" not in figures["outcomes"]
