"""How a claim is checked: its experiment run on the chosen backend, its property judged, the outcome recorded.

Every runnable claim's experiment is a property (`pinb.chapters.properties`: a premise, an expected and an
observed value over any witness, checked on the hand-written witness or the reader's edit and on seeded generated
ones): a `PropertyExperiment`, or a `BookExampleExperiment` for a claim about a program the chapter prints (on the
pi backend its witness is the program's run by Node, on the stand-in the property of the stand-in's port). Each
kind carries its own `on / unrun / view / observe / edit_judge`: this module asks the experiment, never sorts it.
`ChapterRun` is what a notebook holds: `observe(claim)` checks one claim on its backend without recording (the
one path the notebook, the in-memory judge, the counterfactual and the `pinb claims` commands share), `check`
records the outcome through `pinb.claims` (UNRUN with the reason where the backend cannot check it), and the run
keeps the traces for the pictures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from pinb.backends import PI_MODELLED_VERSION, Backend
from pinb.chapters import views
from pinb.chapters.backends import kept_text, run_scenario
from pinb.chapters.display import Shown, code, table_html
from pinb.chapters.experiment_view import ExperimentView
from pinb.chapters.properties import BookExampleExperiment, Params, Property, PropertyExperiment, Trace
from pinb.chapters.registry import chapter as chapter_of
from pinb.chapters.registry import claim as claim_by_id
from pinb.chapters.registry import claims as claims_of
from pinb.chapters.registry import folder as chapter_folder
from pinb.chapters.witnesses import MAX_WITNESSES, SHRINK_BUDGET, PropertyResult, draw_key, seed_for
from pinb.claims import OUTCOME_OF, Claim, verdict_label
from pinb.errors import UsageError
from pinb.scenario.trace import dumps_jsonl

EDITED = "[edited scenario, not the ledger's experiment] "


@dataclass
class Observation:
    """What one check of one claim on one backend saw: its traces, its verdict over its witnesses, or why it
    stayed UNRUN, or what raised."""

    claim_id: str
    backend: str
    traces: dict[str, Trace] = field(default_factory=dict)
    shown: dict[str, Any] = field(default_factory=dict)
    unrun: str | None = None
    """Why nothing was recorded for this claim on this backend (the claim stays UNRUN there)."""
    result: PropertyResult | None = None
    """The claim's verdict over its witnesses (their verdicts, the counterexample)."""
    evidence: str = ""
    """What the check observed, in words (the edited-scenario label included)."""
    error: Exception | None = None
    """What raised while the experiment ran (the check is then an ERROR)."""
    picture: str | None = None
    """Which scenario's trace the notebook draws (default: the first)."""

    @property
    def status(self) -> str:
        """OBSERVED, CONTRADICTED, NOT EXERCISED, ERROR or UNRUN."""
        if self.unrun is not None:
            return "UNRUN"
        if self.error is not None or self.result is None:
            return "ERROR"
        return self.result.status

    def trace(self, name: str | None = None) -> Trace:
        if not self.traces:
            return []
        return self.traces[name] if name is not None else next(iter(self.traces.values()))


def check_witness_count(value: Any) -> int:
    """A count of generated witnesses: a whole number from 0 to `MAX_WITNESSES` (else a one-line UsageError)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WITNESSES:
        raise UsageError(f"witnesses must be a whole number from 0 to {MAX_WITNESSES}, not {value!r}")
    return value


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ChapterRun:
    """One notebook's session: a backend, the knobs, the traces it ran, and the outcomes it recorded."""

    def __init__(
        self,
        chapter_id: str,
        backend: str = "standin",
        pi_version: str | None = PI_MODELLED_VERSION,
        knobs: Params | None = None,
        artifacts_dir: str | None = None,
        recorded: Mapping[str, list[Mapping[str, Any]]] | None = None,
        witnesses: int = 0,
        seed: int = 0,
        *,
        notebook: bool = True,
    ) -> None:
        """`notebook=False`: a run that only observes (the in-memory judge, the `pinb claims` commands); it does
        not make its backend the process's recorded one (`pinb.claims.use_backend`)."""
        from pinb.claims import use_backend

        self.chapter_id = chapter_id
        self.backend = backend
        self.pi_version = pi_version if backend == "pi" else None
        self.label = Backend(backend, self.pi_version).label  # type: ignore[arg-type]
        if notebook:
            use_backend(self.label)
        self.knobs: dict[str, Any] = dict(knobs or {})
        self.observations: dict[str, Observation] = {}
        self._cache: dict[str, Trace] = {}
        self._facts: dict[Callable[[str], tuple[Any, str]], tuple[Any, str]] = {}
        self._book_runs: dict[str, Any] = {}
        #: Scenario id → the sha256 of `<id>.jsonl`, `<id>-2.jsonl`, … as this run wrote or read them, in order.
        self._saved: dict[str, list[str]] = {}
        #: Where each scenario's trace is written as `<scenario id>.jsonl` (the run record's artifacts), if set.
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir else None
        #: Claim id → the recorded verdicts of the backends' latest runs (`pinb.kit.recorded`), shown under checks.
        self.recorded: Mapping[str, list[Mapping[str, Any]]] = recorded or {}
        #: Generated witnesses per property claim, besides the hand-written one (0: the hand-written one alone);
        #: drawn with the claim's own seed (`seed_for(claim_id, seed)`), so a run reproduces.
        self.witnesses = check_witness_count(witnesses)
        self.seed = seed
        #: The chapter's code and text fingerprints, which key its families' kept draws (`witnesses.draw_key`).
        self._drawn_from: tuple[str, str] | None = None

    async def run(self, scenario: Mapping[str, Any]) -> Trace:
        """Run one scenario on this notebook's backend (cached by content)."""
        key = json.dumps(scenario, sort_keys=True)
        if key not in self._cache:
            self._cache[key] = await run_scenario(scenario, self.backend, self.pi_version)
            if self.artifacts_dir is not None:
                self._save_run(scenario, self._cache[key])
        return self._cache[key]

    def _save_run(self, scenario: Mapping[str, Any], trace: Trace, name: str = "scenario") -> None:
        """Keep the trace of `scenario`: the text its lines were read from, where this process kept it."""
        self._save(str(scenario.get("id", name)), trace, kept_text(scenario, self.backend, self.pi_version))

    def _save(self, scenario_id: str, trace: Trace, text: str | None = None) -> None:
        """Keep a trace in the artefacts folder: `text`, else the lines written again (a lone surrogate escaped, as
        JavaScript's JSON does)."""
        assert self.artifacts_dir is not None
        self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        if text is None:
            text = dumps_jsonl(trace)
        folder = self.artifacts_dir
        # Same id, other knobs or another generated witness: keep both. The texts already there are remembered,
        # so the hundredth witness of a family does not read the ninety-nine files before it again.
        known = self._saved.setdefault(scenario_id, [])
        digest = _sha256(text)
        path, n = folder / f"{scenario_id}.jsonl", 1
        while True:
            if n > len(known):
                if not path.exists():
                    break
                known.append(_sha256(path.read_text(encoding="utf-8")))
            if known[n - 1] == digest:
                break
            n += 1
            path = folder / f"{scenario_id}-{n}.jsonl"
        path.write_text(text, encoding="utf-8")
        if n > len(known):
            known.append(digest)

    def experiment(self, claim_id: str) -> ExperimentView:
        """The claim's experiment as the notebook shows it: for scenarios, the data `check` will run (editable)."""
        claim = claim_by_id(claim_id)
        unrun = claim.unrun(self.backend, self.pi_version)
        experiment = claim.experiment
        if experiment is None:
            return ExperimentView(claim.id, "none", description=claim.reason or "no experiment", unrun=unrun)
        return experiment.view(self, claim.id, unrun)

    async def check(self, claim_id: str, experiment: ExperimentView | None = None, show: bool = True) -> Observation:
        """Run the claim's experiment and record its outcome; or say why it stays UNRUN on this backend.

        `experiment` is what `self.experiment(claim_id)` returned, possibly with its scenarios edited by the reader:
        those scenarios run instead of the ledger's (and the evidence says it was an edited scenario).
        """
        observation = await self.observe(claim_by_id(claim_id), experiment)
        self.observations[claim_id] = observation
        self._record(observation)
        if show and observation.traces:
            name = observation.picture or next(iter(observation.traces))
            _show_timeline(observation.trace(observation.picture), name)
        self._show_recorded(claim_id)
        return observation

    async def observe(self, claim: Claim, view: ExperimentView | None = None) -> Observation:
        """Check one claim on this run's backend, recording nothing: UNRUN with the reason where the backend cannot
        check it, else its property on its witnesses (an exception is kept as the observation's error)."""
        observation = Observation(claim.id, self.label)
        observation.unrun = claim.unrun(self.backend, self.pi_version)
        if observation.unrun is not None:
            return observation
        experiment = claim.experiment
        assert experiment is not None  # `unrun` said so otherwise
        try:
            await experiment.observe(self, observation, claim, view)
        except Exception as exc:  # an ERROR of this check; a fault (a killed process) is raised when recorded
            observation.error = exc
        return observation

    def _record(self, observation: Observation) -> None:
        """Record the observation's outcome (`pinb.claims`): UNRUN with its reason, else its verdict and structure,
        or the ERROR of what raised (a fault, such as a killed process, then fails the run)."""
        from pinb.claims import checking, skip

        if observation.unrun is not None:
            skip(observation.claim_id, observation.unrun, backend=self.label)
            return
        with checking(observation.claim_id, backend=self.label) as check:
            if observation.error is not None:
                raise observation.error
            result = observation.result
            assert result is not None
            check.observed(OUTCOME_OF[result.status], observation.evidence, result.explored.note, **result.structure())

    async def _observe_property(
        self,
        observation: Observation,
        claim: Claim,
        prop: Property,
        params: Params,
        view: ExperimentView | None = None,
    ) -> Observation:
        """The property on the hand-written witness (or the reader's edit), then on `self.witnesses` generated
        ones: the claim's verdict over all of them, with the first witness's traces."""
        from pinb.chapters.witnesses import assess

        edited = view is not None and view.edited
        scenarios = view.scenarios if view is not None and view.kind == "scenarios" else prop.hand(self.knobs)
        observation.picture = prop.picture
        seed = seed_for(observation.claim_id, self.seed)
        result, observation.traces = await assess(
            prop,
            scenarios,
            params,
            self.run,
            self._runner(),
            name=(view.witness if view is not None else "") or ("edited" if edited else "hand"),
            witnesses=self.witnesses,
            seed=seed,
            shrink_budget=SHRINK_BUDGET[self.backend],
            covers=claim.covers,
            uncovered=claim.uncovered,
            draws_key=self._draws_key(observation.claim_id, params, seed) if self.witnesses else None,
        )
        explored = result.explored
        if self.artifacts_dir is not None:
            for witness in (*explored.witnesses, *([explored.counterexample] if explored.counterexample else [])):
                for name, trace in witness.traces.items():
                    self._save_run(witness.scenarios[name], trace, name)
        observation.result = result
        observation.evidence = (EDITED if edited else "") + result.evidence
        return observation

    async def _observe_scenarios_or_facts(
        self, observation: Observation, claim: Claim, experiment: PropertyExperiment, view: ExperimentView | None
    ) -> Observation:
        """A `PropertyExperiment`: its witnesses' scenarios, or the release's package facts in `params["facts"]`."""
        params: dict[str, Any] = dict(self.knobs)
        if experiment.facts is not None:
            facts, why = self._load_facts(experiment.facts)
            if facts is None:
                observation.unrun = why
                return observation
            params["facts"] = facts
        return await self._observe_property(observation, claim, experiment.property, params, view)

    async def _observe_book_example(
        self, observation: Observation, claim: Claim, experiment: BookExampleExperiment
    ) -> Observation:
        """Run the book's program (once per notebook) on this Pi version; its property is judged on that run."""
        import asyncio

        from pinb.chapters.book import unavailable
        from pinb.scenario import reference

        if experiment.example not in self._book_runs and experiment.program() is None:
            observation.unrun = (
                f"{unavailable(chapter_folder(self.chapter_id).ledger)}; the book's program is read from it"
            )
            return observation
        run: Any = self._book_runs.get(experiment.example)
        if run is None:
            assert self.pi_version is not None
            program = experiment.program()
            assert program is not None
            run = await asyncio.to_thread(reference.run_book_example, experiment.example, self.pi_version, program)
            self._book_runs[experiment.example] = run
            if self.artifacts_dir is not None:
                self.artifacts_dir.mkdir(parents=True, exist_ok=True)
                path = self.artifacts_dir / f"book-example-{experiment.example}.json"
                path.write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
        observation.shown = {"book_example": run.model_dump()}
        _refuse_a_fault(run)
        params = {**self.knobs, "run": run, "release": self.pi_version}
        return await self._observe_property(observation, claim, experiment.property, params)

    def _draws_key(self, claim_id: str, params: Params, seed: int) -> str | None:
        if self._drawn_from is None:
            found = chapter_of(chapter_folder(self.chapter_id))
            self._drawn_from = (found.code_fingerprint, found.text_fingerprint)
        return draw_key(*self._drawn_from, claim_id, params=params, count=self.witnesses, seed=seed)

    def _runner(self) -> Callable[[Mapping[str, Any]], Trace]:
        """Run one scenario synchronously on this backend (generated witnesses run off the event loop)."""
        from pinb.chapters.backends import run_pi_sync, run_standin_sync

        if self.backend == "standin":
            return run_standin_sync
        version = self.pi_version
        assert version is not None
        return lambda scenario: run_pi_sync(scenario, version)

    def _load_facts(self, load: Callable[[str], tuple[Any, str]]) -> tuple[Any, str]:
        if load not in self._facts:
            assert self.pi_version is not None
            self._facts[load] = load(self.pi_version)
        return self._facts[load]

    def _show_recorded(self, claim_id: str) -> None:
        """Under the live verdict: what the other backends' recorded runs say of this claim, labelled as recorded."""
        entries = [entry for entry in self.recorded.get(claim_id, ()) if entry.get("backend") != self.label]
        if not entries:
            return
        from IPython.display import display

        display(recorded_shown(entries))

    async def check_all(self, claim_ids: list[str] | None = None, show: bool = False) -> dict[str, Observation]:
        for claim_id in claim_ids or [claim.id for claim in claims_of(self.chapter_id)]:
            await self.check(claim_id, show=show)
        return self.observations

    def summary_rows(self) -> list[dict[str, str]]:
        """One row per claim of the chapter: what this run recorded, or why it stayed UNRUN."""
        rows = []
        for claim in claims_of(self.chapter_id):
            observation = self.observations.get(claim.id)
            if observation is None:
                status, why = "UNRUN", "not checked in this run"
            elif observation.unrun is not None:
                status, why = "UNRUN", observation.unrun
            elif observation.status == "ERROR":
                status, why = "ERROR", "the experiment raised (see its output)"
            else:
                status = verdict_label(observation.status, claim.uncovered)
                why = observation.evidence
            rows.append({"claim": claim.id, "kind": claim.kind, "status": status, "why": why})
        return rows


def _show_timeline(trace: Trace, name: str) -> None:
    from IPython.display import display

    if trace:
        display(views.display_timeline(trace, title=f"event timeline: {name}"))


def recorded_shown(entries: list[Mapping[str, Any]]) -> Shown:
    """Recorded verdicts of other backends, never presented as this run's."""
    lines = []
    rows = []
    for entry in entries:
        where = f"run {entry.get('run_id')} ({entry.get('date') or 'date unknown'}, from the {entry.get('source')})"
        lines.append(f"  recorded on {entry.get('backend')}: {entry.get('status')} — {where}: {entry.get('evidence')}")
        rows.append(
            (
                code(str(entry.get("backend"))),
                f"<b>{escape(str(entry.get('status')))}</b>",
                escape(where),
                escape(str(entry.get("evidence") or entry.get("reason") or "")),
            )
        )
    text = "Recorded verdicts of other backends (not run here):\n" + "\n".join(lines)
    html = (
        "<div class='pinb-recorded'><i>Recorded verdicts of other backends (earlier runs, not this one):</i>"
        + table_html(("backend", "recorded verdict", "run", "evidence"), rows)
        + "</div>"
    )
    return Shown(text, html=html)


__all__ = [
    "EDITED",
    "ChapterRun",
    "Observation",
    "check_witness_count",
]


def _refuse_a_fault(run: Any) -> None:
    """A book program's run that was stopped or killed (a record made before that became an error) is a fault."""
    from pinb.scenario.worker import PiFault, exit_description

    if run.timed_out or run.exit_code is None or run.exit_code < 0:
        what = "stopped at its time limit" if run.timed_out else exit_description(run.exit_code)
        raise PiFault(f"Pi {run.pi_version}: the book's program {run.name}.ts: the experiment did not complete: {what}")
