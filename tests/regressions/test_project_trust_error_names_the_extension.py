"""A ``project_trust`` handler that throws: Pi 1.6.0 reports ``Extension "<inline:NAME>" project_trust error: …``
(project-trust.js, with the inline factory's path); the bridge writes the scenario's extension name instead, as it
does for ``extension_error``, so the stand-in's ``error`` line and real Pi's agree. Before, the strict comparison of
``app-project-trust-handler-throws`` differed on that line.
"""

from __future__ import annotations

from pinb.scenario.corpus import corpus_dir, read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

SCENARIO = "app-project-trust-handler-throws"


def test_the_error_line_names_the_scenarios_extension_on_both_backends() -> None:
    recorded = read_recorded(SCENARIO, "1.6.0")
    assert recorded is not None
    lines = run_on_standin(load_scenario(corpus_dir() / f"{SCENARIO}.json"))
    expected = 'Extension "broken" project_trust error: trust store unreadable'
    assert [line["error"] for line in recorded if line["type"] == "project_trust_error"] == [expected]
    assert first_difference(lines, recorded, strict=True) is None
