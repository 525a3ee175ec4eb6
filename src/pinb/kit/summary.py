"""A short Markdown summary of the ledger: what is observed and what is unrun, per chapter and backend.

`pinb status --summary` prints it; the README's ledger table is this output, pasted as generated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pinb.kit.status import ClaimStatus

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
            for verdict in status.backends:
                per_backend.setdefault(verdict.backend, Counter())[_column(verdict.status, verdict.uncovered)] += 1
                if verdict.status == "CONTRADICTED":
                    where = f"`{status.claim_id}` on {verdict.backend} (run `{verdict.run_id}`)"
                    findings.append(f"- {where}: {_cell(verdict.evidence)}")
        for backend, counts in per_backend.items():
            lines.append(_row(chapter, backend, sum(counts.values()), counts))
        lines.append(
            f"| {chapter} | reported (cannot be run) | {reported} | " + " | ".join("" for _ in _COLUMNS) + " |"
        )
    text = "\n".join(lines) + "\n"
    if findings:
        text += "\nFindings (the observation contradicts the book):\n\n" + "\n".join(findings) + "\n"
    return text


def _column(status: str, uncovered: tuple[str, ...]) -> str:
    return PARTIAL if status == "OBSERVED" and uncovered else status


def _row(chapter: str, backend: str, total: int, counts: Counter[str]) -> str:
    return f"| {chapter} | {backend} | {total} | " + " | ".join(str(counts.get(c, 0)) for c in _COLUMNS) + " |"
