"""`pinb status --matrix`: per claim, one row across the Pi releases — the behaviour its runs recorded on each
(`pi@X`), and what its documentation and declarations scopes found in each release's tarball — with the releases
that agree joined ("OBSERVED on 1.3.0–1.6.0; UNRUN on 1.0.3: …"). With `--from A --to B`, only the claims whose
verdict changed between the two releases, as `A → B` (the drift between any two)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pinb.backends import PI_RELEASES, Backend
from pinb.kit.status import ClaimStatus
from pinb.scopes.facts import ReleaseFacts
from pinb.scopes.matrix import describe, scope_rows, spans
from pinb.scopes.tarballs import version_key


@dataclass(frozen=True)
class MatrixRow:
    claim: str
    parts: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]
    """(what, ((version, verdict, evidence), …) oldest first): `behaviour`, `docs:FILE`, `declarations:TYPE`."""

    def summaries(self, short: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
        """(what, the releases that agree joined: "OBSERVED on 1.3.0–1.6.0; CONTRADICTED on 1.0.3: …") per part;
        an evidence or reason `short` maps is shown by its short form (a report gives the long one once)."""
        short = short or {}
        return [
            (what, describe(spans([(v, s, short.get(e, e)) for v, s, e in cells]), evidence_for=EVIDENCE_FOR))
            for what, cells in self.parts
        ]

    def line(self) -> str:
        return f"{self.claim}  " + " · ".join(f"{what}: {text}" for what, text in self.summaries())

    def changes(self, old: str, new: str) -> list[Change]:
        """Each part whose verdict differs between releases `old` and `new`."""
        found = []
        for what, cells in self.parts:
            at = {version: (verdict, evidence) for version, verdict, evidence in cells}
            if old in at and new in at and at[old][0] != at[new][0]:
                found.append(Change(what, at[old][0], at[new][0], at[new][1] or at[old][1]))
        return found

    def drift(self, old: str, new: str) -> list[str]:
        return [change.line(old, new) for change in self.changes(old, new)]


@dataclass(frozen=True)
class Change:
    """One part of a claim's row whose verdict changed between two releases."""

    what: str
    old: str
    new: str
    evidence: str
    """What the newer release's check said (the older's when the newer says nothing)."""

    def line(self, old: str, new: str) -> str:
        return f"{self.what}: {self.old} on {old} → {self.new} on {new}: {self.evidence}"


def recorded_releases(statuses: list[ClaimStatus]) -> set[str]:
    """The releases some run of these claims was recorded on (current or stale)."""
    return {v.backend.removeprefix("pi@") for s in statuses for v in s.backends if v.backend.startswith("pi@")}


def drift(rows: list[MatrixRow], old: str, new: str) -> list[tuple[str, list[Change]]]:
    """The claims whose verdict (behaviour or a scope) changed between releases `old` and `new`, with the changes."""
    changed = [(row.claim, row.changes(old, new)) for row in rows]
    return [(claim, changes) for claim, changes in changed if changes]


#: The verdicts whose evidence (or reason) a summary quotes.
EVIDENCE_FOR = ("CONTRADICTED", "UNRUN", "ERROR", "differs", "absent")


def releases() -> list[str]:
    return sorted((release.version for release in PI_RELEASES), key=version_key)


def release_limits() -> dict[str, str]:
    """Why a release cannot run a layer (`Backend.supports`'s reason) → a short form naming the release and layer."""
    found: dict[str, str] = {}
    for version in releases():
        for layer in ("agent", "app", "package"):
            ok, why = Backend("pi", version).supports(layer)
            if not ok:
                found.setdefault(why, f"pi@{version} has no {layer} layer")
    return found


def _behaviour(status: ClaimStatus, layer: str | None, kind: str) -> tuple[tuple[str, str, str], ...]:
    verdicts = {v.backend: v for v in status.backends}
    cells = []
    for version in releases():
        verdict = verdicts.get(f"pi@{version}")
        if verdict is not None:
            cells.append((version, verdict.status, verdict.evidence or verdict.reason))
        elif kind == "reported":
            cells.append((version, "UNRUN", "reported, not run"))
        else:
            ok, why = Backend("pi", version).supports(layer or "app")
            cells.append((version, "UNRUN", why if not ok else "no run on current inputs"))
    return tuple(cells)


def matrix_rows(
    statuses: list[ClaimStatus], facts: list[ReleaseFacts], layers: dict[str, tuple[str | None, str]]
) -> list[MatrixRow]:
    """`layers`: claim id → (layer, kind) from the ledger."""
    scopes: dict[str, list[tuple[str, tuple[tuple[str, str, str], ...]]]] = {}
    for row in scope_rows(facts):
        label = f"docs:{row.target}" if row.scope == "documentation" else f"declarations:{row.target}"
        cells = tuple((version, r.verdict, r.evidence) for version, r in row.cells)
        scopes.setdefault(row.claim, []).append((label, cells))
    out = []
    for status in statuses:
        layer, kind = layers.get(status.claim_id, (None, "runnable"))
        parts = [("behaviour", _behaviour(status, layer, kind)), *scopes.get(status.claim_id, [])]
        out.append(MatrixRow(status.claim_id, tuple(parts)))
    return out


def chapter_rows(statuses: list[ClaimStatus]) -> list[MatrixRow]:
    """The rows of these claims, with each claim's layer and kind from its chapter's ledger and the committed
    scope facts (`pinb status --matrix`, `pinb drift --claims` and the reports share them)."""
    from pinb.scopes.facts import load_all

    layers: dict[str, tuple[str | None, str]] = {}
    try:
        from pinb.chapters.registry import folders

        for found in folders().values():
            layers.update({c.id: (c.layer, c.kind) for c in found.ledger.claims})
    except ImportError:
        pass
    return matrix_rows(statuses, load_all(), layers)


__all__ = [
    "Change",
    "MatrixRow",
    "chapter_rows",
    "drift",
    "matrix_rows",
    "recorded_releases",
    "release_limits",
    "releases",
]
