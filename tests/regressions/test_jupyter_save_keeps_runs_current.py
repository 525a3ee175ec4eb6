"""Regression: saving a chapter notebook from JupyterLab (autosave after Run All) made every claim STALE, because a
run recorded the notebook file's bytes; it now records the fingerprint of its cells, which a session leaves alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters import registry
from pinb.kit.notebook import inspect_notebook
from pinb.testing.jupyter import save_as_jupyter

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("chapter", list(registry.folders()))
def test_a_saved_session_keeps_the_committed_fingerprint(chapter: str, tmp_path: Path) -> None:
    committed = REPO / registry.folder(chapter).ledger.notebook
    saved = tmp_path / committed.name
    saved.write_bytes(committed.read_bytes())
    save_as_jupyter(saved)
    assert saved.read_bytes() != committed.read_bytes()
    assert inspect_notebook(saved).has_outputs and not inspect_notebook(committed).has_outputs
    assert inspect_notebook(saved).fingerprint == inspect_notebook(committed).fingerprint
