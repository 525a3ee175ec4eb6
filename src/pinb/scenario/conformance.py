"""Offline conformance: the stand-in against the recorded real-Pi traces, scenario by scenario."""

from __future__ import annotations

from pathlib import Path

from pinb.errors import PinbError
from pinb.scenario.corpus import Comparison, known_differences, load_corpus, read_recorded
from pinb.scenario.model import Scenario
from pinb.scenario.trace import first_difference


def compare_one(
    scenario: Scenario,
    version: str,
    *,
    folder: Path | None = None,
    loose: bool = False,
    strict: bool = False,
    projection: str | None = None,
    timeout: float | None = None,
) -> Comparison:
    """Run ``scenario`` on the stand-in and compare it with its recorded trace on Pi ``version``."""
    from pinb.scenario.standin import run_on_standin

    recorded = read_recorded(scenario.id, version, folder)
    if recorded is None:
        return Comparison(scenario.id, scenario.layer, "unrecorded", f"no recorded trace for pi@{version}")
    try:
        standin = run_on_standin(scenario) if timeout is None else run_on_standin(scenario, timeout=timeout)
    except PinbError as exc:
        return Comparison(scenario.id, scenario.layer, "error", str(exc))
    diff = first_difference(
        standin, recorded, loose=loose, strict=strict, projection=projection, names=("standin", f"pi@{version}")
    )
    if diff is None:
        return Comparison(scenario.id, scenario.layer, "conforms")
    known = known_differences(version, folder)
    status = "known" if scenario.id in known else "differs"
    detail = diff.render() if status == "differs" else f"{known[scenario.id]}\n{diff.render()}"
    return Comparison(scenario.id, scenario.layer, status, detail)


def compare_corpus(
    version: str,
    *,
    folder: Path | None = None,
    loose: bool = False,
    strict: bool = False,
    projection: str | None = None,
    timeout: float | None = None,
) -> list[Comparison]:
    return [
        compare_one(s, version, folder=folder, loose=loose, strict=strict, projection=projection, timeout=timeout)
        for _path, s in load_corpus(folder)
    ]


def render_table(results: list[Comparison], version: str) -> str:
    width = max((len(r.scenario_id) for r in results), default=8)
    out = [f"{'scenario':{width}}  layer  vs pi@{version}"]
    for r in results:
        out.append(f"{r.scenario_id:{width}}  {r.layer:5}  {r.status}")
        if r.status != "conforms" and r.detail:
            out += [f"{'':{width}}         {line}" for line in r.detail.splitlines()]
    counts = {
        s: sum(1 for r in results if r.status == s) for s in ("conforms", "known", "differs", "unrecorded", "error")
    }
    out.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" (of {len(results)})")
    return "\n".join(out)
