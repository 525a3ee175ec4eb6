"""The stand-in against real Pi 1.6.0, offline: each corpus scenario's stand-in trace must conform to the trace
recorded on the real packages (``scenarios/traces/pi-1.6.0/<id>.jsonl``).

A scenario whose difference is known and justified in ``scenarios/KNOWN_DIFFERENCES.json`` is a strict xfail: it
must still differ (when it starts to conform, the entry has to go). The comparison itself is never loosened: it is
the full one (every field of every line, stream lines included and in order), and the contract's conformance
projection must hold too. A difference seen only by the full comparison may be listed under ``"<version> full"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.scenario.corpus import known_differences, read_recorded, scenario_paths
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

VERSION = "1.6.0"
CORPUS = Path(__file__).resolve().parents[2] / "scenarios"
PATHS = scenario_paths(CORPUS) if CORPUS.is_dir() else []
KNOWN = known_differences(VERSION, CORPUS) if CORPUS.is_dir() else {}


def _param(path: Path) -> object:
    reason = KNOWN.get(path.stem)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", [_param(p) for p in PATHS])
def test_standin_conforms_to_real_pi(path: Path) -> None:
    scenario = load_scenario(path)
    recorded = read_recorded(scenario.id, VERSION, CORPUS)
    if recorded is None:
        pytest.skip(f"no trace of {scenario.id} recorded on pi@{VERSION}")
    diff = first_difference(
        run_on_standin(scenario), recorded, projection="contract", names=("standin", f"pi@{VERSION}")
    )
    assert diff is None, "\n" + diff.render()


STRICT_KNOWN = known_differences(f"{VERSION} full", CORPUS) if CORPUS.is_dir() else {}


def _strict_param(path: Path) -> object:
    reason = KNOWN.get(path.stem) or STRICT_KNOWN.get(path.stem)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", [_strict_param(p) for p in PATHS])
def test_standin_matches_every_traced_field(path: Path) -> None:
    """The full comparison (the default of ``pinb scenario conform``): what the model received, handler inputs and
    results, tool details, the driver's lines and every stream line, in order, must agree too (the meta line
    aside)."""
    scenario = load_scenario(path)
    recorded = read_recorded(scenario.id, VERSION, CORPUS)
    if recorded is None:
        pytest.skip(f"no trace of {scenario.id} recorded on pi@{VERSION}")
    diff = first_difference(run_on_standin(scenario), recorded, projection="full", names=("standin", f"pi@{VERSION}"))
    assert diff is None, "\n" + diff.render()


def test_known_differences_name_corpus_scenarios() -> None:
    assert set(KNOWN) | set(STRICT_KNOWN) <= {p.stem for p in PATHS}


def test_scenario_ids_match_file_names() -> None:
    for path in PATHS:
        assert load_scenario(path).id == path.stem
