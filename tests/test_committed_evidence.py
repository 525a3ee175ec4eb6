"""The committed evidence is current and intact: every committed run passes verification (its notebook and
artefacts match their hashes, its record matches the outcomes its notebook emitted), and the committed ledger
(`reports/`, the README's table, the recorded-verdict snapshots the notebooks show) is exactly what those runs give
with today's code and chapter texts. After a change that makes runs STALE, `pinb verify` (and `pinb report --all`)
brings this back; a test that fails here means the committed evidence no longer describes the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.kit import ledger
from pinb.kit.project import load_project

REPO = Path(__file__).resolve().parents[1]
BOOK = (REPO / ".." / "shared" / "book").resolve()


def test_every_committed_run_passes_verification() -> None:
    runs, problems = load_project(REPO).store.check()
    assert runs and problems == []


def test_the_committed_ledger_is_what_the_committed_runs_give() -> None:
    if not BOOK.is_dir():
        pytest.skip("the book texts (../shared/book) are not next to this checkout: quotes and fingerprint unverified")
    stale = [path.relative_to(REPO).as_posix() for path in ledger.stale(load_project(REPO))]
    assert stale == [], f"regenerate with `pinb report --all` (after `pinb verify` if runs are STALE): {stale}"
