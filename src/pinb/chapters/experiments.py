"""How a chapter notebook checks one claim: run its experiment on the chosen backend, judge, picture, record.

An `Experiment` is a property (`pinb.chapters.properties`: a premise, an expected and an observed value over any
witness, checked on the hand-written witness or the reader's edit and on seeded generated ones), or, for claims
not yet stated as properties, a set of scenarios (data, run unchanged on the stand-in and on real Pi) plus a pure
judge over their traces, or a direct probe of the stand-in's Python API for claims no scenario can express.
`ChapterRun` is what a notebook holds: it knows the backend, skips (and says why) what that backend cannot
check, records each outcome through `pinb.claims`, and keeps the traces for the pictures.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from pinb.backends import PI_MODELLED_VERSION, Backend
from pinb.chapters import views
from pinb.chapters.backends import run_scenario
from pinb.chapters.display import Shown, code, table_html
from pinb.chapters.experiment_view import ExperimentView, code_view, scenarios_view
from pinb.chapters.ledger import ClaimEntry
from pinb.chapters.properties import Params, PropertyExperiment, Trace
from pinb.chapters.registry import claim_spec, claim_specs, experiment_for
from pinb.chapters.registry import folder as chapter_folder
from pinb.chapters.witnesses import MAX_WITNESSES, SHRINK_BUDGET, PropertyResult, seed_for
from pinb.claims import verdict_label
from pinb.errors import UsageError
from pinb.scenario.trace import dumps_jsonl

EDITED = "[edited scenario, not the ledger's experiment] "


@dataclass(frozen=True)
class Finding:
    """What a judge concluded: whether the book's sentence held, and the observation that says so."""

    holds: bool
    evidence: str
    detail: str = ""


# Every experiment kind carries its own `unrun(backend)` (why this backend cannot run it, beyond what the ledger
# says), `view(run, claim_id, unrun)` (what the notebook shows before it runs) and `observe(run, observation, spec,
# view, show)` (run it in the notebook's `ChapterRun` and record the outcome): the notebook, the in-memory judge
# and the counterfactual ask the experiment, never sort it by kind.


@dataclass(frozen=True)
class ScenarioExperiment:
    """Scenarios built from the notebook's knobs, and a judge over their traces (keyed like the scenarios)."""

    scenarios: Callable[[Params], dict[str, dict[str, Any]]]
    judge: Callable[..., Finding]
    """`judge(traces)` or `judge(traces, params)` when the expectation depends on a knob."""
    picture: str | None = None
    """Which scenario's trace the notebook draws (default: the first)."""

    def unrun(self, backend: str) -> str | None:
        return None

    def view(self, run: ChapterRun, claim_id: str, unrun: str | None) -> ExperimentView:
        return scenarios_view(claim_id, self.scenarios(run.knobs), unrun)

    async def observe(
        self, run: ChapterRun, observation: Observation, spec: ClaimEntry, view: ExperimentView | None, show: bool
    ) -> Observation:
        return await run._check_scenarios(observation, self, view, show)


@dataclass(frozen=True)
class ProbeExperiment:
    """A direct probe of the stand-in's Python API (stand-in only). Returns the finding and anything to show."""

    probe: Callable[[Params], Awaitable[tuple[Finding, dict[str, Any]]]]

    def unrun(self, backend: str) -> str | None:
        return "this experiment probes the stand-in's Python API" if backend != "standin" else None

    def view(self, run: ChapterRun, claim_id: str, unrun: str | None) -> ExperimentView:
        return code_view(claim_id, "probe", self.probe, "a probe of the stand-in's Python API (stand-in only)", unrun)

    async def observe(
        self, run: ChapterRun, observation: Observation, spec: ClaimEntry, view: ExperimentView | None, show: bool
    ) -> Observation:
        return await run._check_probe(observation, self)


@dataclass(frozen=True)
class PackageExperiment:
    """A judge over the published packages' facts (pi backend). Returns None when its fact is not available."""

    judge: Callable[[Any], Finding | None]
    load: Callable[[str], tuple[Any, str]]
    """`load(pi_version)` → (the facts, or None and why they cannot be had); called once per notebook."""

    def unrun(self, backend: str) -> str | None:
        return None

    def view(self, run: ChapterRun, claim_id: str, unrun: str | None) -> ExperimentView:
        what = "a judge over the published Pi packages' facts (pi backend)"
        return code_view(claim_id, "package facts", self.judge, what, unrun)

    async def observe(
        self, run: ChapterRun, observation: Observation, spec: ClaimEntry, view: ExperimentView | None, show: bool
    ) -> Observation:
        return run._check_package(observation, self)


@dataclass(frozen=True)
class BookExampleExperiment:
    """The book's own program, run as printed by Node on the pi backend and judged from that run's record.

    The stand-in runs no TypeScript: there the claim is checked on the stand-in's port of the program (`standin`, a
    scenario experiment), or stays UNRUN when there is none.
    """

    example: str
    """The program's name (its file is `<example>.ts`; its recorded runs are named after it)."""
    program: Callable[[], str | None]
    """The program's source as the book prints it (taken from the chapter text); None when that is unavailable."""
    judge: Callable[[Any], Finding]
    """`judge(run)` over a `pinb.scenario.reference.BookExampleRun`."""
    standin: ScenarioExperiment | None = None

    def on(self, backend: str) -> BookExampleExperiment | ScenarioExperiment | None:
        """What runs on this backend: the book's program on pi, the stand-in's port elsewhere (None: nothing)."""
        return self if backend == "pi" else self.standin

    def unrun(self, backend: str) -> str | None:
        if self.on(backend) is None:
            return "the book's program is TypeScript run by Node; only the pi backend runs it"
        return None

    def view(self, run: ChapterRun, claim_id: str, unrun: str | None) -> ExperimentView:
        ported = self.on(run.backend)
        if ported is not None and ported is not self:
            return ported.view(run, claim_id, unrun)
        what = f"the book's program {self.example!r}, taken from the chapter text and run by Node"
        return code_view(claim_id, "book program", self.judge, what, unrun)

    async def observe(
        self, run: ChapterRun, observation: Observation, spec: ClaimEntry, view: ExperimentView | None, show: bool
    ) -> Observation:
        ported = self.on(run.backend)
        assert ported is not None  # `unrun` said so otherwise
        if ported is not self:
            return await ported.observe(run, observation, spec, view, show)
        return await run._check_book_example(observation, self)


Experiment = PropertyExperiment | ScenarioExperiment | ProbeExperiment | PackageExperiment | BookExampleExperiment


@dataclass
class Observation:
    claim_id: str
    backend: str
    traces: dict[str, Trace] = field(default_factory=dict)
    finding: Finding | None = None
    shown: dict[str, Any] = field(default_factory=dict)
    unrun: str | None = None
    """Why nothing was recorded for this claim on this backend (the claim stays UNRUN there)."""
    result: PropertyResult | None = None
    """A property claim's verdict over its witnesses (their verdicts, the counterexample)."""

    def trace(self, name: str | None = None) -> Trace:
        if not self.traces:
            return []
        return self.traces[name] if name is not None else next(iter(self.traces.values()))


def unrun_reason(spec: ClaimEntry, backend: str, pi_version: str | None) -> str | None:
    """Why `spec` cannot be checked on this backend, or None when it can."""
    if spec.kind == "reported":
        return f"reported, not run: {spec.reason}"
    if backend not in spec.backends:
        note = f" ({spec.notes[0]})" if spec.notes else ""
        return f"the {backend} backend cannot check this claim; it is checked on {', '.join(spec.backends)}{note}"
    ok, why = Backend(backend, pi_version).supports(spec.layer or "none")  # type: ignore[arg-type]
    if not ok:
        return why
    experiment = experiment_for(spec.id)
    if experiment is None:
        return "no experiment is written for this claim yet"
    return experiment.unrun(backend)


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
    ) -> None:
        from pinb.claims import use_backend

        self.chapter_id = chapter_id
        self.backend = backend
        self.pi_version = pi_version if backend == "pi" else None
        self.label = Backend(backend, self.pi_version).label  # type: ignore[arg-type]
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

    async def run(self, scenario: Mapping[str, Any]) -> Trace:
        """Run one scenario on this notebook's backend (cached by content)."""
        key = json.dumps(scenario, sort_keys=True)
        if key not in self._cache:
            self._cache[key] = await run_scenario(scenario, self.backend, self.pi_version)
            if self.artifacts_dir is not None:
                self._save(str(scenario.get("id", "scenario")), self._cache[key])
        return self._cache[key]

    def _save(self, scenario_id: str, trace: Trace) -> None:
        assert self.artifacts_dir is not None
        self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        text = dumps_jsonl(trace)  # a lone surrogate (a JavaScript slice through an emoji) is escaped
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
        spec = claim_spec(claim_id)
        unrun = unrun_reason(spec, self.backend, self.pi_version)
        experiment = experiment_for(claim_id)
        if experiment is None:
            return ExperimentView(claim_id, "none", description=spec.reason or "no experiment", unrun=unrun)
        return experiment.view(self, claim_id, unrun)

    async def check(self, claim_id: str, experiment: ExperimentView | None = None, show: bool = True) -> Observation:
        """Run the claim's experiment and record its outcome; or say why it stays UNRUN on this backend.

        `experiment` is what `self.experiment(claim_id)` returned, possibly with its scenarios edited by the reader:
        those scenarios run instead of the ledger's (and the evidence says it was an edited scenario).
        """
        observation = await self._check(claim_id, experiment, show)
        self._show_recorded(claim_id)
        return observation

    async def _check(self, claim_id: str, view: ExperimentView | None, show: bool) -> Observation:
        spec = claim_spec(claim_id)
        observation = Observation(claim_id, self.label)
        self.observations[claim_id] = observation
        reason = unrun_reason(spec, self.backend, self.pi_version)
        if reason is not None:
            return self._unrun(observation, reason)
        experiment = experiment_for(claim_id)
        assert experiment is not None
        return await experiment.observe(self, observation, spec, view, show)

    async def _check_scenarios(
        self, observation: Observation, experiment: ScenarioExperiment, view: ExperimentView | None, show: bool
    ) -> Observation:
        from pinb.claims import checking

        edited = view is not None and view.edited
        with checking(observation.claim_id, backend=self.label) as check:
            scenarios = view.scenarios if view is not None and view.kind == "scenarios" else None
            for name, scenario in (scenarios or experiment.scenarios(self.knobs)).items():
                observation.traces[name] = await self.run(scenario)
            finding = judge(experiment, observation.traces, self.knobs)
            observation.finding = finding
            check.check(finding.holds, (EDITED if edited else "") + finding.evidence, finding.detail)
        if show and observation.traces:
            picture = experiment.picture
            _show_timeline(observation.trace(picture), picture or next(iter(observation.traces)))
        return observation

    async def _check_probe(self, observation: Observation, experiment: ProbeExperiment) -> Observation:
        from pinb.claims import checking

        with checking(observation.claim_id, backend=self.label) as check:
            finding, observation.shown = await experiment.probe(self.knobs)
            observation.finding = finding
            check.check(finding.holds, finding.evidence, finding.detail)
        return observation

    async def _check_property(
        self,
        observation: Observation,
        spec: ClaimEntry,
        experiment: PropertyExperiment,
        view: ExperimentView | None,
        show: bool,
    ) -> Observation:
        """The property on the hand-written witness (or the reader's edit), then on `self.witnesses` generated
        ones; the claim's verdict over all of them, recorded with its structured observation."""
        from pinb.chapters.witnesses import assess
        from pinb.claims import OUTCOME_OF, checking

        prop = experiment.property
        params: dict[str, Any] = dict(self.knobs)
        if experiment.facts is not None:
            facts, why = self._load_facts(experiment.facts)
            if facts is None:
                return self._unrun(observation, why)
            params["facts"] = facts
        edited = view is not None and view.edited
        scenarios = view.scenarios if view is not None and view.kind == "scenarios" else prop.hand(self.knobs)
        with checking(observation.claim_id, backend=self.label) as check:
            result, observation.traces = await assess(
                prop,
                scenarios,
                params,
                self.run,
                self._runner(),
                name="edited" if edited else "hand",
                witnesses=self.witnesses,
                seed=seed_for(observation.claim_id, self.seed),
                shrink_budget=SHRINK_BUDGET[self.backend],
                covers=spec.covers,
                uncovered=spec.uncovered,
            )
            explored = result.explored
            if self.artifacts_dir is not None:
                for witness in (*explored.witnesses, *([explored.counterexample] if explored.counterexample else [])):
                    for name, trace in witness.traces.items():
                        self._save(str(witness.scenarios[name].get("id", name)), trace)
            observation.result = result
            evidence = (EDITED if edited else "") + result.evidence
            observation.finding = Finding(result.status == "OBSERVED", evidence, explored.note)
            check.observed(OUTCOME_OF[result.status], evidence, explored.note, **result.structure())
        if show and observation.traces:
            _show_timeline(observation.trace(prop.picture), prop.picture or next(iter(observation.traces)))
        return observation

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

    def _unrun(self, observation: Observation, reason: str) -> Observation:
        """Record, with its reason, that this backend cannot check the claim: it stays UNRUN here."""
        from pinb.claims import skip

        observation.unrun = reason
        skip(observation.claim_id, reason, backend=self.label)
        return observation

    def _check_package(self, observation: Observation, experiment: PackageExperiment) -> Observation:
        from pinb.claims import checking

        facts, why = self._load_facts(experiment.load)
        if facts is None:
            return self._unrun(observation, why)
        finding = experiment.judge(facts)
        if finding is None:
            return self._unrun(observation, f"the fact this claim needs is not in the Pi {self.pi_version} package set")
        with checking(observation.claim_id, backend=self.label) as check:
            observation.finding = finding
            check.check(finding.holds, finding.evidence, finding.detail)
        return observation

    async def _check_book_example(self, observation: Observation, experiment: BookExampleExperiment) -> Observation:
        """Run the book's program (once per notebook) on this Pi version and judge the run."""
        import asyncio

        from pinb.chapters.book import unavailable
        from pinb.claims import checking
        from pinb.scenario import reference

        if experiment.example not in self._book_runs and experiment.program() is None:
            reason = f"{unavailable(chapter_folder(self.chapter_id).ledger)}; the book's program is read from it"
            return self._unrun(observation, reason)
        with checking(observation.claim_id, backend=self.label) as check:
            run = self._book_runs.get(experiment.example)
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
            finding = experiment.judge(run)
            observation.finding = finding
            check.check(finding.holds, finding.evidence, finding.detail)
        return observation

    async def check_all(self, claim_ids: list[str] | None = None, show: bool = False) -> dict[str, Observation]:
        for claim_id in claim_ids or [spec.id for spec in claim_specs(self.chapter_id)]:
            await self.check(claim_id, show=show)
        return self.observations

    def summary_rows(self) -> list[dict[str, str]]:
        """One row per claim of the chapter: what this run recorded, or why it stayed UNRUN."""
        rows = []
        for spec in claim_specs(self.chapter_id):
            observation = self.observations.get(spec.id)
            if observation is None:
                status, why = "UNRUN", "not checked in this run"
            elif observation.unrun is not None:
                status, why = "UNRUN", observation.unrun
            elif observation.finding is None:
                status, why = "ERROR", "the experiment raised (see its output)"
            elif observation.result is not None:
                status = verdict_label(observation.result.status, spec.uncovered)
                why = observation.finding.evidence
            else:
                status = "OBSERVED" if observation.finding.holds else "CONTRADICTED"
                why = observation.finding.evidence
            rows.append({"claim": spec.id, "kind": spec.kind, "status": status, "why": why})
        return rows

    def summary(self) -> Any:
        from pinb.claims import VERDICTS

        rows = self.summary_rows()
        counts: dict[str, int] = {}
        for row in rows:
            verdict = "OBSERVED (partial)" if row["status"].startswith("OBSERVED (partial") else row["status"]
            counts[verdict] = counts.get(verdict, 0) + 1
        order = ("OBSERVED", "OBSERVED (partial)", *VERDICTS[1:])
        print(f"{self.chapter_id} on {self.label}: " + ", ".join(f"{counts[v]} {v}" for v in order if v in counts))
        for row in rows:
            if row["status"] in ("CONTRADICTED", "ERROR"):
                print(f"  {row['status']}: {row['claim']}: {row['why']}")
        table = table_html(
            ("claim", "kind", "status", "observed / why unrun"),
            ((code(r["claim"]), r["kind"], escape(r["status"]), escape(r["why"])) for r in rows),
        )
        return Shown(f"{len(rows)} claims (table)", html=table)


def judge(experiment: ScenarioExperiment, traces: dict[str, Trace], params: Params) -> Finding:
    """Call the experiment's judge with the knobs when it takes them."""
    if len(inspect.signature(experiment.judge).parameters) >= 2:
        return experiment.judge(traces, params)
    return experiment.judge(traces)


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
    "BookExampleExperiment",
    "ChapterRun",
    "Experiment",
    "Finding",
    "Observation",
    "ProbeExperiment",
    "PropertyExperiment",
    "ScenarioExperiment",
    "check_witness_count",
    "experiment_for",
    "unrun_reason",
]


def _refuse_a_fault(run: Any) -> None:
    """A book program's run that was stopped or killed (a record made before that became an error) is a fault."""
    from pinb.scenario.worker import PiFault, exit_description

    if run.timed_out or run.exit_code is None or run.exit_code < 0:
        what = "stopped at its time limit" if run.timed_out else exit_description(run.exit_code)
        raise PiFault(f"Pi {run.pi_version}: the book's program {run.name}.ts: the experiment did not complete: {what}")
