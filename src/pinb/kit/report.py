"""The evidence report of one chapter, shaped like the research briefs' required output.

Sections: context and provenance; claim audit (claim, where it appears, the overall status, and what each backend
observed with its run id), with a version-drift subsection when a claim's outcome differs between Pi versions and
each claim's row across the Pi releases;
experiments (every runnable or reported claim, per backend; anything without a completed run on current inputs is
**UNRUN** with its reason); reproduction ledger (every run cited: exact commands, versions, artefact paths and
hashes, failures and skips). Built only from the registry and the run store; Markdown for people, JSON for machines.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from pinb import PI_MODELLED_VERSION, __version__
from pinb.backends import release_key
from pinb.kit.fingerprint import NORMALISATION_VERSION
from pinb.kit.project import ChapterLike, Project
from pinb.kit.record import RunRecord
from pinb.kit.status import (
    BackendVerdict,
    ClaimStatus,
    backend_order,
    backend_status,
    chapter_statuses,
    current_backends,
    has_current_inputs,
    is_current,
)
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
    #: What each backend observed (see `ClaimStatus.backends`).
    verdicts: tuple[BackendVerdict, ...] = ()


class BackendResult(BaseModel):
    """One backend's experiment result for one claim."""

    model_config = _FROZEN

    backend: str
    #: `OBSERVED`/`CONTRADICTED`/`ERROR` from a completed run on current inputs, else `UNRUN`.
    result: str
    reason: str
    run_id: str | None
    #: The stand-in or the current Pi version (these decide the overall result).
    current: bool


class ReleaseRow(BaseModel):
    """A claim across every Pi release of the matrix, the releases that agree joined (`pinb status --matrix`)."""

    model_config = _FROZEN

    claim_id: str
    #: (what, summary): `behaviour` from the runs ("OBSERVED on 1.3.0–1.6.0; CONTRADICTED on 1.0.3: …"), then each
    #: documentation (`docs:FILE`) and declarations (`declarations:TYPE`) scope judged on each release's tarball.
    parts: tuple[tuple[str, str], ...]


class DriftRow(BaseModel):
    """A claim whose outcome differs between Pi versions: each version's verdict, oldest version first."""

    model_config = _FROZEN

    claim_id: str
    verdicts: tuple[BackendVerdict, ...]


class ExperimentRow(BaseModel):
    model_config = _FROZEN

    claim_id: str
    method: str
    #: `OBSERVED`/`CONTRADICTED`/`ERROR` from a completed run on current inputs, else `UNRUN`.
    result: str
    reason: str
    run_id: str | None
    #: The result on each backend: the current ones that can check the claim, then other Pi versions run.
    backends: tuple[BackendResult, ...] = ()


class LedgerRun(BaseModel):
    model_config = _FROZEN

    run_id: str
    #: On a current backend and on current inputs.
    current: bool
    record: RunRecord
    folder: str
    #: On current inputs for its own backend (an older Pi version's run can be; it is then evidence about it).
    current_inputs: bool = True
    #: Why the run does not match its evidence (then it is not counted and its backend's verdicts are ERROR).
    problem: str | None = None


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
    #: Claims whose outcome differs between Pi versions.
    drift: tuple[DriftRow, ...] = ()
    #: Each claim the pi backend can check, across every Pi release of the matrix.
    releases: tuple[ReleaseRow, ...] = ()
    #: Every backend a cited run used: the stand-in, the current Pi version, other Pi versions newest first.
    backends_cited: tuple[str, ...] = ()
    #: Empty when the chapter text was read and holds every quote; otherwise what is unverified or no longer matches.
    text_note: str = ""
    #: When this report was generated (UTC); empty in the committed ledger files, which must read the same
    #: whenever they are rendered from the same runs (their date is their commit's).
    reported_at: str = ""


def build_report(
    project: Project, chapter: ChapterLike, runs: list[StoredRun], now: datetime | None = None
) -> EvidenceReport:
    own = [run for run in runs if run.record.chapter == chapter.id]
    statuses = chapter_statuses(project, chapter, own)
    by_id = {run.record.run_id: run for run in own}
    audit = tuple(_audit_row(chapter, status) for status in statuses)
    experiments = tuple(_experiment_row(project, chapter, status, own, by_id) for status in statuses)
    cited = {status.run_id for status in statuses if status.run_id}
    cited |= {verdict.run_id for status in statuses for verdict in status.backends}
    ledger = tuple(
        LedgerRun(
            run_id=run.record.run_id,
            current=is_current(project, chapter, run),
            record=run.record,
            folder=_relative(project, run),
            current_inputs=has_current_inputs(project, chapter, run),
            problem=run.problem,
        )
        for run in own
        if run.record.run_id in cited
        or ((run.record.status != "completed" or run.problem) and is_current(project, chapter, run))
    )
    backends_cited = tuple(
        sorted({entry.record.backend for entry in ledger}, key=lambda backend: backend_order(project, backend))
    )
    return EvidenceReport(
        chapter=chapter.id,
        number=chapter.number,
        title=chapter.title,
        text_fingerprint=chapter.text_fingerprint,
        fingerprint_normalisation=NORMALISATION_VERSION,
        generated_at=_as_of(ledger, now),
        pinb_version=__version__,
        pi_modelled_version=PI_MODELLED_VERSION,
        pi_current_version=project.pi_version,
        notebook=chapter.notebook,
        audit=audit,
        experiments=experiments,
        runs=ledger,
        skips=_last_attempts(statuses) + tuple(dict.fromkeys(skip for status in statuses for skip in _skips(status))),
        drift=tuple(row for status in statuses if (row := _drift(status)) is not None),
        releases=_release_rows(chapter, statuses),
        backends_cited=backends_cited,
        text_note=getattr(chapter, "text_note", ""),
    )


def _as_of(ledger: tuple[LedgerRun, ...], now: datetime | None) -> str:
    """The end of the latest run cited: a report is about its runs, so rendering it again gives the same text."""
    if now is not None:
        return now.isoformat(timespec="seconds").replace("+00:00", "Z")
    ends = [entry.record.finished_at for entry in ledger]
    return max(ends).split(".")[0].removesuffix("Z") + "Z" if ends else "no runs"


def _last_attempts(statuses: list[ClaimStatus]) -> tuple[str, ...]:
    """One line per backend whose newest run on current inputs did not complete."""
    lines: dict[str, None] = {}
    for status in statuses:
        for verdict in status.backends:
            if verdict.last_attempt and verdict.status != "UNRUN":
                lines[
                    f"{verdict.backend}: last attempt: {verdict.last_attempt}; the verdicts are from run "
                    f"`{verdict.run_id}`"
                ] = None
    return tuple(lines)


def _skips(status: ClaimStatus) -> list[str]:
    """The overall UNRUN/STALE reason, then each backend's UNRUN reason the overall one does not already give."""
    lines = [f"{status.claim_id}: {status.reason}"] if status.status in ("UNRUN", "STALE") else []
    for verdict in status.backends:
        if verdict.status != "UNRUN" or (status.status == "UNRUN" and verdict.backend == status.backend):
            continue
        lines.append(f"{status.claim_id} on {verdict.backend}: {verdict.reason}")
    return lines


def _release_rows(chapter: ChapterLike, statuses: list[ClaimStatus]) -> tuple[ReleaseRow, ...]:
    from pinb.kit.matrix import chapter_rows, release_limits

    on_pi = {claim.id for claim in chapter.claims if claim.kind == "runnable" and "pi" in claim.backends}
    wanted = [status for status in statuses if status.claim_id in on_pi]
    short = release_limits()
    return tuple(ReleaseRow(claim_id=row.claim, parts=tuple(row.summaries(short))) for row in chapter_rows(wanted))


def _drift(status: ClaimStatus) -> DriftRow | None:
    """Pi versions whose runs recorded an outcome for the claim and disagree on its status."""
    checked = [
        verdict
        for verdict in status.backends
        if verdict.backend.startswith("pi@") and verdict.outcome in ("holds", "contradicted", "error")
    ]
    if len({verdict.status for verdict in checked}) < 2:
        return None
    oldest_first = sorted(checked, key=lambda verdict: (release_key(verdict.backend), verdict.backend))
    return DriftRow(claim_id=status.claim_id, verdicts=tuple(oldest_first))


def _relative(project: Project, run: StoredRun) -> str:
    try:
        return run.path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        return run.path.as_posix()


def _audit_row(chapter: ChapterLike, status: ClaimStatus) -> AuditRow:
    claim = next(c for c in chapter.claims if c.id == status.claim_id)
    return AuditRow(
        claim_id=claim.id,
        quote=claim.text,
        location=claim.location,
        kind=claim.kind,
        backends=claim.backends,
        status=status.label,
        evidence=status.evidence,
        reason=status.reason,
        run_id=status.run_id,
        backend=status.backend,
        verdicts=status.backends,
    )


def _experiment_row(
    project: Project, chapter: ChapterLike, status: ClaimStatus, own: list[StoredRun], runs: dict[str, StoredRun]
) -> ExperimentRow:
    claim = next(c for c in chapter.claims if c.id == status.claim_id)
    if claim.kind == "reported":
        return ExperimentRow(
            claim_id=claim.id, method="none (reported)", result="UNRUN", reason=claim.reason, run_id=None
        )
    method = f"`{chapter.notebook}` on {', '.join(claim.backends)}"
    run = runs.get(status.run_id or "")
    # a run that does not match its evidence decides too: its claims are ERROR, whatever its record says
    completed = run is not None and (run.record.status == "completed" or run.problem is not None)
    per_backend = _backend_results(project, chapter, status, own, runs)
    if status.status in ("OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR") and completed:
        return ExperimentRow(
            claim_id=claim.id,
            method=method,
            result=status.label,
            reason=status.reason,
            run_id=status.run_id,
            backends=per_backend,
        )
    if run is not None:  # the latest current run did not complete; what it saw is in the claim audit
        record = run.record
        reason = f"no completed run on current inputs: run {record.run_id} {record.status} ({record.failure})"
    elif status.status == "STALE":
        reason = f"no completed run on current inputs ({status.reason})"
    else:
        reason = status.reason or "no completed run on current inputs"
    return ExperimentRow(
        claim_id=claim.id, method=method, result="UNRUN", reason=reason, run_id=None, backends=per_backend
    )


def _backend_results(
    project: Project, chapter: ChapterLike, status: ClaimStatus, own: list[StoredRun], runs: dict[str, StoredRun]
) -> tuple[BackendResult, ...]:
    claim = next(c for c in chapter.claims if c.id == status.claim_id)
    verdicts = {verdict.backend: verdict for verdict in status.backends}
    wanted = [backend for backend in current_backends(project) if backend.split("@", 1)[0] in claim.backends]
    wanted += [backend for backend in verdicts if backend not in wanted]
    results = []
    for backend in wanted:
        current = backend in current_backends(project)
        verdict = verdicts.get(backend)
        if verdict is None:  # no run of this backend on current inputs: say whether it is stale or never ran
            alone = backend_status(project, chapter, claim, own, backend)
            reason = f"no completed run on current inputs ({alone.reason})"
            results.append(BackendResult(backend=backend, result="UNRUN", reason=reason, run_id=None, current=current))
            continue
        record = runs[verdict.run_id].record
        if record.status != "completed" and runs[verdict.run_id].problem is None:
            reason = f"no completed run on current inputs: run {record.run_id} {record.status} ({record.failure})"
            results.append(BackendResult(backend=backend, result="UNRUN", reason=reason, run_id=None, current=current))
            continue
        results.append(
            BackendResult(
                backend=backend, result=verdict.label, reason=verdict.reason, run_id=verdict.run_id, current=current
            )
        )
    return tuple(results)


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
    return f"**{status}**" if status in ("CONTRADICTED", "NOT EXERCISED", "ERROR", "UNRUN", "STALE") else status


def _verdicts_run_cell(verdicts: tuple[BackendVerdict, ...], joiner: str = " · ") -> str:
    """`standin: OBSERVED (run `…`) · pi@1.6.0: **CONTRADICTED** (run `…`)`."""
    return joiner.join(
        f"{verdict.backend}: {_status_cell(verdict.label)} (run `{verdict.run_id}`)" for verdict in verdicts
    )


def _verdicts_evidence_cell(verdicts: tuple[BackendVerdict, ...]) -> str:
    """Each backend's evidence (or reason); backends that saw exactly the same thing share one entry."""
    groups: dict[str, list[str]] = {}
    for verdict in verdicts:
        groups.setdefault(verdict.evidence or verdict.reason or "—", []).append(verdict.backend)
    return " · ".join(f"{', '.join(backends)}: {text}" for text, backends in groups.items())


def _audit_cells(row: AuditRow) -> tuple[str, str]:
    if not row.verdicts:
        return row.evidence or row.reason, f"`{row.run_id}` ({row.backend})" if row.run_id else "—"
    evidence = _verdicts_evidence_cell(row.verdicts)
    if not any(verdict.current for verdict in row.verdicts):  # STALE: say why before the other versions' evidence
        evidence = f"{row.reason} · {evidence}"
        run = f"latest `{row.run_id}` ({row.backend}) · " if row.run_id else ""
        return evidence, run + _verdicts_run_cell(row.verdicts)
    return evidence, _verdicts_run_cell(row.verdicts)


def _experiment_cells(row: ExperimentRow) -> tuple[str, str, str]:
    if not row.backends:
        return _status_cell(row.result), row.reason, f"`{row.run_id}`" if row.run_id else "—"
    result = f"{_status_cell(row.result)} — " + " · ".join(
        f"{item.backend}: {_status_cell(item.result)}" for item in row.backends
    )
    reasons = " · ".join(f"{item.backend}: {item.reason}" for item in row.backends if item.reason)
    run = " · ".join(f"{item.backend}: `{item.run_id}`" for item in row.backends if item.run_id) or "—"
    return result, reasons, run


def render_markdown(report: EvidenceReport) -> str:
    out: list[str] = [f"# Evidence report: chapter {report.number}, {report.title}", ""]
    out += ["## 1. Context and provenance", ""]
    out += [
        f"- Chapter: {report.number} “{report.title}”, stable id `{report.chapter}`",
        f"- Chapter text fingerprint the claims were checked against: `{report.text_fingerprint or 'none'}` "
        f"(sha256, pinb normalisation v{report.fingerprint_normalisation})"
        + (f"; **{report.text_note}**" if report.text_note else ""),
        (f"- Report generated at {report.reported_at}; e" if report.reported_at else "- E")
        + f"vidence as of {report.generated_at} (the end of the latest run cited); reported by pinb "
        f"{report.pinb_version}",
        f"- Pi: the stand-in models {report.pi_modelled_version}; current `pi` backend version "
        f"{report.pi_current_version}; backends in the runs cited: {', '.join(report.backends_cited) or 'none'}",
        f"- Notebook: `{report.notebook}`",
        "- Scope and limits: statuses come only from recorded runs of the chapter notebook; a claim without a "
        "completed run on current inputs is UNRUN, and reported claims cannot be run at all.",
        f"- Overall status: the most severe verdict of the current backends (standin, pi@{report.pi_current_version});"
        " runs on other Pi versions are listed per backend as evidence about those versions and never change it.",
        "",
    ]
    out += ["## 2. Claim audit", ""]
    out += _table(
        ("Claim", "Where it appears", "Status", "Evidence", "Run"),
        [
            (f"`{row.claim_id}`: “{row.quote}”", row.location, _status_cell(row.status), *_audit_cells(row))
            for row in report.audit
        ],
    )
    if report.drift:
        out += ["", "### Version drift", "", "The same claim's outcome differs between Pi versions:", ""]
        out += _table(
            ("Claim", "Outcome by Pi version (oldest first)", "Evidence"),
            [
                (f"`{row.claim_id}`", _verdicts_run_cell(row.verdicts, " → "), _verdicts_evidence_cell(row.verdicts))
                for row in report.drift
            ],
        )
    if report.releases:
        from pinb.kit.matrix import release_limits, releases

        out += ["", "### Across Pi releases", ""]
        out += [
            f"Each claim real Pi can check, on every release from {releases()[0]} to {releases()[-1]} (`pinb status "
            "--matrix`): the behaviour its runs recorded on each release, and what its documentation and declarations "
            "scopes found in each release's published tarball; releases that agree are joined.",
            "",
        ]
        out += _table(
            ("Claim", "Behaviour by release", "Documentation and declarations by release"),
            [
                (
                    f"`{row.claim_id}`",
                    next((text for what, text in row.parts if what == "behaviour"), "—"),
                    " · ".join(f"{what}: {text}" for what, text in row.parts if what != "behaviour") or "—",
                )
                for row in report.releases
            ],
        )
        shown = " ".join(text for row in report.releases for _, text in row.parts)
        limits = [(brief, why) for why, brief in release_limits().items() if brief in shown]
        if limits:
            out += ["", *(f"- {brief}: {why}" for brief, why in limits)]
    out += ["", "## 3. Experiments", ""]
    out += _table(
        ("Claim", "Method", "Result", "Reason", "Run"),
        [(f"`{row.claim_id}`", row.method, *_experiment_cells(row)) for row in report.experiments],
    )
    out += ["", "## 4. Reproduction ledger", ""]
    if not report.runs:
        out += ["No runs on record for this chapter.", ""]
    for entry in report.runs:
        out += _ledger_run(entry, report.pi_current_version)
    current_pi = f"pi@{report.pi_current_version}"
    other_versions = [b for b in report.backends_cited if b.startswith("pi@") and b != current_pi]
    out += [
        "To reproduce on current inputs:",
        "",
        "```",
        f"pinb verify {report.chapter} --backend standin --force",
        f"pinb verify {report.chapter} --backend pi --pi-version {report.pi_current_version} --force",
        *(
            f"pinb verify {report.chapter} --backend pi --pi-version {backend.split('@', 1)[1]} --force"
            for backend in other_versions
        ),
        "```",
        "",
        "### Failures and skips",
        "",
    ]
    failures = [
        f"- run `{e.run_id}` ({e.record.backend}): {e.problem}"
        if e.problem
        else f"- run `{e.run_id}` ({e.record.backend}) {e.record.status}: {e.record.failure}"
        for e in report.runs
        if e.record.status != "completed" or e.problem
    ]
    out += failures + [f"- {skip}" for skip in report.skips] or ["- none"]
    out.append("")
    return "\n".join(out)


def _ledger_run(entry: LedgerRun, pi_current_version: str) -> list[str]:
    record = entry.record
    env = record.environment
    git = f"`{env.git_commit}`{' (dirty tree)' if env.git_dirty else ''}" if env.git_commit else "not a git work tree"
    notes = [] if entry.current_inputs else ["older inputs"]
    if record.backend.startswith("pi@") and record.backend != f"pi@{pi_current_version}":
        notes.append(f"{record.backend}, not the current Pi version")
    lines = [
        f"### Run `{record.run_id}`" + (f" ({'; '.join(notes)})" if notes else ""),
        "",
        f"- Command: `{record.command}`",
        f"- Status: {record.status}" + (f" ({record.failure})" if record.failure else ""),
        *([f"- Not counted: {entry.problem}"] if entry.problem else []),
        f"- Started {record.started_at}, finished {record.finished_at} (UTC)",
        f"- Backend: {record.backend}; parameters: `{_compact(record.parameters)}`",
        f"- Notebook: `{record.notebook.path}` fingerprint `{record.notebook.sha256}` (its cells, outputs aside)",
        f"- Versions: Python {env.python} on {env.platform}; pinb {env.pinb}; papermill {env.papermill}; "
        f"nbclient {env.nbclient}; ipykernel {env.ipykernel}; pydantic {env.pydantic}; git {git}",
        "- pinb code digest (sha256 of the code the verdicts depend on): "
        f"`{record.inputs.pinb_code or 'not recorded'}`",
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
