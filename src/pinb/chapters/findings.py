"""The map at the top of a chapter notebook: what the recorded runs found, findings first.

Built from the ledger and the recorded verdicts (`pinb.kit.recorded`: the run store in a checkout, the packaged
snapshot elsewhere), never from this session's run, so the first screen says what the book gets wrong before
anything runs. A claim is a finding when a backend's run contradicts it, or when the backends that decided it
disagree; every other claim is counted in one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from pinb.backends import release_key
from pinb.chapters.display import Shown, code, table_html
from pinb.claims import Claim

#: Verdicts a backend's run decides a claim with (UNRUN decides nothing).
DECIDED = ("OBSERVED", "CONTRADICTED", "ERROR")
#: How many words of the quote name the sentence in the map.
WORDS = 14


@dataclass(frozen=True)
class MapRow:
    claim_id: str
    sentence: str
    #: `standin OBSERVED`, `pi@1.5.0–1.6.0 CONTRADICTED`: each backend with a recorded run, consecutive Pi releases
    #: with the same verdict joined, oldest first.
    verdicts: tuple[str, ...]
    #: The observation of the first contradicting (or else disagreeing) backend.
    observation: str


def verdict_of(entry: Mapping[str, Any]) -> str:
    """The verdict a recorded entry gives, a stale run's included (`STALE (recorded X)` → `X`)."""
    status = str(entry.get("status", ""))
    return status.removeprefix("STALE (recorded ").removesuffix(")")


def few_words(spec: Claim) -> str:
    words = " ".join(spec.quotes[0].split()).split(" ")
    return " ".join(words[:WORDS]) + (" …" if len(words) > WORDS else "")


def map_rows(claims: Sequence[Claim], recorded: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[MapRow]:
    """The findings, in ledger order: contradicted anywhere, or decided differently by different backends."""
    rows = []
    for spec in claims:
        entries = list(recorded.get(spec.id, ()))
        decided = {verdict_of(e) for e in entries if verdict_of(e) in DECIDED}
        if "CONTRADICTED" not in decided and len(decided) < 2:
            continue
        shown = next((e for e in entries if verdict_of(e) == "CONTRADICTED"), None) or next(
            e for e in entries if verdict_of(e) in DECIDED and verdict_of(e) != "OBSERVED"
        )
        verdicts = backend_verdicts(entries)
        observation = f"{shown['backend']}: {' '.join(str(shown.get('evidence', '')).split())}"
        rows.append(MapRow(spec.id, few_words(spec), verdicts, observation))
    return rows


def backend_verdicts(entries: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Each recorded backend's verdict; consecutive Pi releases with the same verdict share one line."""
    labelled = [
        (str(e["backend"]), verdict_of(e) + (" (stale)" if str(e.get("status", "")).startswith("STALE") else ""))
        for e in entries
    ]
    releases = sorted((item for item in labelled if item[0].startswith("pi@")), key=lambda item: release_key(item[0]))
    spans: list[tuple[str, str, str]] = []
    for backend, verdict in releases:
        if spans and spans[-1][2] == verdict:
            spans[-1] = (spans[-1][0], backend, verdict)
        else:
            spans.append((backend, backend, verdict))
    joined = [
        f"{first if first == last else first + '–' + last.removeprefix('pi@')} {verdict}"
        for first, last, verdict in spans
    ]
    return (*(f"{b} {v}" for b, v in labelled if not b.startswith("pi@")), *joined)


def rest_line(claims: Sequence[Claim], recorded: Mapping[str, Sequence[Mapping[str, Any]]], shown: int) -> str:
    """One line counting the claims the map does not list."""
    listed = {row.claim_id for row in map_rows(claims, recorded)}
    rest = [spec for spec in claims if spec.id not in listed]
    counts: Counter[str] = Counter()
    for spec in rest:
        verdicts = {verdict_of(e) for e in recorded.get(spec.id, ())}
        if spec.kind == "reported":
            counts["reported (the book reports them; nothing here can run them)"] += 1
        elif "OBSERVED" in verdicts:
            counts["observed on every backend that decided them"] += 1
        else:
            counts["not decided by any recorded run"] += 1
    parts = ", ".join(f"{n} {what}" for what, n in counts.items()) or "none"
    return f"The other {len(rest)} of the {len(claims)} claims ({shown} listed above): {parts}."


def findings_map(claims: Sequence[Claim], recorded: Mapping[str, Sequence[Mapping[str, Any]]]) -> Shown:
    rows = map_rows(claims, recorded)
    rest = rest_line(claims, recorded, len(rows))
    head = (
        f"What the recorded runs found: {len(rows)} finding(s), where a backend's run contradicts the book or the "
        "backends disagree"
    )
    if not recorded:
        text = "No recorded runs are available to this notebook: run it to see what it finds."
        return Shown(text, html=f"<p>{escape(text)}</p>")
    cells = [
        (code(r.claim_id), escape(r.sentence), "<br>".join(escape(v) for v in r.verdicts), escape(r.observation))
        for r in rows
    ]
    table = table_html(("claim", "the sentence", "verdict per backend (recorded)", "observed"), cells) if rows else ""
    text = "\n".join([head + ":", *(f"  {r.claim_id}: {'; '.join(r.verdicts)} — {r.observation}" for r in rows), rest])
    return Shown(text, html=f"<p><b>{escape(head)}</b></p>{table}<p>{escape(rest)}</p>")


def show_findings(chapter_id: str, recorded: Mapping[str, Sequence[Mapping[str, Any]]]) -> Shown:
    """The map for a notebook: its ledger's claims against the recorded verdicts (`pinb.kit.recorded`)."""
    from pinb.chapters import registry

    return findings_map(registry.folder(chapter_id).ledger.claims, recorded)


__all__ = ["MapRow", "backend_verdicts", "findings_map", "map_rows", "rest_line", "show_findings", "verdict_of"]
