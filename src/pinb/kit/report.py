"""The evidence report of one chapter, shaped like the research briefs' required output.

Sections: context and provenance; claim audit (claim, where it appears, status, evidence, run); experiments (every
runnable or reported claim; anything without a completed run on current inputs is **UNRUN** with its reason);
reproduction ledger (exact commands, versions, artefact paths and hashes, failures and skips). Built only from
the registry and the run store; Markdown for people, JSON for machines.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from pinb import PI_MODELLED_VERSION, __version__
from pinb.kit.fingerprint import NORMALISATION_VERSION
from pinb.kit.project import ChapterLike, Project
from pinb.kit.record import RunRecord
from pinb.kit.status import ClaimStatus, chapter_statuses, is_current
from pinb.kit.store import StoredRun

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class AuditRow(BaseModel):
    model_config = _FROZEN

    claim_id: str
    quote: str
    location: str
    kind: str
    backends: tuple[str, ...]
    status: str
    evidence: str
    reason: str
    run_id: str | None
    backend: str | None


class ExperimentRow(BaseModel):
    model_config = _FROZEN

    claim_id: str
    method: str
    #: `OBSERVED`/`CONTRADICTED`/`ERROR` from a completed run on current inputs, else `UNRUN`.
    result: str
    reason: str
    run_id: str | None


class LedgerRun(BaseModel):
    model_config = _FROZEN

    run_id: str
    current: bool
    record: RunRecord
    folder: str


class EvidenceReport(BaseModel):
    model_config = _FROZEN

    chapter: str
    number: str
    title: str
    text_fingerprint: str
    fingerprint_normalisation: int
    generated_at: str
    pinb_version: str
    pi_modelled_version: str
    pi_current_version: str
    notebook: str
    audit: tuple[AuditRow, ...]
    experiments: tuple[ExperimentRow, ...]
    runs: tuple[LedgerRun, ...]
    skips: tuple[str, ...]


def build_report(
    project: Project, chapter: ChapterLike, runs: list[StoredRun], now: datetime | None = None
) -> EvidenceReport:
    own = [run for run in runs if run.record.chapter == chapter.id]
    statuses = chapter_statuses(project, chapter, own)
    by_id = {run.record.run_id: run for run in own}
    audit = tuple(_audit_row(chapter, status) for status in statuses)
    experiments = tuple(_experiment_row(chapter, status, by_id) for status in statuses)
    cited = {status.run_id for status in statuses if status.run_id}
    ledger = tuple(
        LedgerRun(
            run_id=run.record.run_id,
            current=is_current(project, chapter, run),
            record=run.record,
            folder=_relative(project, run),
        )
        for run in own
        if run.record.run_id in cited or (run.record.status != "completed" and is_current(project, chapter, run))
    )
    skips = tuple(f"{status.claim_id}: {status.reason}" for status in statuses if status.status in ("UNRUN", "STALE"))
    return EvidenceReport(
        chapter=chapter.id,
        number=chapter.number,
        title=chapter.title,
        text_fingerprint=chapter.text_fingerprint,
        fingerprint_normalisation=NORMALISATION_VERSION,
        generated_at=(now or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z"),
        pinb_version=__version__,
        pi_modelled_version=PI_MODELLED_VERSION,
        pi_current_version=project.pi_version,
        notebook=chapter.notebook,
        audit=audit,
        experiments=experiments,
        runs=ledger,
        skips=skips,
    )


def _relative(project: Project, run: StoredRun) -> str:
    try:
        return run.path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        return run.path.as_posix()


def _audit_row(chapter: ChapterLike, status: ClaimStatus) -> AuditRow:
    claim = next(c for c in chapter.claims if c.id == status.claim_id)
    return AuditRow(
        claim_id=claim.id,
        quote=claim.quote,
        location=claim.location,
        kind=claim.kind,
        backends=claim.backends,
        status=status.status,
        evidence=status.evidence,
        reason=status.reason,
        run_id=status.run_id,
        backend=status.backend,
    )


def _experiment_row(chapter: ChapterLike, status: ClaimStatus, runs: dict[str, StoredRun]) -> ExperimentRow:
    claim = next(c for c in chapter.claims if c.id == status.claim_id)
    if claim.kind == "reported":
        return ExperimentRow(
            claim_id=claim.id, method="none (reported)", result="UNRUN", reason=claim.reason, run_id=None
        )
    method = f"`{chapter.notebook}` on {', '.join(claim.backends)}"
    run = runs.get(status.run_id or "")
    completed = run is not None and run.record.status == "completed"
    if status.status in ("OBSERVED", "CONTRADICTED", "ERROR") and completed:
        return ExperimentRow(
            claim_id=claim.id, method=method, result=status.status, reason=status.reason, run_id=status.run_id
        )
    if run is not None:  # the latest current run did not complete; what it saw is in the claim audit
        record = run.record
        reason = f"no completed run on current inputs: run {record.run_id} {record.status} ({record.failure})"
    elif status.status == "STALE":
        reason = f"no completed run on current inputs ({status.reason})"
    else:
        reason = status.reason or "no completed run on current inputs"
    return ExperimentRow(claim_id=claim.id, method=method, result="UNRUN", reason=reason, run_id=None)


# --- rendering ------------------------------------------------------------------------------------------------


def render_json(report: EvidenceReport) -> str:
    return report.model_dump_json(indent=2) + "\n"


def _cell(text: Any) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or "—"


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return lines


def _status_cell(status: str) -> str:
    return f"**{status}**" if status in ("CONTRADICTED", "ERROR", "UNRUN", "STALE") else status


def render_markdown(report: EvidenceReport) -> str:
    out: list[str] = [f"# Evidence report: chapter {report.number}, {report.title}", ""]
    out += ["## 1. Context and provenance", ""]
    versions = sorted({run.record.backend for run in report.runs})
    out += [
        f"- Chapter: {report.number} “{report.title}”, stable id `{report.chapter}`",
        f"- Chapter text fingerprint the claims were checked against: `{report.text_fingerprint}` "
        f"(sha256, pinb normalisation v{report.fingerprint_normalisation})",
        f"- Report generated: {report.generated_at} by pinb {report.pinb_version}",
        f"- Pi: the stand-in models {report.pi_modelled_version}; current `pi` backend version "
        f"{report.pi_current_version}; backends in the runs cited: {', '.join(versions) or 'none'}",
        f"- Notebook: `{report.notebook}`",
        "- Scope and limits: statuses come only from recorded runs of the chapter notebook; a claim without a "
        "completed run on current inputs is UNRUN, and reported claims cannot be run at all.",
        "",
    ]
    out += ["## 2. Claim audit", ""]
    out += _table(
        ("Claim", "Where it appears", "Status", "Evidence", "Run"),
        [
            (
                f"`{row.claim_id}`: “{row.quote}”",
                row.location,
                _status_cell(row.status),
                row.evidence or row.reason,
                f"`{row.run_id}` ({row.backend})" if row.run_id else "—",
            )
            for row in report.audit
        ],
    )
    out += ["", "## 3. Experiments", ""]
    out += _table(
        ("Claim", "Method", "Result", "Reason", "Run"),
        [
            (
                f"`{row.claim_id}`",
                row.method,
                _status_cell(row.result),
                row.reason,
                f"`{row.run_id}`" if row.run_id else "—",
            )
            for row in report.experiments
        ],
    )
    out += ["", "## 4. Reproduction ledger", ""]
    if not report.runs:
        out += ["No runs on record for this chapter.", ""]
    for entry in report.runs:
        out += _ledger_run(entry)
    out += [
        "To reproduce on current inputs:",
        "",
        "```",
        f"pinb verify {report.chapter} --backend standin --force",
        f"pinb verify {report.chapter} --backend pi --pi-version {report.pi_current_version} --force",
        "```",
        "",
        "### Failures and skips",
        "",
    ]
    failures = [
        f"- run `{e.run_id}` {e.record.status}: {e.record.failure}"
        for e in report.runs
        if e.record.status != "completed"
    ]
    out += failures + [f"- {skip}" for skip in report.skips] or ["- none"]
    out.append("")
    return "\n".join(out)


def _ledger_run(entry: LedgerRun) -> list[str]:
    record = entry.record
    env = record.environment
    git = f"`{env.git_commit}`{' (dirty tree)' if env.git_dirty else ''}" if env.git_commit else "not a git work tree"
    lines = [
        f"### Run `{record.run_id}`{'' if entry.current else ' (older inputs)'}",
        "",
        f"- Command: `{record.command}`",
        f"- Status: {record.status}" + (f" ({record.failure})" if record.failure else ""),
        f"- Started {record.started_at}, finished {record.finished_at} (UTC)",
        f"- Backend: {record.backend}; parameters: `{_compact(record.parameters)}`",
        f"- Notebook: `{record.notebook.path}` sha256 `{record.notebook.sha256}`",
        f"- Versions: Python {env.python} on {env.platform}; pinb {env.pinb}; papermill {env.papermill}; "
        f"nbclient {env.nbclient}; ipykernel {env.ipykernel}; pydantic {env.pydantic}; git {git}",
    ]
    if record.backend.startswith("pi@"):
        packages = ", ".join(f"{name} {version}" for name, version in sorted(env.pi_packages.items())) or "unknown"
        lines.append(f"- Node {env.node or 'unknown'}; Pi packages: {packages}")
    lines += [f"- Note: {note}" for note in env.notes]
    lines += [f"- Warning: {warning}" for warning in record.warnings]
    lines += ["", "| Artefact | sha256 |", "|---|---|"]
    lines += [f"| `{entry.folder}/{artifact.path}` | `{artifact.sha256}` |" for artifact in record.artifacts]
    lines.append("")
    return lines


def _compact(value: dict[str, Any]) -> str:
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=False)
