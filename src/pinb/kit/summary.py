"""A short Markdown summary of the ledger: what is observed and what is unrun, per chapter and backend.

`pinb status --summary` prints it; the README's ledger table is this output, pasted as generated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pinb.kit.status import ClaimStatus
from pinb.kit.store import StoredRun

#: An OBSERVED check that leaves parts of its sentence uncovered is counted in its own column, not under OBSERVED.
PARTIAL = "OBSERVED (partial)"
_COLUMNS = ("OBSERVED", PARTIAL, "CONTRADICTED", "NOT EXERCISED", "ERROR", "STALE", "UNRUN")


def _cell(text: str, limit: int = 140) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary_markdown(statuses: Sequence[ClaimStatus]) -> str:
    """Counts per chapter and backend (reported claims in their own row), then every finding with its run."""
    chapters = list(dict.fromkeys(status.chapter for status in statuses))
    lines = [
        "| Chapter | Backend | Claims | " + " | ".join(_COLUMNS) + " |",
        "|---|---|---:|" + "---:|" * len(_COLUMNS),
    ]
    findings: list[str] = []
    for chapter in chapters:
        own = [status for status in statuses if status.chapter == chapter]
        runnable = [status for status in own if status.kind == "runnable"]
        reported = len(own) - len(runnable)
        overall = Counter(_column(status.status, status.uncovered) for status in runnable)
        lines.append(_row(chapter, "overall", len(runnable), overall))
        per_backend: dict[str, Counter[str]] = {}
        for status in runnable:
            said: dict[str, list[tuple[str, str]]] = {}  # one line per evidence text: the backends that saw it
            for verdict in status.backends:
                per_backend.setdefault(verdict.backend, Counter())[_column(verdict.status, verdict.uncovered)] += 1
                if verdict.status == "CONTRADICTED":
                    said.setdefault(_cell(verdict.evidence), []).append((verdict.backend, verdict.run_id))
            for evidence, where in said.items():
                backends = ", ".join(backend for backend, _ in where)
                runs = ", ".join(f"`{run_id}`" for _, run_id in where)
                findings.append(
                    f"- `{status.claim_id}` on {backends} ({'runs' if len(where) > 1 else 'run'} {runs}): {evidence}"
                )
        for backend, counts in per_backend.items():
            lines.append(_row(chapter, backend, sum(counts.values()), counts))
        lines.append(
            f"| {chapter} | reported (cannot be run) | {reported} | " + " | ".join("" for _ in _COLUMNS) + " |"
        )
    text = "\n".join(lines) + "\n"
    if findings:
        text += "\nFindings (the observation contradicts the book):\n\n" + "\n".join(findings) + "\n"
    return text


@dataclass(frozen=True)
class Finding:
    """One backend's run contradicting one claim, as the end of `pinb verify` lists it."""

    claim_id: str
    backend: str
    run_id: str
    evidence: str
    #: "this run" (made by this verify), "recorded", or "recorded, on older inputs: …" (a stale run's).
    label: str
    #: The other backends' verdicts on the claim (`pi@1.0.3 OBSERVED (recorded)`).
    others: tuple[str, ...] = ()


def findings(statuses: Sequence[ClaimStatus], latest: Sequence[StoredRun], live: Collection[str] = ()) -> list[Finding]:
    """Every backend's findings on the claims of `statuses`: each current verdict CONTRADICTED, then each
    contradicted outcome of a backend's `latest` completed run where that backend has no current verdict (labelled
    as on older inputs: a finding stands until a run on current inputs says otherwise)."""
    found: list[Finding] = []
    for status in statuses:

        def label(run_id: str) -> str:
            return "this run" if run_id in live else "recorded"

        others = tuple(
            f"{v.backend} {v.status} ({label(v.run_id)})" for v in status.backends if v.status != "CONTRADICTED"
        )
        found += [
            Finding(status.claim_id, v.backend, v.run_id, v.evidence or v.reason, label(v.run_id), others)
            for v in status.backends
            if v.status == "CONTRADICTED"
        ]
        decided = {verdict.backend for verdict in status.backends}
        for run in latest:
            outcome = run.record.outcome(status.claim_id)
            if run.record.backend in decided or outcome is None or outcome.outcome != "contradicted":
                continue
            older = "recorded, on older inputs"
            found.append(
                Finding(status.claim_id, run.record.backend, run.record.run_id, outcome.evidence, older, others)
            )
    return found


def findings_text(found: Sequence[Finding]) -> str:
    if not found:
        return "Findings: no backend's run contradicts a claim of these chapters."
    lines = [f"Findings on every backend ({len(found)}: the run contradicts the book):"]
    said: dict[tuple[str, str, tuple[str, ...], str], list[Finding]] = {}  # backends that saw the same, together
    for item in found:
        said.setdefault((item.claim_id, item.label, item.others, _cell(item.evidence, 200)), []).append(item)
    for (claim_id, label, others, evidence), items in said.items():
        also = f" [{', '.join(others)}]" if others else ""
        backends = ", ".join(item.backend for item in items)
        runs = ("runs " if len(items) > 1 else "run ") + ", ".join(item.run_id for item in items)
        where = f"{claim_id} on {backends} ({label}, {runs})"
        lines.append(f"  {where}{also}: {evidence}")
    return "\n".join(lines)


def _column(status: str, uncovered: tuple[str, ...]) -> str:
    return PARTIAL if status == "OBSERVED" and uncovered else status


def _row(chapter: str, backend: str, total: int, counts: Counter[str]) -> str:
    return f"| {chapter} | {backend} | {total} | " + " | ".join(str(counts.get(c, 0)) for c in _COLUMNS) + " |"
