"""Claim status (design.md §5), derived only from the run store; never typed in.

Only runs that match their evidence count (`pinb.kit.integrity`): a run whose record no longer matches its executed
notebook or artefacts makes its backend's verdicts ERROR ("record does not match its notebook: …") until it is
removed. For each registered claim and each backend, among that backend's runs on current inputs (notebook hash,
pinb version and code, chapter text fingerprint, backend with its Pi version, parameters; the machine's
environment is not an input here, see `Inputs.same_content`):

- the latest **completed** run decides: **OBSERVED** (holds; "OBSERVED (partial: …)" when the check leaves parts
  of the sentence uncovered), **CONTRADICTED** (a finding), **NOT EXERCISED** (the check ran but no witness
  exercised the sentence), **ERROR** (the claim's check raised, or its outputs could not be read), **UNRUN**
  (skipped on that backend, or not checked);
- a newer run that did not complete (interrupted, failed, timed out, the kernel died, the kit could not start it)
  never replaces those verdicts: it is named as the last attempt (`last_attempt`, "last attempt: run X failed: …");
- with no completed run on current inputs: **STALE** when a completed run exists on older inputs (what changed is
  named), else **UNRUN**, naming the last attempt if there was one.

The overall status is the most severe verdict of the current backends (the stand-in and the project's Pi
version): CONTRADICTED, then ERROR, then OBSERVED, then NOT EXERCISED, then UNRUN, so a finding on one backend
is never hidden by another. Every status also lists what each backend observed (`backends`), including other Pi
versions (`current` false): evidence about those versions that never changes the overall status. Reported claims
are UNRUN with their reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from pinb.backends import Backend, release_key
from pinb.claims import Claim
from pinb.errors import KitError
from pinb.kit.claims import BACKEND_RE, ClaimOutcome, Outcome, backend_family, verdict_label
from pinb.kit.claims import Verdict as Status
from pinb.kit.project import ChapterLike, Project
from pinb.kit.store import StoredRun

Verdict = Literal["OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR", "UNRUN"]
_SEVERITY: dict[str, int] = {"CONTRADICTED": 5, "ERROR": 4, "OBSERVED": 3, "NOT EXERCISED": 2, "UNRUN": 1, "STALE": 0}
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
    #: A newer run on current inputs that did not complete (`run X failed: …`); its outcomes are not verdicts.
    last_attempt: str = ""
    #: The parts of the sentence the recorded check leaves untested (an OBSERVED verdict with any is partial).
    uncovered: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The verdict as shown: `OBSERVED (partial: …)` for a partial check."""
        return verdict_label(self.status, self.uncovered)

    @model_serializer(mode="wrap")
    def _without_empty_uncovered(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`uncovered` only when there is some: a whole check serializes as it did before checks could be partial."""
        data: dict[str, Any] = handler(self)
        if not self.uncovered:
            data.pop("uncovered", None)
        return data

    def contract(self) -> dict[str, object]:
        found: dict[str, object] = {
            "backend": self.backend,
            "status": self.status,
            "run_id": self.run_id,
            "evidence": self.evidence,
            "reason": self.reason,
            "current": self.current,
        }
        if self.last_attempt:
            found["last_attempt"] = self.last_attempt
        if self.status == "OBSERVED" and self.uncovered:
            found["partial"] = list(self.uncovered)
        return found


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
    #: A run newer than the deciding one that did not complete (`run X failed: …`), listed, never a verdict.
    last_attempt: str = ""

    @property
    def uncovered(self) -> tuple[str, ...]:
        return self.outcome.uncovered if self.outcome is not None else ()

    @property
    def label(self) -> str:
        """The status as shown: `OBSERVED (partial: …)` when the deciding check leaves parts of the sentence
        untested."""
        return verdict_label(self.status, self.uncovered)

    def contract(self) -> dict[str, object]:
        """The `pinb status --json` shape of design.md §6, then the additive `backends` list (and `partial`, the
        uncovered parts of an OBSERVED claim whose check is partial)."""
        found: dict[str, object] = {
            "claim_id": self.claim_id,
            "chapter": self.chapter,
            "kind": self.kind,
            "status": self.status,
            "run_id": self.run_id,
            "backend": self.backend,
            "reason": self.reason,
            "backends": [verdict.contract() for verdict in self.backends],
        }
        if self.status == "OBSERVED" and self.uncovered:
            found["partial"] = list(self.uncovered)
        return found


def current_backends(project: Project) -> tuple[str, ...]:
    return (Backend("standin").label, Backend("pi", project.pi_version).label)


def resolve_backend(project: Project, text: str) -> str:
    """`standin`, `pi` (the project's current Pi version) or `pi@<version>` → the recorded backend name."""
    if text in ("standin", "pi"):
        return Backend.parse(text, project.pi_version).label
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
    if backend == Backend("pi", project.pi_version).label:
        return (1, (), backend)
    return (2, tuple(-number for number in release_key(backend)), backend)


def has_current_inputs(project: Project, chapter: ChapterLike, run: StoredRun) -> bool:
    """The run's inputs equal what a run on the same backend would use now (the environment aside); an unreadable
    record may have been on current inputs, so it counts as if it were (its verdicts are ERROR)."""
    if run.unreadable:
        return True
    try:
        return run.record.inputs.same_content(project.expected_inputs(chapter, run.record.inputs))
    except KitError:  # the notebook is gone: nothing can be current
        return False


def is_current(project: Project, chapter: ChapterLike, run: StoredRun) -> bool:
    return run.record.backend in current_backends(project) and has_current_inputs(project, chapter, run)


def attempt_note(run: StoredRun) -> str:
    """`run X failed: cell 4 raised …`: a run that did not complete, as the status lines name it."""
    record = run.record
    return f"run {record.run_id} {record.status}: {record.failure or 'no detail'}"


@dataclass(frozen=True)
class Evidence:
    """What one backend's runs on current inputs amount to."""

    backend: str
    #: The latest completed run that matches its notebook: its outcomes are the verdicts.
    run: StoredRun | None = None
    #: The latest run that does not match its notebook: while it is there, the backend's verdicts are ERROR.
    tampered: StoredRun | None = None
    #: A run newer than `run` that did not complete (interrupted, failed, could not start): listed, never a verdict.
    attempt: StoredRun | None = None

    @property
    def decides(self) -> bool:
        return self.run is not None or self.tampered is not None


def chapter_evidence(project: Project, chapter: ChapterLike, runs: Iterable[StoredRun]) -> dict[str, Evidence]:
    """Each backend's evidence from the chapter's runs (oldest first) on current inputs, in `backend_order`."""
    found: dict[str, Evidence] = {}
    unreadable: list[StoredRun] = []
    for run in runs:
        if run.record.chapter != chapter.id or not has_current_inputs(project, chapter, run):
            continue
        if run.unreadable:
            unreadable.append(run)
            continue
        backend = run.record.backend
        evidence = found.get(backend, Evidence(backend))
        if not run.verified:
            evidence = replace(evidence, tampered=run)
        elif run.record.status == "completed":
            evidence = replace(evidence, run=run, attempt=None)
        else:
            evidence = replace(evidence, attempt=run)
        found[backend] = evidence
    for run in unreadable:  # whatever else the backend has: nothing says this run was not its latest
        named = [run.record.backend] if run.record.backend else dict.fromkeys([*current_backends(project), *found])
        for backend in named:
            found[backend] = replace(found.get(backend, Evidence(backend)), tampered=run)
    return {backend: found[backend] for backend in sorted(found, key=lambda b: backend_order(project, b))}


def claim_in_run(claim: Claim, run: StoredRun) -> ClaimStatus:
    """What one run says about one claim (a run that fails verification says ERROR, whatever its record says)."""
    record = run.record
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind, "backend": record.backend}
    if claim.kind == "reported":
        return ClaimStatus(**base | {"backend": None}, status="UNRUN", run_id=None, reason=claim.reason)
    if run.problem:
        return ClaimStatus(**base, status="ERROR", run_id=record.run_id, reason=run.problem)
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
            reason = f"not checked on {record.backend}: {outcome.evidence}"
            return ClaimStatus(**base, **fields, status="UNRUN", run_id=None, reason=reason)
        case "not-exercised":
            reason = "no witness of the check exercised the sentence: it says nothing of it"
            return ClaimStatus(**base, **fields, status="NOT EXERCISED", run_id=record.run_id, reason=reason)
    raise AssertionError(outcome.outcome)  # pragma: no cover - exhaustive over the Outcome literal


def _said(claim: Claim, evidence: Evidence) -> tuple[ClaimStatus, str]:
    """The claim's status on one backend, and the run that says so."""
    deciding = evidence.tampered or evidence.run
    if deciding is not None:
        said = claim_in_run(claim, deciding)
        if evidence.attempt is not None and evidence.tampered is None:
            said = said.model_copy(update={"last_attempt": attempt_note(evidence.attempt)})
        return said, deciding.record.run_id
    assert evidence.attempt is not None
    note = attempt_note(evidence.attempt)
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind, "backend": evidence.backend}
    reason = f"no completed run on current inputs; last attempt: {note}"
    return ClaimStatus(
        **base, status="UNRUN", run_id=None, reason=reason, last_attempt=note
    ), evidence.attempt.record.run_id


def _verdict(said: ClaimStatus, run_id: str, backend: str, current: bool) -> BackendVerdict:
    outcome = said.outcome.outcome if said.outcome else None
    skipped = outcome == "skipped"
    return BackendVerdict(
        backend=backend,
        status=said.status,
        run_id=run_id,
        evidence="" if skipped else said.evidence,
        reason=f"not checked: {said.evidence}" if skipped else said.reason,
        current=current,
        outcome=outcome,
        last_attempt=said.last_attempt,
        uncovered=said.uncovered,
    )


def can_check(claim: Claim, backend: str) -> bool:
    return backend_family(backend) in claim.backends


def _stale(project: Project, chapter: ChapterLike, base: dict[str, object], latest: StoredRun) -> dict[str, object]:
    try:
        changes = latest.record.inputs.differences(project.expected_inputs(chapter, latest.record.inputs))
    except KitError as exc:
        changes = [str(exc)]
    if latest.record.backend.startswith("pi@") and latest.record.backend not in current_backends(project):
        changes.append(f"{latest.record.backend} is not the current Pi version ({project.pi_version})")
    note = getattr(chapter, "text_note", "")
    if note and "the chapter text changed" in changes:
        changes.append(note)
    reason = "latest run is on older inputs: " + ("; ".join(changes) or "inputs differ")
    record = latest.record
    return base | {"status": "STALE", "run_id": record.run_id, "backend": record.backend, "reason": reason}


def _without_verdict(
    project: Project, chapter: ChapterLike, claim: Claim, runs: list[StoredRun], where: str, attempts: list[Evidence]
) -> ClaimStatus:
    """No backend decides: STALE after the latest completed run, else UNRUN, naming the last failed attempt."""
    base: dict[str, object] = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    completed = [run for run in runs if run.verified and run.record.status == "completed"]
    attempt = max((e.attempt for e in attempts if e.attempt), key=_started, default=None)
    note = attempt_note(attempt) if attempt is not None else ""
    if completed:
        fields = _stale(project, chapter, base, completed[-1])
        if note:
            fields["reason"] = f"{fields['reason']}; last attempt on current inputs: {note}"
        return ClaimStatus(**fields, last_attempt=note)
    if not runs:
        reason = f"no run on record on {where}"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=reason)
    latest = attempt or runs[-1]
    if attempt is not None:
        reason = f"no completed run on current inputs; last attempt: {note}"
    else:
        reason = f"no completed run on record on {where}; last attempt: {attempt_note(latest)}"
    return ClaimStatus(
        **base, status="UNRUN", run_id=None, backend=latest.record.backend, reason=reason, last_attempt=note
    )


def _started(run: StoredRun) -> tuple[str, str]:
    return run.record.started_at, run.record.run_id


def claim_status(
    project: Project,
    chapter: ChapterLike,
    claim: Claim,
    runs: Iterable[StoredRun],
    evidence: dict[str, Evidence] | None = None,
) -> ClaimStatus:
    """`runs`: the chapter's runs, oldest first; `evidence`: `chapter_evidence` of them, when already known."""
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    if claim.kind == "reported":
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=claim.reason)
    runs = list(runs)
    evidence = chapter_evidence(project, chapter, runs) if evidence is None else evidence
    own = [item for backend, item in evidence.items() if can_check(claim, backend)]
    current = current_backends(project)
    said = [(_said(claim, item), item) for item in own]
    verdicts = tuple(_verdict(status, run_id, item.backend, item.backend in current) for (status, run_id), item in said)
    deciding = [status for (status, _), item in said if item.backend in current and item.decides]
    if not deciding:
        relevant = [run for run in runs if can_check(claim, run.record.backend)]
        where = "a backend that can check it (" + ", ".join(claim.backends) + ")"
        attempts = [item for item in own if item.backend in current]
        return _without_verdict(project, chapter, claim, relevant, where, attempts).model_copy(
            update={"backends": verdicts}
        )
    # max keeps the first of equals, so ties go to the stand-in, then the current Pi version
    worst = max(deciding, key=lambda status: _SEVERITY[status.status])
    return worst.model_copy(update={"backends": verdicts})


def backend_status(
    project: Project,
    chapter: ChapterLike,
    claim: Claim,
    runs: Iterable[StoredRun],
    backend: str,
    evidence: dict[str, Evidence] | None = None,
) -> ClaimStatus:
    """One backend's verdict alone (`pinb status --backend`), STALE or UNRUN when it has no completed current run."""
    base = {"claim_id": claim.id, "chapter": claim.chapter, "kind": claim.kind}
    if claim.kind == "reported":
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=None, reason=claim.reason)
    if not can_check(claim, backend):
        reason = f"{backend} cannot check it (it is checked on {', '.join(claim.backends)})"
        return ClaimStatus(**base, status="UNRUN", run_id=None, backend=backend, reason=reason)
    runs = list(runs)
    evidence = chapter_evidence(project, chapter, runs) if evidence is None else evidence
    item = evidence.get(backend)
    own = [run for run in runs if run.record.backend == backend]
    if item is None or not item.decides:
        status = _without_verdict(project, chapter, claim, own, backend, [item] if item else [])
        return status.model_copy(update={"backend": status.backend or backend})
    (said, run_id) = _said(claim, item)
    return said.model_copy(
        update={"backends": (_verdict(said, run_id, backend, backend in current_backends(project)),)}
    )


def chapter_statuses(
    project: Project, chapter: ChapterLike, runs: list[StoredRun], backend: str | None = None
) -> list[ClaimStatus]:
    """Every claim's status; with `backend`, that backend's verdict alone."""
    own = [run for run in runs if run.record.chapter == chapter.id]
    evidence = chapter_evidence(project, chapter, own)
    if backend is not None:
        return [backend_status(project, chapter, claim, own, backend, evidence) for claim in chapter.claims]
    return [claim_status(project, chapter, claim, own, evidence) for claim in chapter.claims]
