"""Version drift: the same agent-layer scenarios on two Pi versions, and the first difference of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pinb.errors import PinbError
from pinb.scenario.corpus import Comparison, load_corpus, read_recorded
from pinb.scenario.trace import first_difference, loads_jsonl


def _trace(
    path: Path, scenario_id: str, version: str, folder: Path | None, recorded: bool
) -> list[dict[str, Any]] | None:
    if recorded:
        return read_recorded(scenario_id, version, folder)
    from pinb.scenario import reference

    return loads_jsonl(reference.run_on_pi(path, version))


def drift(
    from_version: str, to_version: str, *, folder: Path | None = None, recorded: bool = False
) -> list[Comparison]:
    """Compare every agent-layer corpus scenario on ``from_version`` and ``to_version`` (app needs 1.6.0's app)."""
    results: list[Comparison] = []
    for path, scenario in load_corpus(folder, layer="agent"):
        try:
            old = _trace(path, scenario.id, from_version, folder, recorded)
            new = _trace(path, scenario.id, to_version, folder, recorded)
        except PinbError as exc:
            results.append(Comparison(scenario.id, scenario.layer, "error", str(exc)))
            continue
        if old is None or new is None:
            missing = from_version if old is None else to_version
            results.append(Comparison(scenario.id, scenario.layer, "unrecorded", f"no recorded trace for pi@{missing}"))
            continue
        diff = first_difference(old, new, names=(f"pi@{from_version}", f"pi@{to_version}"))
        if diff is None:
            results.append(Comparison(scenario.id, scenario.layer, "same"))
        else:
            results.append(Comparison(scenario.id, scenario.layer, "differs", diff.render()))
    return results


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
