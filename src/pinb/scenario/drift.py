"""Version drift: the same agent-layer scenarios on two Pi versions, and the first difference of each."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pinb.errors import PinbError
from pinb.scenario.corpus import Comparison, load_corpus, read_recorded
from pinb.scenario.model import Scenario
from pinb.scenario.trace import first_difference, loads_jsonl


def _trace(
    path: Path, scenario_id: str, version: str, folder: Path | None, recorded: bool
) -> list[dict[str, Any]] | None:
    if recorded:
        return read_recorded(scenario_id, version, folder)
    from pinb.scenario import reference

    return loads_jsonl(reference.run_on_pi(path, version))


def drift(
    from_version: str,
    to_version: str,
    *,
    folder: Path | None = None,
    recorded: bool = False,
    jobs: int = 1,
) -> list[Comparison]:
    """Compare every agent-layer corpus scenario on ``from_version`` and ``to_version`` (layer app needs 1.6.0).

    ``jobs`` > 1 runs that many Node processes at once (live runs only); timing-sensitive scenarios are safest
    with the default of one.
    """
    corpus = load_corpus(folder, layer="agent")
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda item: _compare(*item, from_version, to_version, folder, recorded), corpus))


def _compare(
    path: Path, scenario: Scenario, from_version: str, to_version: str, folder: Path | None, recorded: bool
) -> Comparison:
    try:
        old = _trace(path, scenario.id, from_version, folder, recorded)
        new = _trace(path, scenario.id, to_version, folder, recorded)
    except PinbError as exc:
        return Comparison(scenario.id, scenario.layer, "error", str(exc))
    if old is None or new is None:
        missing = from_version if old is None else to_version
        return Comparison(scenario.id, scenario.layer, "unrecorded", f"no recorded trace for pi@{missing}")
    diff = first_difference(old, new, names=(f"pi@{from_version}", f"pi@{to_version}"))
    if diff is None:
        return Comparison(scenario.id, scenario.layer, "same")
    return Comparison(scenario.id, scenario.layer, "differs", diff.render())


def render_drift(results: list[Comparison], from_version: str, to_version: str) -> str:
    out = [f"drift pi@{from_version} -> pi@{to_version} on {len(results)} agent-layer scenarios"]
    for r in results:
        if r.status == "same":
            continue
        out.append(f"{r.scenario_id}: {r.status}")
        out += [f"    {line}" for line in r.detail.splitlines()]
    same = sum(1 for r in results if r.status == "same")
    differs = sum(1 for r in results if r.status == "differs")
    out.append(
        f"{same} identical, {differs} differ"
        + (f", {len(results) - same - differs} not compared" if len(results) - same - differs else "")
    )
    return "\n".join(out)
