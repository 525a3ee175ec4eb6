"""Generated witnesses: seeded draws from a property's family, each run and judged, and a contradicted one shrunk.

`explore` draws up to `count` distinct witness scenario sets from `Property.family` with hypothesis (no example
database, an explicit seed, so the same claim and count give the same witnesses on every machine; a draw equal to
one already judged is rejected, so it does not take the place of a new one), runs each on a backend
through a synchronous `run(scenario) -> trace`, and judges it (`judge_witness`). The first exercised witness that
disagrees stops the draws: hypothesis then shrinks it, every smaller candidate run and judged the same way, to a
minimal scenario set that still disagrees, which is the finding's counterexample. Shrinking runs at most
`shrink_budget` new candidates (real Pi takes seconds per scenario); the counterexample is then the smallest found
within it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pinb.chapters.properties import (
    Params,
    Property,
    Scenarios,
    Trace,
    Witness,
    WitnessVerdict,
    claim_status,
    judge_witness,
)
from pinb.claims import WitnessStatus
from pinb.files import FileError, user_cache_dir, write_atomic

#: The most witnesses one check may draw (a larger count is a typo, not a plan).
MAX_WITNESSES = 10_000
#: New candidates a shrink may run, per backend family.
SHRINK_BUDGET: dict[str, int] = {"standin": 200, "pi": 20}

Runner = Callable[[Mapping[str, Any]], Trace]
#: Names of the witness a check starts from: the ledger's hand-written one, the notebook reader's edit, or the
#: scenarios given to `pinb claims check`. The evidence names any other witness it quotes.
FIRST_WITNESSES = ("hand", "edited", "given")


def seed_for(claim_id: str, base: int = 0) -> int:
    """A claim's own seed: the same claim draws the same witnesses, two claims draw independent ones."""
    return zlib.crc32(claim_id.encode("utf-8")) ^ base


@dataclass(frozen=True)
class Explored:
    """What the generated witnesses said: each one's verdict (drawn order), and the minimal counterexample."""

    verdicts: tuple[WitnessVerdict, ...] = ()
    witnesses: tuple[Witness, ...] = ()
    """The witnesses judged, with their traces, in the order of `verdicts`."""
    counterexample: Witness | None = None
    """The smallest contradicted witness the shrink found (None when no witness disagreed)."""
    counterexample_verdict: WitnessVerdict | None = None
    shrink_runs: int = 0
    note: str = ""
    """Anything a reader must know about the draws (hypothesis gave up, fewer distinct witnesses than asked)."""

    @property
    def status(self) -> WitnessStatus:
        return claim_status(self.verdicts)


class _Contradicted(Exception):
    """Raised inside the hypothesis test so it stops drawing and shrinks the witness."""


@dataclass
class _State:
    verdicts: list[WitnessVerdict] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    seen: dict[str, tuple[Witness, WitnessVerdict]] = field(default_factory=dict)
    minimal: tuple[Witness, WitnessVerdict] | None = None
    shrink_runs: int = 0


def run_witness(name: str, scenarios: Scenarios, params: Params, run: Runner) -> Witness:
    """The witness with its traces (a scenario that does not validate or cannot run raises)."""
    traces = {scenario_name: run(scenario) for scenario_name, scenario in scenarios.items()}
    return Witness(name, scenarios, traces, params)


def _judged(
    prop: Property, name: str, scenarios: Scenarios, params: Params, run: Runner
) -> tuple[Witness, WitnessVerdict]:
    try:
        witness = run_witness(name, scenarios, params, run)
    except Exception as exc:
        witness = Witness(name, scenarios, {}, params)
        return witness, WitnessVerdict(
            name, "ERROR", "(the witness could not run)", error=f"{type(exc).__name__}: {exc}"
        )
    return witness, judge_witness(prop, witness)


def explore(
    prop: Property,
    params: Params,
    count: int,
    seed: int,
    run: Runner,
    shrink_budget: int = SHRINK_BUDGET["standin"],
    draws_key: str | None = None,
) -> Explored:
    """Draw, run and judge up to `count` generated witnesses; shrink the first contradicted one. With a
    `draws_key` (`draw_key`), the draws come from `planned_draws`; only a contradiction needs hypothesis then."""
    if prop.family is None or count <= 0:
        return Explored()
    planned = planned_draws(prop, params, count, seed, draws_key) if draws_key is not None else None
    if planned is not None:
        verdicts: list[WitnessVerdict] = []
        witnesses: list[Witness] = []
        for number, scenarios in enumerate(planned, start=1):
            judged = _judged(prop, f"gen-{number}", scenarios, params, run)
            if judged[1].status == "CONTRADICTED":
                break  # hypothesis draws the same witnesses again (their runs are kept) and shrinks this one
            witnesses.append(judged[0])
            verdicts.append(judged[1])
        else:
            short = len(planned) < count
            note = f"{len(planned)} distinct witnesses drawn of {count} asked (the family has no more)" if short else ""
            return Explored(tuple(verdicts), tuple(witnesses), note=note)
    from hypothesis import Phase, given, reject
    from hypothesis import seed as fixed_seed

    strategy = prop.family(params)
    state = _State()

    def check(scenarios: Scenarios) -> None:
        key = json.dumps(scenarios, sort_keys=True, default=str)
        shrinking = state.minimal is not None
        known = state.seen.get(key)
        if known is None:
            if shrinking:
                if state.shrink_runs >= shrink_budget:
                    reject()
                state.shrink_runs += 1
            name = "counterexample" if shrinking else f"gen-{len(state.verdicts) + 1}"
            known = _judged(prop, name, scenarios, params, run)
            state.seen[key] = known
            if not shrinking:
                state.witnesses.append(known[0])
                state.verdicts.append(known[1])
        elif not shrinking:
            reject()  # a witness already judged, drawn again: not counted, so `count` distinct ones are judged
        if known[1].status == "CONTRADICTED":
            state.minimal = known
            raise _Contradicted

    explore_test = fixed_seed(seed)(_settings(count, (Phase.generate, Phase.shrink))(given(strategy)(check)))
    note = ""
    try:
        explore_test()
    except _Contradicted:
        pass
    except Exception as exc:  # hypothesis found the family unusable (e.g. it could not draw at all)
        note = f"the draws stopped: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    if not note and len(state.verdicts) < count and state.minimal is None:
        note = f"{len(state.verdicts)} distinct witnesses drawn of {count} asked (the family has no more)"
    minimal = state.minimal
    counterexample, verdict = (None, None) if minimal is None else minimal
    if counterexample is not None and verdict is not None:
        counterexample, verdict = (
            replace(counterexample, name="counterexample"),
            replace(verdict, name="counterexample"),
        )
    return Explored(tuple(state.verdicts), tuple(state.witnesses), counterexample, verdict, state.shrink_runs, note)


@dataclass(frozen=True)
class PropertyResult:
    """A property claim's verdict over its witnesses, as the claim's outcome records it."""

    status: WitnessStatus
    verdicts: tuple[WitnessVerdict, ...]
    """The hand-written (or edited) witness first, then the generated ones in drawn order."""
    explored: Explored
    covers: tuple[str, ...] = ()
    uncovered: tuple[str, ...] = ()

    @property
    def deciding(self) -> WitnessVerdict:
        """The witness whose words the evidence gives: the counterexample of a contradiction, the first witness
        with the claim's status otherwise (the hand-written one when it has it)."""
        if self.status == "CONTRADICTED" and self.explored.counterexample_verdict is not None:
            return self.explored.counterexample_verdict
        return next((v for v in self.verdicts if v.status == self.status), self.verdicts[0])

    @property
    def evidence(self) -> str:
        deciding = self.deciding
        named = "" if deciding.name in FIRST_WITNESSES else f"{deciding.name}: "
        text = named + deciding.evidence
        if len(self.verdicts) > 1:
            exercised = [v for v in self.verdicts if v.status != "NOT EXERCISED"]
            text += f" ({len(exercised)} of {len(self.verdicts)} witnesses exercised the sentence)"
        return text

    def structure(self) -> dict[str, Any]:
        """The structured fields of the claim's outcome (`pinb.claims.ClaimOutcome`)."""
        from pinb.claims import WitnessRecord

        deciding = self.deciding
        witnesses = [*self.verdicts]
        if self.explored.counterexample_verdict is not None:
            witnesses.append(self.explored.counterexample_verdict)
        counterexample = self.explored.counterexample
        return {
            "premise": deciding.premise,
            "expected": deciding.expected,
            "observed": deciding.observed,
            "covers": self.covers,
            "uncovered": self.uncovered,
            "witnesses": tuple(WitnessRecord(**verdict.as_json()) for verdict in witnesses),  # type: ignore[arg-type]
            "counterexample": dict(counterexample.scenarios) if counterexample is not None else None,
        }


def property_result(
    first: WitnessVerdict, explored: Explored, covers: tuple[str, ...] = (), uncovered: tuple[str, ...] = ()
) -> PropertyResult:
    verdicts = (first, *explored.verdicts)
    return PropertyResult(claim_status(verdicts), verdicts, explored, covers, uncovered)


def _settings(count: int, phases: tuple[Any, ...]) -> Any:
    from hypothesis import HealthCheck, Verbosity, settings

    return settings(
        database=None,
        max_examples=count,
        phases=phases,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        derandomize=False,
        print_blob=False,
        report_multiple_bugs=False,
    )


def draw(prop: Property, params: Params, count: int, seed: int) -> list[Scenarios]:
    """The first `count` distinct witness scenario sets `explore` would run with this seed (none is run)."""
    if prop.family is None or count <= 0:
        return []
    from hypothesis import Phase, given, reject
    from hypothesis import seed as fixed_seed

    drawn: dict[str, Scenarios] = {}

    def keep(scenarios: Scenarios) -> None:
        key = json.dumps(scenarios, sort_keys=True, default=str)
        if key in drawn:
            reject()  # as `explore` does, so both see the same sequence of draws
        drawn[key] = scenarios

    fixed_seed(seed)(_settings(count, (Phase.generate,))(given(prop.family(params))(keep)))()
    return list(drawn.values())[:count]


#: Where `planned_draws` keeps drawn witness scenario sets, under the user's cache folder, and how many files it
#: keeps there (the ones used last; a verify after a change to a chapter's code writes one per claim).
DRAWS_DIR = "draws"
DRAWS_KEPT = 2000
_drawn: dict[str, list[Scenarios]] = {}


def draw_key(*inputs: str, params: Params, count: int, seed: int) -> str | None:
    """The key of one family's draws: `inputs` name what the family is made from (the chapter's code and text
    fingerprints, the claim), then its knobs, the count, the seed and hypothesis's version. None when the knobs
    have no JSON form (the book's program run, package facts): such draws are not kept."""
    try:
        knobs = json.dumps(params, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    text = json.dumps([*inputs, knobs, count, seed, _hypothesis_version()], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def _hypothesis_version() -> str:
    from importlib.metadata import version

    return version("hypothesis")


def planned_draws(prop: Property, params: Params, count: int, seed: int, key: str) -> list[Scenarios] | None:
    """The witness scenario sets `explore` would draw (`draw`), kept under `key` in this process and in the
    user's cache folder: a verify on unchanged code, text and knobs runs its witnesses without drawing them again.
    Only the draws are kept; every witness still runs and is judged. None when they cannot be kept: hypothesis
    stopped, or a drawn value would read back from JSON as another (a tuple, say)."""
    kept = _drawn.get(key)
    if kept is not None:
        return kept
    path = user_cache_dir() / DRAWS_DIR / f"{key}.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        os.utime(path)  # used now: the last to go when the folder is trimmed
    except (OSError, ValueError):
        kept = None
    if not (isinstance(kept, list) and len(kept) <= count and all(isinstance(item, dict) for item in kept)):
        try:
            kept = draw(prop, params, count, seed)
        except Exception:  # the family could not be drawn from: `explore` reports why
            return None
        text = json.dumps(kept, ensure_ascii=False)
        if json.loads(text) != kept:
            return None
        with contextlib.suppress(OSError, FileError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
            _trim(path.parent)
    _drawn[key] = kept
    return kept


def _trim(folder: Path) -> None:
    """Keep the `DRAWS_KEPT` files of `folder` used last."""
    try:
        files = sorted(folder.glob("*.json"), key=lambda file: file.stat().st_mtime_ns)
    except OSError:  # another process trimmed it meanwhile
        return
    for old in files[: max(0, len(files) - DRAWS_KEPT)]:
        with contextlib.suppress(OSError):
            old.unlink()


async def assess(
    prop: Property,
    scenarios: Scenarios,
    params: Params,
    run: Callable[[Mapping[str, Any]], Awaitable[Trace]],
    runner: Runner,
    *,
    name: str = "hand",
    witnesses: int = 0,
    seed: int = 0,
    shrink_budget: int = SHRINK_BUDGET["standin"],
    covers: tuple[str, ...] = (),
    uncovered: tuple[str, ...] = (),
    draws_key: str | None = None,
) -> tuple[PropertyResult, dict[str, Trace]]:
    """The property on the first witness (`scenarios`, run with the async `run`), then on `witnesses` generated
    ones (run with the synchronous `runner` in a worker thread): the claim's result, and the first witness's traces.
    The one path the notebook, the in-memory judge and the `pinb claims` commands share."""
    import asyncio

    traces = {scenario_name: await run(scenario) for scenario_name, scenario in scenarios.items()}
    first = judge_witness(prop, Witness(name, scenarios, traces, params))
    explored = Explored()
    if witnesses and prop.family is not None:
        explored = await asyncio.to_thread(explore, prop, params, witnesses, seed, runner, shrink_budget, draws_key)
    return property_result(first, explored, covers, uncovered), traces


__all__ = [
    "DRAWS_DIR",
    "DRAWS_KEPT",
    "MAX_WITNESSES",
    "SHRINK_BUDGET",
    "Explored",
    "PropertyResult",
    "assess",
    "draw_key",
    "explore",
    "planned_draws",
    "property_result",
    "run_witness",
    "seed_for",
]
