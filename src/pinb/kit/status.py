"""Claim status (design.md §5), derived only from the run store; never typed in.

For each registered claim:

- **UNRUN**: a reported claim (with its reason); no run on a backend that can check it; the latest current run
  skipped it or completed without checking it. `run_id` is null.
- **STALE**: runs exist, but none on current inputs (notebook hash, pinb version, chapter text fingerprint,
  backend with its Pi version, parameters); the latest such run is named with what changed.
- Otherwise, from the latest run on current inputs of each backend that can check the claim (interrupted runs
  are not evidence and are passed over): **OBSERVED** (holds), **CONTRADICTED** (a finding), **ERROR** (the check
  raised, or the run failed before reaching it). When several backends have current runs, the most severe
  wins: CONTRADICTED, then ERROR, then OBSERVED, then UNRUN, so a finding on one backend is never hidden by
  another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pinb.errors import KitError
from pinb.kit.claims import Claim, ClaimOutcome, backend_family
from pinb.kit.project import ChapterLike, Project, backend_name
from pinb.kit.store import StoredRun

Status = Literal["OBSERVED", "CONTRADICTED", "ERROR", "STALE", "UNRUN"]
_SEVERITY: dict[str, int] = {"CONTRADICTED": 4, "ERROR": 3, "OBSERVED": 2, "UNRUN": 1, "STALE": 0}


class ClaimStatus(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    claim_id: str
    chapter: str
    kind: Literal["runnable", "reported"]
    status: Status
    run_id: str | None
    backend: str | None
    #: Why the status is what it is (the reported claim's reason, what made a run stale, the error).
    reason: str
    #: What the run observed (the outcome's evidence), empty when nothing was observed.
    evidence: str = ""
    outcome: ClaimOutcome | None = None

    def contract(self) -> dict[str, object]:
        """The `pinb status --json` shape of design.md §6, nothing more."""
        return {
            "claim_id": self.claim_id,
            "chapter": self.chapter,
            "kind": self.kind,
            "status": self.status,
            "run_id": self.run_id,
            "backend": self.backend,
            "reason": self.reason,
        }


def current_backends(project: Project) -> tuple[str, ...]:
    return (backend_name("standin", None), backend_name("pi", project.pi_version))


def is_current(project: Project, chapter: ChapterLike, run: StoredRun) -> bool:
    record = run.record
    if record.backend not in current_backends(project):
        return False
    try:
        return record.inputs == project.current_inputs(chapter, record.backend)
    except KitError:  # the notebook is gone: nothing can be current
        return False


def claim_in_run(claim: Claim, run: StoredRun) -> ClaimStatus:
    """What one run says about one claim."""
    record = run.record
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind, "backend": record.backend}
    if claim.kind == "reported":
        return ClaimStatus(**base | {"backend": None}, status="UNRUN", run_id=None, reason=claim.reason)
    outcome = record.outcome(claim.id)
    if outcome is None:
        if record.status == "completed":
            reason = f"run {record.run_id} completed without checking this claim"
            return ClaimStatus(**base, status="UNRUN", run_id=None, reason=reason)
        reason = f"run {record.run_id} {record.status} before checking this claim: {record.failure or 'no detail'}"
        return ClaimStatus(**base, status="ERROR", run_id=record.run_id, reason=reason)
    fields = {"evidence": outcome.evidence, "outcome": outcome}
    match outcome.outcome:
        case "holds":
            return ClaimStatus(**base, **fields, status="OBSERVED", run_id=record.run_id, reason="")
        case "contradicted":
            reason = "the observation contradicts the book (a finding)"
            return ClaimStatus(**base, **fields, status="CONTRADICTED", run_id=record.run_id, reason=reason)
        case "error":
            return ClaimStatus(**base, **fields, status="ERROR", run_id=record.run_id, reason=outcome.evidence)
        case "skipped":
            reason = f"skipped on {record.backend}: {outcome.evidence}"
            return ClaimStatus(**base, **fields, status="UNRUN", run_id=None, reason=reason)
    raise AssertionError(outcome.outcome)  # pragma: no cover - exhaustive over the Outcome literal


def claim_status(project: Project, chapter: ChapterLike, claim: Claim, runs: Iterable[StoredRun]) -> ClaimStatus:
    """`runs`: the chapter's runs, oldest first."""
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    if claim.kind == "reported":
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=claim.reason)
    relevant = [
        run
        for run in runs
        if backend_family(run.record.backend) in claim.backends and run.record.status != "interrupted"
    ]
    if not relevant:
        reason = f"no run on record on a backend that can check it ({', '.join(claim.backends)})"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=reason)
    latest_current: dict[str, StoredRun] = {}
    for run in relevant:
        if is_current(project, chapter, run):
            latest_current[run.record.backend] = run
    if not latest_current:
        latest = relevant[-1]
        try:
            changes = latest.record.inputs.differences(project.current_inputs(chapter, latest.record.backend))
        except KitError as exc:
            changes = [str(exc)]
        if latest.record.backend not in current_backends(project):
            changes.append(f"{latest.record.backend} is not the current Pi version ({project.pi_version})")
        reason = "latest run is on older inputs: " + ("; ".join(changes) or "inputs differ")
        return ClaimStatus(
            **base, status="STALE", run_id=latest.record.run_id, backend=latest.record.backend, reason=reason
        )
    verdicts = [claim_in_run(claim, run) for run in latest_current.values()]
    return max(verdicts, key=lambda verdict: _SEVERITY[verdict.status])


def chapter_statuses(project: Project, chapter: ChapterLike, runs: list[StoredRun]) -> list[ClaimStatus]:
    own = [run for run in runs if run.record.chapter == chapter.id]
    return [claim_status(project, chapter, claim, own) for claim in chapter.claims]
