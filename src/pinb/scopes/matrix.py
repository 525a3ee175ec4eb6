"""One row per claim across releases: the verdicts of consecutive releases that agree are one span
("holds on 1.0.3–1.3.0; differs on 1.4.0–1.6.0: …"), for status, drift and the reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pinb.scopes.facts import ReleaseFacts, ScopeResult


@dataclass(frozen=True)
class Span:
    verdict: str
    first: str
    last: str
    evidence: str
    """The newest release's evidence in the span."""

    @property
    def releases(self) -> str:
        return self.first if self.first == self.last else f"{self.first}–{self.last}"


def spans(cells: Sequence[tuple[str, str, str]], *, by_reason: tuple[str, ...] = ("UNRUN",)) -> list[Span]:
    """(version, verdict, evidence) oldest first → runs of equal verdicts (for a verdict of `by_reason`, of equal
    verdict and reason: releases not run for different reasons are told apart)."""
    out: list[Span] = []
    for version, verdict, evidence in cells:
        same_reason = verdict not in by_reason or (bool(out) and out[-1].evidence == evidence)
        if out and out[-1].verdict == verdict and same_reason:
            out[-1] = Span(verdict, out[-1].first, version, evidence)
        else:
            out.append(Span(verdict, version, version, evidence))
    return out


def describe(found: Sequence[Span], *, evidence_for: tuple[str, ...] = ("differs", "absent", "contradicted")) -> str:
    """`holds on 1.0.3–1.3.0; differs on 1.4.0–1.6.0: <evidence>` (evidence only where the claim does not hold)."""
    parts = []
    for span in found:
        text = f"{span.verdict} on {span.releases}"
        if span.verdict in evidence_for and span.evidence:
            text += f": {span.evidence}"
        parts.append(text)
    return "; ".join(parts)


@dataclass(frozen=True)
class ScopeRow:
    claim: str
    scope: str
    target: str
    cells: tuple[tuple[str, ScopeResult], ...]
    """(version, result), oldest release first."""

    @property
    def spans(self) -> list[Span]:
        return spans([(version, r.verdict, r.evidence) for version, r in self.cells])

    @property
    def changes(self) -> list[tuple[str, str, str]]:
        """(release, changelog section, entry) of every changelog entry the releases record for the type."""
        return [(version, m.section, m.text) for version, r in self.cells for m in r.changes]


def scope_rows(facts: Sequence[ReleaseFacts], claim_id: str | None = None) -> list[ScopeRow]:
    """Every claim scope across the releases the facts cover (one claim's when `claim_id` is given)."""
    rows: dict[tuple[str, str, str], list[tuple[str, ScopeResult]]] = {}
    for release_facts in facts:
        for result in release_facts.results:
            if claim_id is None or result.claim == claim_id:
                rows.setdefault((result.claim, result.scope, result.target), []).append(
                    (release_facts.release.version, result)
                )
    return [ScopeRow(claim, scope, target, tuple(cells)) for (claim, scope, target), cells in rows.items()]


__all__ = ["ScopeRow", "Span", "describe", "scope_rows", "spans"]
