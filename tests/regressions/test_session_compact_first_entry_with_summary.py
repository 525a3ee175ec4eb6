"""``session_compact`` carries the first compaction entry whose summary is the new one's text, as Pi 1.6.0 finds it
(``newEntries.find((e) => e.type === "compaction" && e.summary === summary)`` in agent-session.js), not the entry it
just appended. With two compactions of the same text the second event names the first entry; the stand-in used to
name the second. Real Pi 1.6.0's trace of ``app-compact-same-summary-twice`` is the expected value.
"""

from __future__ import annotations

from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIO = "app-compact-same-summary-twice"


def _compact_events(lines: list[dict]) -> list[str]:
    return [line["entryId"] for line in lines if line["source"] == "ext" and line["type"] == "session_compact"]


def test_both_compactions_name_the_first_entry_with_that_summary_on_pi_and_the_stand_in() -> None:
    recorded = read_recorded(SCENARIO, "1.6.0")
    assert recorded is not None
    lines = run_on_standin(load_scenario(corpus_dir() / f"{SCENARIO}.json"))
    tree = next(line for line in recorded if line["source"] == "tree")
    compactions = [entry["id"] for entry in tree["entries"] if entry["type"] == "compaction"]
    assert len(compactions) == 2
    assert _compact_events(recorded) == [compactions[0], compactions[0]]
    assert _compact_events(lines) == _compact_events(recorded)
    assert first_difference(lines, recorded, strict=True) is None
