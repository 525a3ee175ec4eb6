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
    live: bool = False,
    path: Path | None = None,
) -> Comparison:
    """Run ``scenario`` on the stand-in and compare it with its trace on Pi ``version``: the recorded one, or with
    ``live`` (and the scenario's file ``path``) one run now on the installed Pi."""
    from pinb.scenario.standin import run_on_standin

    if live:
        assert path is not None
        try:
            pi = _run_live(path, version, timeout)
        except PinbError as exc:
            return Comparison(scenario.id, scenario.layer, "error", str(exc))
        if pi is None:
            return Comparison(scenario.id, scenario.layer, "unrecorded", f"layer {scenario.layer} not on pi@{version}")
        recorded: list[dict[str, object]] | None = pi
    else:
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


def _run_live(path: Path, version: str, timeout: float | None) -> list[dict[str, object]] | None:
    from pinb.scenario import reference
    from pinb.scenario.trace import loads_jsonl

    if version in reference.NO_APP_LAYER and reference._scenario_layer(path) != "agent":
        return None
    if timeout is None:
        return loads_jsonl(reference.run_on_pi(path, version))
    return loads_jsonl(reference.run_on_pi(path, version, timeout=timeout))


def compare_corpus(
    version: str,
    *,
    folder: Path | None = None,
    loose: bool = False,
    strict: bool = False,
    projection: str | None = None,
    timeout: float | None = None,
    live: bool = False,
    jobs: int = 1,
) -> list[Comparison]:
    """Every corpus scenario compared (see :func:`compare_one`); ``jobs`` live runs at once, in corpus order."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item: tuple[Path, Scenario]) -> Comparison:
        path, scenario = item
        return compare_one(
            scenario,
            version,
            folder=folder,
            loose=loose,
            strict=strict,
            projection=projection,
            timeout=timeout,
            live=live,
            path=path,
        )

    corpus = load_corpus(folder)
    if not live or jobs == 1:
        return [one(item) for item in corpus]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, corpus))


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
