"""Claim status (design.md §5), derived only from the run store; never typed in.

For each registered claim:

- **UNRUN**: a reported claim (with its reason); no run on a backend that can check it; the latest current run
  skipped it or completed without checking it. `run_id` is null.
- **STALE**: runs exist, but none of a current backend on current inputs (notebook hash, pinb version, chapter
  text fingerprint, backend with its Pi version, parameters); the latest such run is named with what changed.
- Otherwise, from the latest run on current inputs of each current backend that can check the claim
  (interrupted runs are not evidence and are passed over): **OBSERVED** (holds), **CONTRADICTED** (a finding),
  **ERROR** (the check raised, or the run failed before reaching it). When several backends have current runs,
  the most severe wins: CONTRADICTED, then ERROR, then OBSERVED, then UNRUN, so a finding on one backend is
  never hidden by another.

Every status also lists what each backend observed (`backends`): one verdict per backend whose latest run on
its own current inputs (same notebook hash, pinb version, text fingerprint and parameters) exists, each with its
run id. The current backends are the stand-in and the project's Pi version; a run on another Pi version is not
stale but evidence about that version: it is listed (`current` false) and never changes the overall status.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pinb.errors import KitError
from pinb.kit.claims import BACKEND_RE, Claim, ClaimOutcome, Outcome, backend_family
from pinb.kit.project import ChapterLike, Project, backend_name
from pinb.kit.store import StoredRun

Status = Literal["OBSERVED", "CONTRADICTED", "ERROR", "STALE", "UNRUN"]
Verdict = Literal["OBSERVED", "CONTRADICTED", "ERROR", "UNRUN"]
_SEVERITY: dict[str, int] = {"CONTRADICTED": 4, "ERROR": 3, "OBSERVED": 2, "UNRUN": 1, "STALE": 0}
_FROZEN = ConfigDict(frozen=True, extra="forbid")


class BackendVerdict(BaseModel):
    """What one backend's latest run on current inputs says about one claim."""

    model_config = _FROZEN

    backend: str
    status: Verdict
    #: The run that says so; for UNRUN, the run that skipped the claim or completed without checking it.
    run_id: str
    #: What the run observed (empty when it observed nothing).
    evidence: str = ""
    #: Why the verdict is what it is: the recorded skip reason, the error, the failure before the check.
    reason: str = ""
    #: The stand-in or the project's current Pi version: only these decide the overall status.
    current: bool
    #: The outcome the run recorded for the claim; None when it recorded none.
    outcome: Outcome | None = None

    def contract(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "status": self.status,
            "run_id": self.run_id,
            "evidence": self.evidence,
            "reason": self.reason,
            "current": self.current,
        }


class ClaimStatus(BaseModel):
    model_config = _FROZEN

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
    #: Each backend's verdict: the stand-in, the current Pi version, then other Pi versions, newest first.
    backends: tuple[BackendVerdict, ...] = ()

    def contract(self) -> dict[str, object]:
        """The `pinb status --json` shape of design.md §6, then the additive `backends` list."""
        return {
            "claim_id": self.claim_id,
            "chapter": self.chapter,
            "kind": self.kind,
            "status": self.status,
            "run_id": self.run_id,
            "backend": self.backend,
            "reason": self.reason,
            "backends": [verdict.contract() for verdict in self.backends],
        }


def current_backends(project: Project) -> tuple[str, ...]:
    return (backend_name("standin", None), backend_name("pi", project.pi_version))


def resolve_backend(project: Project, text: str) -> str:
    """`standin`, `pi` (the project's current Pi version) or `pi@<version>` → the recorded backend name."""
    if text in ("standin", "pi"):
        return backend_name(text, project.pi_version)
    if not BACKEND_RE.match(text):
        raise KitError(f"invalid backend {text!r}: use standin, pi or pi@<version>")
    return text


def check_known_backend(backend: str, runs: Iterable[StoredRun]) -> None:
    """Raise `KitError` for a Pi version that has no run on record and that the reference bridge cannot run."""
    if not backend.startswith("pi@") or any(run.record.backend == backend for run in runs):
        return
    from pinb.kit.environment import supported_pi_versions  # asks the reference bridge: only on this path

    supported = supported_pi_versions()
    version = backend.split("@", 1)[1]
    if supported is not None and version not in supported:
        raise KitError(f"unknown Pi version {version!r}: no run on record, and supported are {', '.join(supported)}")


def backend_order(project: Project, backend: str) -> tuple[int, tuple[int, ...], str]:
    """Sort key: the stand-in, the current Pi version, then other Pi versions newest first."""
    if backend == "standin":
        return (0, (), backend)
    if backend == backend_name("pi", project.pi_version):
        return (1, (), backend)
    return (2, tuple(-number for number in version_numbers(backend)), backend)


def version_numbers(backend: str) -> tuple[int, ...]:
    """`pi@1.10.2` → (1, 10, 2): Pi versions compare by their numbers, not as text."""
    return tuple(int(part) for part in re.findall(r"\d+", backend.split("@", 1)[-1]))


def has_current_inputs(project: Project, chapter: ChapterLike, run: StoredRun) -> bool:
    """The run's inputs equal what a run on the same backend would use now."""
    try:
        return run.record.inputs == project.current_inputs(chapter, run.record.backend)
    except KitError:  # the notebook is gone: nothing can be current
        return False


def is_current(project: Project, chapter: ChapterLike, run: StoredRun) -> bool:
    return run.record.backend in current_backends(project) and has_current_inputs(project, chapter, run)


def claim_in_run(claim: Claim, run: StoredRun) -> ClaimStatus:
    """What one run says about one claim."""
    record = run.record
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind, "backend": record.backend}
    if claim.kind == "reported":
        return ClaimStatus(**base | {"backend": None}, status="UNRUN", run_id=None, reason=claim.reason)
    outcome = record.outcome(claim.id)
    if outcome is None:
        lost = record.lost_outcomes()
        if record.status == "completed" and not lost:
            reason = f"run {record.run_id} completed without checking this claim"
            return ClaimStatus(**base, status="UNRUN", run_id=None, reason=reason)
        if record.status == "completed":  # it may have checked the claim: its outcome could not be read
            reason = f"run {record.run_id} completed but not all its claim outputs could be read: {'; '.join(lost)}"
            return ClaimStatus(**base, status="ERROR", run_id=record.run_id, reason=reason)
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


def _verdict(said: ClaimStatus, run: StoredRun, current: bool) -> BackendVerdict:
    outcome = said.outcome.outcome if said.outcome else None
    skipped = outcome == "skipped"
    return BackendVerdict(
        backend=run.record.backend,
        status=said.status,
        run_id=run.record.run_id,
        evidence="" if skipped else said.evidence,
        reason=f"skipped: {said.evidence}" if skipped else said.reason,
        current=current,
        outcome=outcome,
    )


def _evidence_runs(claim: Claim, runs: Iterable[StoredRun]) -> list[StoredRun]:
    return [
        run
        for run in runs
        if backend_family(run.record.backend) in claim.backends and run.record.status != "interrupted"
    ]


def _latest_on_current_inputs(project: Project, chapter: ChapterLike, runs: list[StoredRun]) -> list[StoredRun]:
    """The latest run of each backend on its own current inputs, in `backend_order`."""
    latest: dict[str, StoredRun] = {}
    for run in runs:
        if has_current_inputs(project, chapter, run):
            latest[run.record.backend] = run
    return [latest[backend] for backend in sorted(latest, key=lambda backend: backend_order(project, backend))]


def _stale(project: Project, chapter: ChapterLike, base: dict[str, object], latest: StoredRun) -> dict[str, object]:
    try:
        changes = latest.record.inputs.differences(project.current_inputs(chapter, latest.record.backend))
    except KitError as exc:
        changes = [str(exc)]
    if latest.record.backend.startswith("pi@") and latest.record.backend not in current_backends(project):
        changes.append(f"{latest.record.backend} is not the current Pi version ({project.pi_version})")
    reason = "latest run is on older inputs: " + ("; ".join(changes) or "inputs differ")
    record = latest.record
    return base | {"status": "STALE", "run_id": record.run_id, "backend": record.backend, "reason": reason}


def claim_status(project: Project, chapter: ChapterLike, claim: Claim, runs: Iterable[StoredRun]) -> ClaimStatus:
    """`runs`: the chapter's runs, oldest first."""
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    if claim.kind == "reported":
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=claim.reason)
    relevant = _evidence_runs(claim, runs)
    if not relevant:
        reason = f"no run on record on a backend that can check it ({', '.join(claim.backends)})"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=reason)
    current = current_backends(project)
    said = [(claim_in_run(claim, run), run) for run in _latest_on_current_inputs(project, chapter, relevant)]
    verdicts = tuple(_verdict(status, run, run.record.backend in current) for status, run in said)
    deciding = [status for status, run in said if run.record.backend in current]
    if not deciding:
        return ClaimStatus(**_stale(project, chapter, base, relevant[-1]), backends=verdicts)
    # max keeps the first of equals, so ties go to the stand-in, then the current Pi version
    worst = max(deciding, key=lambda status: _SEVERITY[status.status])
    return worst.model_copy(update={"backends": verdicts})


def backend_status(
    project: Project, chapter: ChapterLike, claim: Claim, runs: Iterable[StoredRun], backend: str
) -> ClaimStatus:
    """One backend's verdict alone (`pinb status --backend`), STALE or UNRUN when it has no current run."""
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    if claim.kind == "reported":
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=claim.reason)
    if backend_family(backend) not in claim.backends:
        reason = f"{backend} cannot check it (it is checked on {', '.join(claim.backends)})"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=backend, reason=reason)
    own = [run for run in _evidence_runs(claim, runs) if run.record.backend == backend]
    if not own:
        reason = f"no run on record on {backend}"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=backend, reason=reason)
    latest = _latest_on_current_inputs(project, chapter, own)
    if not latest:
        return ClaimStatus(**_stale(project, chapter, base, own[-1]))
    said = claim_in_run(claim, latest[0])
    return said.model_copy(update={"backends": (_verdict(said, latest[0], backend in current_backends(project)),)})


def chapter_statuses(
    project: Project, chapter: ChapterLike, runs: list[StoredRun], backend: str | None = None
) -> list[ClaimStatus]:
    """Every claim's status; with `backend`, that backend's verdict alone."""
    own = [run for run in runs if run.record.chapter == chapter.id]
    if backend is not None:
        return [backend_status(project, chapter, claim, own, backend) for claim in chapter.claims]
    return [claim_status(project, chapter, claim, own) for claim in chapter.claims]
