"""A sample chapter whose claims are properties, written into a temporary folder for one test (a fixture, not part
of the book): `pi-91.handlers.load-order` (true of Pi, checked in part), `pi-91.handlers.last-first` (false of Pi
on both backends: a finding) and a chapter-local fault that reverses the load order."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pinb.chapters import registry

HERE = Path(__file__).resolve().parent
CHAPTER = "pi-91-chapter"
LOAD_ORDER = "pi-91.handlers.load-order"
LAST_FIRST = "pi-91.handlers.last-first"

TEXT = """\
Sample chapter (a test fixture of pinb, not part of the book)

Handlers

When several extensions handle the same event, their handlers run in load order, and within one extension in
registration order.

The last extension loaded runs its handlers first.
"""

LEDGER = """\
id: pi-91-chapter
number: "91"
title: A sample chapter of properties
notebook: notebooks/91-chapter.ipynb
text:
  file: ch91-sample.txt
claims:
- id: pi-91.handlers.load-order
  quote: When several extensions handle the same event, their handlers run in load order, and within one extension
    in registration order.
  location: Handlers ¶1
  experiment: handlers.load-order
  covers: [their handlers run in load order, within one extension in registration order]
  uncovered: [When several extensions handle the same event]
  faults: [sample-reversed-load-order]
- id: pi-91.handlers.last-first
  quote: The last extension loaded runs its handlers first.
  location: Handlers ¶2
  experiment: handlers.last-first
  covers: [The last extension loaded runs its handlers first]
  faults: [sample-reversed-load-order]
"""

EXPERIMENTS = (
    (HERE / "sample_property.py").read_text(encoding="utf-8")
    + """

from pinb.chapters.properties import PropertyExperiment

EXPERIMENTS = {
    "handlers.load-order": PropertyExperiment(LOAD_ORDER),
    "handlers.last-first": PropertyExperiment(LAST_FIRST),
}
"""
)

FAULTS = '''\
"""The sample chapter's own fault (the switchboard of pinb.testing.faults)."""

from pinb.testing.faults import fault


@fault("sample-reversed-load-order", "extensions' handlers run in the reverse of load and registration order")
def _reversed_load_order():
    from pinb.app.extensions.runner import ExtensionRunner

    return [(ExtensionRunner, "_snapshot", lambda orig: lambda self, t: list(reversed(orig(self, t))))]
'''


@contextmanager
def sample_chapter(
    root: Path, monkeypatch: pytest.MonkeyPatch, faults: str | None = FAULTS, folder_name: str = "ch91"
) -> Iterator[Path]:
    """Write the sample chapter under `root`, register it for the test, and forget it afterwards."""
    import pinb.chapters

    chapters, book = root / "chapters", root / "book"
    folder = chapters / folder_name
    folder.mkdir(parents=True)
    book.mkdir(parents=True, exist_ok=True)
    (book / "ch91-sample.txt").write_text(TEXT, encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "ledger.yaml").write_text(LEDGER, encoding="utf-8")
    (folder / "experiments.py").write_text(EXPERIMENTS, encoding="utf-8")
    if faults is not None:
        (folder / "faults.py").write_text(faults, encoding="utf-8")
    monkeypatch.setenv("PINB_CHAPTERS", str(chapters))
    monkeypatch.setenv("PINB_BOOK", str(book))
    registry.refresh()
    try:
        yield folder
    finally:
        monkeypatch.delenv("PINB_CHAPTERS")
        for name in [name for name in sys.modules if name.startswith(f"pinb.chapters.{folder_name}")]:
            sys.modules.pop(name)
        if str(chapters) in pinb.chapters.__path__:
            pinb.chapters.__path__.remove(str(chapters))
        registry.refresh()
