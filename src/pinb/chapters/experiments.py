"""How a chapter notebook checks one claim: run its experiment on the chosen backend, judge, picture, record.

An `Experiment` is either a set of scenarios (data, run unchanged on the stand-in and on real Pi) plus a pure
judge over their traces, or a direct probe of the stand-in's Python API for claims no scenario can express.
`ChapterRun` is what a notebook holds: it knows the backend, skips (and says why) what that backend cannot
check, records each outcome through `pinb.claims`, and keeps the traces for the pictures.
"""

from __future__ import annotations

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
from pinb.chapters.registry import claim_spec, claim_specs, experiment_for
from pinb.chapters.registry import folder as chapter_folder
from pinb.scenario.trace import dumps_jsonl

Trace = list[dict[str, Any]]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    """What a judge concluded: whether the book's sentence held, and the observation that says so."""

    holds: bool
    evidence: str
    detail: str = ""


@dataclass(frozen=True)
class ScenarioExperiment:
    """Scenarios built from the notebook's knobs, and a judge over their traces (keyed like the scenarios)."""

    scenarios: Callable[[Params], dict[str, dict[str, Any]]]
    judge: Callable[..., Finding]
    """`judge(traces)` or `judge(traces, params)` when the expectation depends on a knob."""
    picture: str | None = None
    """Which scenario's trace the notebook draws (default: the first)."""


@dataclass(frozen=True)
class ProbeExperiment:
    """A direct probe of the stand-in's Python API (stand-in only). Returns the finding and anything to show."""

    probe: Callable[[Params], Awaitable[tuple[Finding, dict[str, Any]]]]


@dataclass(frozen=True)
class PackageExperiment:
    """A judge over the published packages' facts (pi backend). Returns None when its fact is not available."""

    judge: Callable[[Any], Finding | None]
    load: Callable[[str], tuple[Any, str]]
    """`load(pi_version)` → (the facts, or None and why they cannot be had); called once per notebook."""


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


Experiment = ScenarioExperiment | ProbeExperiment | PackageExperiment | BookExampleExperiment


@dataclass
class Observation:
    claim_id: str
    backend: str
    traces: dict[str, Trace] = field(default_factory=dict)
    finding: Finding | None = None
    shown: dict[str, Any] = field(default_factory=dict)
    unrun: str | None = None
    """Why nothing was recorded for this claim on this backend (the claim stays UNRUN there)."""

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
    if isinstance(experiment, ProbeExperiment) and backend != "standin":
        return "this experiment probes the stand-in's Python API"
    if isinstance(experiment, BookExampleExperiment) and backend != "pi" and experiment.standin is None:
        return "the book's program is TypeScript run by Node; only the pi backend runs it"
    return None


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
        #: Where each scenario's trace is written as `<scenario id>.jsonl` (the run record's artifacts), if set.
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir else None
        #: Claim id → the recorded verdicts of the backends' latest runs (`pinb.kit.recorded`), shown under checks.
        self.recorded: Mapping[str, list[Mapping[str, Any]]] = recorded or {}

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
        path, n = folder / f"{scenario_id}.jsonl", 1
        while path.exists() and path.read_text(encoding="utf-8") != text:  # same id, other knobs: keep both
            n += 1
            path = folder / f"{scenario_id}-{n}.jsonl"
        path.write_text(text, encoding="utf-8")

    def experiment(self, claim_id: str) -> ExperimentView:
        """The claim's experiment as the notebook shows it: for scenarios, the data `check` will run (editable)."""
        spec = claim_spec(claim_id)
        unrun = unrun_reason(spec, self.backend, self.pi_version)
        experiment = experiment_for(claim_id)
        if isinstance(experiment, BookExampleExperiment) and self.backend != "pi" and experiment.standin is not None:
            experiment = experiment.standin
        if isinstance(experiment, ScenarioExperiment):
            return scenarios_view(claim_id, experiment.scenarios(self.knobs), unrun)
        if isinstance(experiment, ProbeExperiment):
            what = "a probe of the stand-in's Python API (stand-in only)"
            return code_view(claim_id, "probe", experiment.probe, what, unrun)
        if isinstance(experiment, PackageExperiment):
            what = "a judge over the published Pi packages' facts (pi backend)"
            return code_view(claim_id, "package facts", experiment.judge, what, unrun)
        if isinstance(experiment, BookExampleExperiment):
            what = f"the book's program {experiment.example!r}, taken from the chapter text and run by Node"
            return code_view(claim_id, "book program", experiment.judge, what, unrun)
        return ExperimentView(claim_id, "none", description=spec.reason or "no experiment", unrun=unrun)

    async def check(self, claim_id: str, experiment: ExperimentView | None = None, show: bool = True) -> Observation:
        """Run the claim's experiment and record its outcome; or say why it stays UNRUN on this backend.

        `experiment` is what `self.experiment(claim_id)` returned, possibly with its scenarios edited by the reader:
        those scenarios run instead of the ledger's (and the evidence says it was an edited scenario).
        """
        observation = await self._check(claim_id, experiment, show)
        self._show_recorded(claim_id)
        return observation

    async def _check(self, claim_id: str, view: ExperimentView | None, show: bool) -> Observation:
        from pinb.claims import checking

        spec = claim_spec(claim_id)
        observation = Observation(claim_id, self.label)
        self.observations[claim_id] = observation
        reason = unrun_reason(spec, self.backend, self.pi_version)
        if reason is not None:
            return self._unrun(observation, reason)
        experiment = experiment_for(claim_id)
        assert experiment is not None
        if isinstance(experiment, PackageExperiment):
            return self._check_package(observation, experiment)
        if isinstance(experiment, BookExampleExperiment):
            if self.backend == "pi":
                return await self._check_book_example(observation, experiment)
            assert experiment.standin is not None
            experiment = experiment.standin
        edited = view is not None and view.edited
        with checking(claim_id, backend=self.label) as check:
            if isinstance(experiment, ScenarioExperiment):
                scenarios = view.scenarios if view is not None and view.kind == "scenarios" else None
                for name, scenario in (scenarios or experiment.scenarios(self.knobs)).items():
                    observation.traces[name] = await self.run(scenario)
                finding = judge(experiment, observation.traces, self.knobs)
            else:
                finding, observation.shown = await experiment.probe(self.knobs)
            observation.finding = finding
            prefix = "[edited scenario, not the ledger's experiment] " if edited else ""
            check.check(finding.holds, prefix + finding.evidence, finding.detail)
        if show and observation.traces:
            picture = experiment.picture if isinstance(experiment, ScenarioExperiment) else None
            _show_timeline(observation.trace(picture), picture or next(iter(observation.traces)))
        return observation

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

        if experiment.load not in self._facts:
            assert self.pi_version is not None
            self._facts[experiment.load] = experiment.load(self.pi_version)
        facts, why = self._facts[experiment.load]
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
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        print(f"{self.chapter_id} on {self.label}: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts))
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
    "BookExampleExperiment",
    "ChapterRun",
    "Experiment",
    "Finding",
    "Observation",
    "ProbeExperiment",
    "ScenarioExperiment",
    "experiment_for",
    "unrun_reason",
]


def _refuse_a_fault(run: Any) -> None:
    """A book program's run that was stopped or killed (a record made before that became an error) is a fault."""
    from pinb.scenario.worker import PiFault, exit_description

    if run.timed_out or run.exit_code is None or run.exit_code < 0:
        what = "stopped at its time limit" if run.timed_out else exit_description(run.exit_code)
        raise PiFault(f"Pi {run.pi_version}: the book's program {run.name}.ts: the experiment did not complete: {what}")
