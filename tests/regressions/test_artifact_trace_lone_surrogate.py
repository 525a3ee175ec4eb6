"""A trace holding a lone surrogate must be saved as an artefact, escaped as JavaScript's JSON.stringify writes it.

Chapter 16's guard cuts its dialog message with `raw.slice(0, 200)`; through an emoji that leaves half of it, and
the notebook's check ended in ERROR ("surrogates not allowed") when its trace was written to the run's artefacts.
"""

from __future__ import annotations

import json
from pathlib import Path

from pinb.chapters.experiments import ChapterRun


def test_a_trace_with_a_lone_surrogate_is_saved_escaped(tmp_path: Path) -> None:
    run = ChapterRun("pi-16-chapter", "standin", None, knobs={}, artifacts_dir=tmp_path)
    line = {"seq": 1, "source": "driver", "type": "ui", "message": '{"command":"git push -f \ud83d'}
    run._save("ch16-guard-ui-long", [line])
    text = (tmp_path / "ch16-guard-ui-long.jsonl").read_text(encoding="utf-8")
    assert "\\ud83d" in text
    assert json.loads(text)["message"].endswith("\ud83d")
