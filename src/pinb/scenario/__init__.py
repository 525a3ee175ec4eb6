"""pinb.scenario: declarative scenarios (design.md §2), their traces (§3), and the backends that run them.

``load_scenario(path)`` validates a scenario file; ``run_on_standin(scenario)`` (``await arun_on_standin`` in
Jupyter) runs it on pinb's own stand-in of Pi; ``pinb.scenario.reference.run_on_pi`` runs it on the real Pi
packages through Node. ``first_difference(a, b)`` compares two traces by the conformance projection.
"""

from __future__ import annotations

from typing import Any

from pinb.scenario.model import Scenario, load_scenario, parse_scenario
from pinb.scenario.trace import Diff, TraceWriter, conform, dumps_jsonl, first_difference, loads_jsonl, project

__all__ = [
    "Diff",
    "Scenario",
    "TraceWriter",
    "arun_on_standin",
    "conform",
    "dumps_jsonl",
    "first_difference",
    "load_scenario",
    "loads_jsonl",
    "parse_scenario",
    "project",
    "run_on_standin",
]


def __getattr__(name: str) -> Any:
    # The stand-in pulls in the whole agent application; load it only when asked (the CLI starts faster).
    if name in ("run_on_standin", "arun_on_standin"):
        from pinb.scenario import standin

        return getattr(standin, name)
    raise AttributeError(f"module 'pinb.scenario' has no attribute {name!r}")
