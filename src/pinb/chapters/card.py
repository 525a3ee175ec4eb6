"""One card per claim in a chapter notebook: the quote, what the experiment does, and one table with a column per
backend (this run, then every recorded one) whose rows are the verdict, the expected and the observed value, the
premise and what the check covers; the scenario steps, timelines and raw traces folded into one `<details>`.

The card is built from the structured observation the check recorded (`pinb.claims.ClaimOutcome`: premise,
expected, observed, covers, uncovered, witnesses) and from the recorded verdicts (`pinb.kit.recorded`), never from
a second judgement. Its output carries the claim's outcome (`CLAIM_MIME`) exactly as the check recorded it, so the
run record reads the same evidence; only the text and HTML a reader sees are the card's. A CONTRADICTED or ERROR
on any backend heads the card as a banner, whatever this run said.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

from pinb.backends import release_key
from pinb.chapters.diagram import diagram_lines, is_sequence_diagram, mermaid_block
from pinb.chapters.display import CELL_STYLE, Shown, cell, code, table_html
from pinb.chapters.experiment_view import ExperimentView, scenario_rows
from pinb.claims import CLAIM_MIME, Claim, ClaimOutcome, printable
from pinb.scenario.trace import dumps_jsonl

#: Worst first: the card's badge is the worst verdict any column shows.
SEVERITY = ("CONTRADICTED", "ERROR", "NOT EXERCISED", "OBSERVED (partial)", "OBSERVED", "STALE", "UNRUN")
COLOUR = {
    "CONTRADICTED": "#cf222e",
    "ERROR": "#9a6700",
    "NOT EXERCISED": "#57606a",
    "OBSERVED (partial)": "#1a7f37",
    "OBSERVED": "#1a7f37",
    "STALE": "#57606a",
    "UNRUN": "#57606a",
}
SYMBOL = {"CONTRADICTED": "✘", "ERROR": "⚠", "NOT EXERCISED": "○", "OBSERVED (partial)": "✔", "OBSERVED": "✔"}
#: A value longer than this is cut in the table (the whole value is its tooltip and is in the details).
CELL_CHARS = 200
#: Raw trace lines shown per scenario in the details (the run's artefacts and `card.observation.traces` hold all).
RAW_LINES = 60
RAW_LINE_CHARS = 240


def verdict_kind(verdict: str) -> str:
    """`OBSERVED (partial: …)` → `OBSERVED (partial)`, `STALE (recorded X)` → `STALE`, the rest as they are."""
    if verdict.startswith("OBSERVED (partial"):
        return "OBSERVED (partial)"
    if verdict.startswith("STALE"):
        return "STALE"
    return verdict if verdict in COLOUR else "UNRUN"


def _recorded_kind(verdict: str) -> str:
    """What a stale recorded verdict said when it was recorded (`STALE (recorded CONTRADICTED)` → CONTRADICTED)."""
    inner = verdict.removeprefix("STALE (recorded ").removesuffix(")") if verdict.startswith("STALE") else verdict
    return verdict_kind(inner)


@dataclass(frozen=True)
class Column:
    """What one backend (or several recorded releases that agree) says of the claim."""

    backends: tuple[str, ...]
    verdict: str
    expected: str = ""
    observed: str = ""
    premise: str = ""
    live: bool = False
    #: Each backend of the column with its run and date (the header's tooltip).
    runs: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return _recorded_kind(self.verdict)

    @property
    def header(self) -> str:
        if self.live:
            return f"{self.backends[0]} (this run)"
        if len(self.backends) == 1:
            return f"{self.backends[0]} (recorded)"
        releases = sorted(self.backends, key=release_key)
        return f"{releases[0]}–{releases[-1].removeprefix('pi@')} ({len(releases)} releases, recorded)"


def live_column(label: str, outcome: ClaimOutcome | None, unrun: str | None) -> Column:
    """This run's column: the recorded outcome's structured observation (a check that is not a property has only
    its evidence, shown as the observation)."""
    if outcome is None:
        return Column((label,), "UNRUN", observed=unrun or "not checked in this run", live=True)
    if outcome.outcome == "skipped":
        return Column((label,), "UNRUN", observed=outcome.evidence, live=True)
    observed = outcome.observed or outcome.evidence
    if outcome.outcome == "error":
        observed = outcome.evidence
    return Column((label,), outcome.verdict, outcome.expected, observed, outcome.premise, live=True)


def recorded_column(entry: Mapping[str, Any]) -> Column:
    backend = str(entry.get("backend"))
    source = f", from the {entry['source']}" if entry.get("source") else ""
    where = f"{backend}: run {entry.get('run_id')} ({entry.get('date') or 'date unknown'}{source})"
    structured = bool(entry.get("expected") or entry.get("observed"))
    evidence = str(entry.get("evidence") or entry.get("reason") or "")
    return Column(
        (backend,),
        str(entry.get("status")),
        str(entry.get("expected") or ""),
        str(entry.get("observed") or "") if structured else evidence,
        str(entry.get("premise") or ""),
        runs=(where,),
    )


def columns(live: Column | None, entries: Sequence[Mapping[str, Any]]) -> list[Column]:
    """This run's column first, then the recorded backends in the snapshot's order; consecutive Pi releases that
    agree (the same verdict, expected, observed and premise but for the release's own number) share one column. A
    recorded entry of this run's own backend that agrees with it joins its tooltip."""
    out: list[Column] = [live] if live is not None else []
    groups: list[list[Column]] = []
    for entry in entries:
        column = recorded_column(entry)
        if live is not None and column.backends == live.backends and column.kind == live.kind:
            out[0] = replace(out[0], runs=(*out[0].runs, f"recorded {column.runs[0]} gave the same verdict"))
            continue
        previous = groups[-1][-1] if groups else None
        if (
            previous is not None
            and previous.backends[0].startswith("pi@")
            and column.backends[0].startswith("pi@")
            and _release_free(previous) == _release_free(column)
        ):
            groups[-1].append(column)
        else:
            groups.append([column])
    return [*out, *(_joined(group) for group in groups)]


def _release_free(column: Column) -> tuple[str, ...]:
    """What a column says with its own Pi release's number taken out (a premise names the release it ran on)."""
    version = column.backends[0].removeprefix("pi@")
    fields = (column.expected, column.observed, column.premise)
    return (column.verdict, *(text.replace(f"Pi {version}", "Pi {release}") for text in fields))


def _joined(group: list[Column]) -> Column:
    if len(group) == 1:
        return group[0]
    releases = sorted((c.backends[0] for c in group), key=release_key)
    span = f"Pi {releases[0].removeprefix('pi@')}–{releases[-1].removeprefix('pi@')}"
    verdict, expected, observed, premise = (text.replace("Pi {release}", span) for text in _release_free(group[0]))
    backends = tuple(backend for c in group for backend in c.backends)
    runs = tuple(run for c in group for run in c.runs)
    return Column(backends, verdict, expected, observed, premise, runs=runs)


def what_it_does(view: ExperimentView) -> str:
    """One line: what the experiment runs and compares (scenarios that look alike are named together)."""
    if view.kind != "scenarios" or not view.scenarios:
        return view.description or "no experiment"
    alike: dict[str, list[str]] = {}
    for name, scenario in view.scenarios.items():
        handlers = [what.split(" on ")[-1] for what, _ in scenario_rows(scenario) if " on " in what]
        bits = [", ".join(str(t.get("name")) for t in scenario.get("tools", ())) or "no tools"]
        if handlers:
            events = ", ".join(sorted(set(handlers), key=handlers.index))
            bits.append(f"{len(handlers)} handler{'s' if len(handlers) != 1 else ''} on {events}")
        replies = len(scenario.get("responses", ()))
        bits.append(f"{replies} scripted model repl{'ies' if replies != 1 else 'y'}")
        alike.setdefault("; ".join(bits), []).append(name)
    runs = ", ".join(
        f"{' and '.join(names)} ({bits}{' each' if len(names) > 1 else ''})" for bits, names in alike.items()
    )
    more = view.description.partition("; then ")[2]
    then = f"; then on {more}" if more else ""
    return f"Runs {runs} and compares what the sentence expects with what the trace shows{then}."


def _clip(text: str, limit: int = CELL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Card:
    """A claim's card: its quote, its experiment, this run's outcome and every recorded backend's verdict."""

    spec: Claim
    experiment: ExperimentView
    """The experiment as it ran; for scenarios, edit `card.experiment.scenarios[...]` and check again with it."""
    outcome: ClaimOutcome | None
    columns: list[Column]
    observation: Any = None
    """The check's `Observation` (traces, result, evidence) for pictures and further reading."""
    more: list[Shown] = field(default_factory=list)
    """What `with card.pictures():` drew, shown inside the details."""
    under: list[Any] = field(default_factory=list, repr=False)
    """What else the check displayed (a counterfactual's verdict), shown under the card."""

    # --- what a reader sees -------------------------------------------------------------------------------------

    @property
    def badge(self) -> str:
        """The worst verdict any column shows (a contradiction is never under a tick)."""
        kinds = [c.kind for c in self.columns] or ["UNRUN"]
        return min(kinds, key=SEVERITY.index)

    def alarms(self) -> list[Column]:
        return [c for c in self.columns if c.kind in ("CONTRADICTED", "ERROR")]

    def _partial(self) -> str:
        if not self.spec.uncovered:
            return ""
        return "partial: not covered: " + "; ".join(f"“{part}”" for part in self.spec.uncovered)

    def _diagram(self) -> bool:
        return any(is_sequence_diagram(q) for q in self.spec.quotes)

    def text(self) -> str:
        lines = []
        for alarm in self.alarms():
            lines.append(f"!! {alarm.kind} on {', '.join(alarm.backends)}" + ("" if alarm.live else " (recorded)"))
        lines.append(f"{SYMBOL.get(self.badge, '–')} {self.spec.id} · {self.spec.location}")
        for quote in self.spec.quotes:
            if is_sequence_diagram(quote):
                lines += [f"  | {line}" for line in diagram_lines(quote)]
            else:
                lines.append(f"  > {' '.join(quote.split())}")
        lines.append(f"Experiment: {what_it_does(self.experiment)}")
        for column in self.columns:
            lines.append(f"{column.header}: {column.verdict}")
            for name in ("expected", "observed", "premise"):
                value = getattr(column, name)
                if not value:
                    continue
                first = self.columns[0]
                if name == "observed" and value == column.expected:
                    value = "= expected"
                elif first.live and column is not first and value == getattr(first, name):
                    value = "= this run"
                lines.append(f"    {name}: {_clip(value)}")
        if self.spec.covers:
            lines.append("covers: " + "; ".join(f"“{part}”" for part in self.spec.covers))
        if self._partial():
            lines.append(self._partial())
        lines.append(f"(details: {self._details_summary()}; in the HTML output)")
        return "\n".join(lines)

    def html(self) -> str:
        parts = [f"<div class='pinb-card' data-claim='{escape(self.spec.id)}' data-badge='{escape(self.badge)}'>"]
        for alarm in self.alarms():
            where = ", ".join(alarm.backends) + (" (this run)" if alarm.live else " (recorded)")
            what = (
                "a finding: the observation contradicts the book"
                if alarm.kind == "CONTRADICTED"
                else "the check raised"
            )
            parts.append(
                f"<div class='pinb-alarm' style='background:{COLOUR[alarm.kind]};color:#fff;font-weight:bold;"
                f"padding:3px 8px;margin:2px 0'>{SYMBOL[alarm.kind]} {escape(alarm.kind)} on {escape(where)} — "
                f"{escape(what)}</div>"
            )
        colour = COLOUR[self.badge]
        parts.append(
            f"<div style='border-left:4px solid {colour};padding:2px 8px'>"
            f"<b style='color:{colour}'>{SYMBOL.get(self.badge, '–')}</b> <code>{escape(self.spec.id)}</code> · "
            f"<i>{escape(self.spec.location)}</i>"
        )
        for quote in self.spec.quotes:
            if is_sequence_diagram(quote):
                parts.append("<div><i>Quotes the book's sequence diagram (drawn above).</i></div>")
            else:
                parts.append(
                    "<blockquote style='margin:4px 0 4px 8px;padding-left:8px;border-left:3px solid #d0d7de'>"
                    f"{escape(' '.join(quote.split()))}</blockquote>"
                )
        parts.append(f"<div><b>Experiment</b>: {escape(what_it_does(self.experiment))}</div>")
        parts.append(self._table())
        notes = [self._partial()] if self._partial() else []
        notes += [f"Note: {note}." for note in self.spec.notes]
        parts += [f"<div><small>{escape(note)}</small></div>" for note in notes]
        parts.append(self._details())
        parts.append("</div></div>")
        return "".join(parts)

    def _table(self) -> str:
        head = cell("", header=True) + "".join(
            f'<th style="{CELL_STYLE}" title="{escape(chr(10).join(c.runs))}">{escape(c.header)}</th>'
            for c in self.columns
        )
        rows = ["<tr>" + cell("verdict", nowrap=True) + "".join(cell(_verdict_html(c)) for c in self.columns) + "</tr>"]
        for name in ("expected", "observed", "premise"):
            values = [getattr(c, name) for c in self.columns]
            if not any(values):
                continue
            shown = (_value_html(c, name, self.columns[0]) for c in self.columns)
            rows.append("<tr>" + cell(name, nowrap=True) + "".join(cell(v) for v in shown) + "</tr>")
        if self.spec.covers:
            covers = "; ".join(f"“{escape(part)}”" for part in self.spec.covers)
            span = len(self.columns)
            rows.append(
                "<tr>" + cell("covers", nowrap=True)
                + f'<td colspan="{span}" style="{CELL_STYLE}">{covers}</td></tr>'
            )  # fmt: skip
        return (
            "<table class='pinb-table pinb-card-table' style='border-collapse:collapse;margin:4px 0'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def _traces(self) -> dict[str, list[dict[str, Any]]]:
        traces = getattr(self.observation, "traces", None) or {}
        return dict(traces)

    def _details_summary(self) -> str:
        steps = sum(len(scenario_rows(s)) for s in self.experiment.scenarios.values())
        lines = sum(len(t) for t in self._traces().values())
        witnesses = len(self.outcome.witnesses) if self.outcome is not None else 0
        bits = [f"{steps} scenario steps" if self.experiment.scenarios else "the experiment"]
        if witnesses:
            bits.append(f"{witnesses} witnesses")
        bits.append(f"{lines} trace lines")
        return ", ".join(bits)

    def _details(self) -> str:
        from pinb.chapters import views

        inner = []
        for name, scenario in self.experiment.scenarios.items():
            rows = "".join(
                f"<tr>{cell(code(what))}{cell(escape(value))}</tr>" for what, value in scenario_rows(scenario)
            )
            inner.append(
                f"<div><b>scenario {escape(name)}</b> ({escape(str(scenario.get('id')))})</div>"
                f"<table class='pinb-table' style='border-collapse:collapse'><tbody>{rows}</tbody></table>"
            )
        if self.experiment.source:
            inner.append(f"<div><b>the experiment's code</b></div><pre>{escape(self.experiment.source)}</pre>")
        if self.outcome is not None:
            inner.append(self._witnesses())
            if self.outcome.detail:
                inner.append(f"<div><small>{escape(self.outcome.detail)}</small></div>")
        for name, trace in self._traces().items():
            shown = views.display_timeline(trace, title=f"event timeline: {name}")
            inner.append(f"<div><b>{escape(shown.text)}</b></div>{shown.svg or shown.html or ''}")
            raw = dumps_jsonl(trace).splitlines()
            cut = [r if len(r) <= RAW_LINE_CHARS else r[: RAW_LINE_CHARS - 1] + "…" for r in raw[:RAW_LINES]]
            rest = (
                f"\n… {len(raw) - RAW_LINES} more lines (card.observation.traces[{name!r}])"
                if len(raw) > RAW_LINES
                else ""
            )
            inner.append(
                f"<div><b>raw trace: {escape(name)}</b> ({len(raw)} lines)</div>"
                f"<pre style='font-size:11px;max-height:24em;overflow:auto'>{escape(chr(10).join(cut) + rest)}</pre>"
            )
        for shown in self.more:
            inner.append(shown.html or f"<pre>{escape(shown.text)}</pre>")
        for column in self.columns:
            if not column.live:
                inner.append(f"<div><small>recorded: {escape('; '.join(column.runs))}</small></div>")
        return (
            "<details class='pinb-details pinb-card-details'>"
            f"<summary>steps, timeline and trace: {escape(self._details_summary())}</summary>"
            f"{''.join(inner)}</details>"
        )

    def _witnesses(self) -> str:
        assert self.outcome is not None
        if not self.outcome.witnesses:
            return ""
        rows = "".join(
            f"<tr>{cell(code(w.name))}{cell(escape(w.status))}{cell(escape(_clip(w.expected)))}"
            f"{cell(escape(_clip(w.observed)))}{cell(escape(_clip(w.premise)))}</tr>"
            for w in self.outcome.witnesses
        )
        head = "".join(cell(h, header=True) for h in ("witness", "verdict", "expected", "observed", "premise"))
        counter = ""
        if self.outcome.counterexample is not None:
            text = json.dumps(self.outcome.counterexample, indent=1, ensure_ascii=False)
            counter = f"<div><b>counterexample (the minimal witness)</b></div><pre>{escape(text)}</pre>"
        return (
            f"<table class='pinb-table' style='border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>{counter}"
        )

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        # a lone surrogate (a JavaScript slice through an emoji, as traced) is written as `\udXXX`
        bundle: dict[str, Any] = {"text/plain": printable(self.text()), "text/html": printable(self.html())}
        if self.outcome is not None:
            bundle[CLAIM_MIME] = self.outcome.model_dump(mode="json")
        return bundle

    def __repr__(self) -> str:
        return self.text()

    # --- showing it ---------------------------------------------------------------------------------------------

    def show(self) -> None:
        """Display the card (after the book's sequence diagram, drawn as Mermaid, when the quote is one)."""
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            print(self.text())
            return
        if get_ipython() is None:
            print(self.text())
            return
        for block in self.diagrams():
            display({"text/markdown": block, "text/plain": block}, raw=True)
        display(self._repr_mimebundle_(), raw=True)
        for output in self.under:
            display(output.data, metadata=output.metadata, raw=True)

    def diagrams(self) -> list[str]:
        """The quotes that are pieces of the book's sequence diagram, as Mermaid blocks (shown above the card)."""
        return [mermaid_block(quote) for quote in self.spec.quotes if is_sequence_diagram(quote)]

    @contextmanager
    def pictures(self) -> Iterator[None]:
        """What the block displays or prints is drawn inside the card's details instead of above it."""
        try:
            from IPython.utils.capture import capture_output
        except ImportError:
            yield
            return
        with capture_output(stdout=True, stderr=False, display=True) as captured:
            yield
        if captured.stdout:
            self.more.append(Shown(captured.stdout, html=f"<pre>{escape(captured.stdout)}</pre>"))
        for output in captured.outputs:
            data = output.data
            self.more.append(
                Shown(str(data.get("text/plain", "")), html=data.get("text/html") or data.get("image/svg+xml"))
            )


class Cards:
    """The notebook's cards: `card = await cards.check(claim_id)` runs the claim's check and shows its card."""

    def __init__(self, run: Any) -> None:
        self.run = run

    async def check(self, claim_id: str, experiment: ExperimentView | None = None, show: bool = True) -> Card:
        """Run the claim's check on this run's backend (with `experiment` as the reader edited it, if given) and
        show its card; `show=False` returns it undisplayed (draw pictures into it, then `card.show()`)."""
        from pinb.chapters.registry import claim
        from pinb.claims import recorded

        run = self.run
        view = experiment if experiment is not None else run.experiment(claim_id)
        before = len(recorded())
        observation, under = await _quietly(run.check(claim_id, view, show=False))
        mine = [o for o in recorded()[before:] if o.claim_id == claim_id]
        outcome = mine[-1] if mine else None
        live = live_column(run.label, outcome, getattr(observation, "unrun", None))
        entries = [dict(e) for e in run.recorded.get(claim_id, ())]
        card = Card(claim(claim_id), view, outcome, columns(live, entries), observation, under=under)
        if show:
            card.show()
        return card

    def summary(self) -> Shown:
        """The run's counts in one line, the claims that did not hold listed, every claim's row folded away."""
        from pinb.claims import VERDICTS

        run = self.run
        rows = run.summary_rows()
        counts: dict[str, int] = {}
        for row in rows:
            kind = verdict_kind(row["status"])
            counts[kind] = counts.get(kind, 0) + 1
        order = ("OBSERVED", "OBSERVED (partial)", *VERDICTS[1:])
        head = f"{run.chapter_id} on {run.label}: " + ", ".join(f"{counts[v]} {v}" for v in order if v in counts)
        print(head)
        flagged = [r for r in rows if verdict_kind(r["status"]) in ("CONTRADICTED", "ERROR", "NOT EXERCISED")]
        for row in flagged:
            print(f"  {row['status']}: {row['claim']}: {row['why']}")

        def table(chosen: list[dict[str, str]]) -> str:
            return table_html(
                ("claim", "verdict", "observed / why unrun"),
                (
                    (code(r["claim"]), _verdict_html(Column((run.label,), r["status"])), escape(_clip(r["why"], 200)))
                    for r in chosen
                ),
            )

        shown = table(flagged) if flagged else "<div>No claim was contradicted, raised or left unexercised.</div>"
        html = (
            f"<div><b>{escape(head)}</b></div>{shown}<details class='pinb-details'>"
            f"<summary>every claim of the ledger ({len(rows)} rows)</summary>{table(rows)}</details>"
        )
        text = "\n".join(f"  {r['status']}: {r['claim']}: {r['why']}" for r in rows)
        return Shown(text, html=html)


async def _quietly(awaitable: Any) -> tuple[Any, list[Any]]:
    """Await the check with its displays held back: the card shows the outcome and the recorded verdicts, and
    anything else the check displayed (a counterfactual) is returned to be shown under the card. Should the check
    raise, what it displayed is shown before the exception, so its recorded ERROR is in the notebook."""
    try:
        from IPython import get_ipython
        from IPython.display import display
        from IPython.utils.capture import capture_output
    except ImportError:
        return await awaitable, []
    if get_ipython() is None:
        return await awaitable, []
    error: BaseException | None = None
    result: Any = None
    with capture_output(stdout=False, stderr=False, display=True) as captured:
        try:
            result = await awaitable
        except BaseException as exc:  # re-raised below, once what the check displayed is shown
            error = exc
    if error is not None:
        for output in captured.outputs:
            display(output.data, metadata=output.metadata, raw=True)
        raise error
    return result, [output for output in captured.outputs if not _held_back(output.data)]


def _held_back(data: Mapping[str, Any]) -> bool:
    from pinb.chapters.experiments import recorded_shown

    head = recorded_shown([]).text.splitlines()[0]
    return CLAIM_MIME in data or str(data.get("text/plain", "")).startswith(head)


SAME = "<span style='color:#57606a'>{}</span>"


def _value_html(column: Column, name: str, first: Column) -> str:
    """A value of the table, or a grey word where it repeats one beside it: the observation that is exactly what
    was expected, a recorded value that is exactly this run's."""
    value = getattr(column, name)
    if not value:
        return "—"
    if name == "observed" and value == column.expected:
        return SAME.format("= expected")
    if first.live and column is not first and value == getattr(first, name):
        return SAME.format("= this run")
    return f'<span title="{escape(value)}">{escape(_clip(value))}</span>'


def _verdict_html(column: Column) -> str:
    kind = column.kind
    colour = COLOUR[kind]
    label = escape(column.verdict.split(" (partial")[0] + (" (partial)" if kind == "OBSERVED (partial)" else ""))
    if kind in ("CONTRADICTED", "ERROR"):
        return (
            f"<span class='pinb-verdict' style='background:{colour};color:#fff;font-weight:bold;padding:1px 6px'>"
            f"{SYMBOL[kind]} {label}</span>"
        )
    return f"<span class='pinb-verdict' style='color:{colour};font-weight:bold'>{SYMBOL.get(kind, '–')} {label}</span>"


__all__ = ["Card", "Cards", "Column", "columns", "live_column", "recorded_column", "verdict_kind", "what_it_does"]
