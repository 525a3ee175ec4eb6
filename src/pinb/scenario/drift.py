"""Version drift: the same agent-layer scenarios on two Pi versions, and the first difference of each.

``drift_exit_code``: 0 when every scenario was compared and none differs, 1 when one differs, 2 when a scenario
could not be compared (its trace is missing, or Node failed on it): then nothing can be said about it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pinb.errors import PinbError
from pinb.scenario.corpus import Comparison, load_corpus, read_recorded
from pinb.scenario.model import Scenario
from pinb.scenario.trace import first_difference, loads_jsonl


def _trace(
    path: Path, scenario_id: str, version: str, folder: Path | None, recorded: bool, timeout: dict[str, float]
) -> list[dict[str, Any]] | None:
    if recorded:
        return read_recorded(scenario_id, version, folder)
    from pinb.scenario import reference

    if "timeout" in timeout:
        return loads_jsonl(reference.run_on_pi(path, version, timeout=timeout["timeout"]))
    return loads_jsonl(reference.run_on_pi(path, version))


def drift(
    from_version: str,
    to_version: str,
    *,
    folder: Path | None = None,
    recorded: bool = False,
    jobs: int = 1,
    timeout: float | None = None,
) -> list[Comparison]:
    """Compare every agent-layer corpus scenario on ``from_version`` and ``to_version`` (layer app needs 1.6.0).

    ``jobs`` > 1 runs that many Node processes at once (live runs only); timing-sensitive scenarios are safest
    with the default of one.
    """
    corpus = load_corpus(folder, layer="agent")
    limit = {} if timeout is None else {"timeout": timeout}

    def compare(item: tuple[Path, Scenario]) -> Comparison:
        return _compare(*item, from_version, to_version, folder, recorded, limit)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(compare, corpus))


def _compare(
    path: Path,
    scenario: Scenario,
    from_version: str,
    to_version: str,
    folder: Path | None,
    recorded: bool,
    timeout: dict[str, float],
) -> Comparison:
    try:
        old = _trace(path, scenario.id, from_version, folder, recorded, timeout)
        new = _trace(path, scenario.id, to_version, folder, recorded, timeout)
    except PinbError as exc:
        return Comparison(scenario.id, scenario.layer, "error", str(exc))
    if old is None or new is None:
        missing = from_version if old is None else to_version
        return Comparison(scenario.id, scenario.layer, "unrecorded", f"no recorded trace for pi@{missing}")
    diff = first_difference(old, new, names=(f"pi@{from_version}", f"pi@{to_version}"))
    if diff is None:
        return Comparison(scenario.id, scenario.layer, "same")
    return Comparison(scenario.id, scenario.layer, "differs", diff.render())


def drift_exit_code(results: list[Comparison]) -> int:
    if any(r.status not in ("same", "differs") for r in results):
        return 2
    return 1 if any(r.status == "differs" for r in results) else 0


def render_drift(results: list[Comparison], from_version: str, to_version: str) -> str:
    out = [f"drift pi@{from_version} -> pi@{to_version} on {len(results)} agent-layer scenarios"]
    for r in results:
        if r.status == "differs":
            out.append(f"{r.scenario_id}: {r.status}")
            out += [f"    {line}" for line in r.detail.splitlines()]
    # Scenarios that could not be compared, grouped by reason: one cause is said once, not once per scenario.
    reasons: dict[str, list[str]] = {}
    for r in results:
        if r.status not in ("same", "differs"):
            reasons.setdefault(f"{r.status}: {r.detail}", []).append(r.scenario_id)
    for reason, ids in reasons.items():
        named = ", ".join(ids) if len(ids) <= 3 else f"{', '.join(ids[:3])} and {len(ids) - 3} more"
        out.append(f"not compared ({named}): {reason}")
    same = sum(1 for r in results if r.status == "same")
    differs = sum(1 for r in results if r.status == "differs")
    out.append(
        f"{same} identical, {differs} differ"
        + (f", {len(results) - same - differs} not compared" if len(results) - same - differs else "")
    )
    return "\n".join(out)
