"""`pinb claims check-judges`: re-judge each runnable claim under each fault it names, on the stand-in, in memory.

A claim's judge is worth something only if its verdict would have changed had Pi behaved otherwise. Each runnable
claim names the faults (`pinb.testing.faults`, or its chapter folder's `faults.py`) that change its sentence's
truth; this check runs the claim's experiment once as is and once under each named fault.

The baseline is what real Pi said: the verdict recorded on the modelled Pi release (`pi@1.6.0`, from the run store
or the packaged snapshot). A sentence CONTRADICTED there is a finding, and the stand-in, modelling Pi, must say so
too with no fault on; a fault must then move the verdict away from that baseline (to OBSERVED, NOT EXERCISED or
ERROR). Where Pi has recorded nothing for the claim (a claim only the stand-in can check, a chapter not yet run on
Pi), the stand-in's own faultless verdict is the baseline, and the output says it is not confirmed on Pi. Every
fault must also move at least one claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pinb.backends import PI_MODELLED_VERSION
from pinb.claims import VERDICTS
from pinb.errors import UsageError
from pinb.testing import faults
from pinb.testing.judges import ajudge, standin_reason


def claim_faults(chapter_ids: Sequence[str] = ()) -> dict[str, tuple[str, ...]]:
    """Which faults each runnable claim names (the `faults` list of its ledger entry)."""
    from pinb.chapters.registry import chapters, claims

    return {
        claim.id: claim.faults
        for chapter_id in (chapter_ids or chapters())
        for claim in claims(chapter_id)
        if claim.kind == "runnable"
    }


@dataclass(frozen=True)
class FaultCheck:
    fault: str
    status: str
    caught: bool
    evidence: str


Recorded = Callable[[str], Mapping[str, Sequence[Mapping[str, Any]]]]
#: The Pi release whose recorded verdicts are the baselines.
BASELINE_BACKEND = f"pi@{PI_MODELLED_VERSION}"


def recorded_status(text: str) -> str:
    """`STALE (recorded OBSERVED (partial: …))` → `OBSERVED`: the verdict a recorded entry says, without its
    qualifiers (a verdict recorded on older inputs is still what that Pi did)."""
    text = text.removeprefix("STALE (recorded ").strip()
    return next((verdict for verdict in sorted(VERDICTS, key=len, reverse=True) if text.startswith(verdict)), text)


def pi_baselines(chapter_ids: Sequence[str], recorded: Recorded | None = None) -> dict[str, tuple[str, str]]:
    """Claim id → (the verdict recorded on the modelled Pi release, the run that says so), where one is recorded."""
    if recorded is None:
        from pinb.kit.recorded import recorded_verdicts

        recorded = recorded_verdicts
    found: dict[str, tuple[str, str]] = {}
    for chapter_id in chapter_ids:
        for claim_id, entries in recorded(chapter_id).items():
            for entry in entries:
                status = recorded_status(str(entry.get("status", "")))
                if entry.get("backend") == BASELINE_BACKEND and status in ("OBSERVED", "CONTRADICTED"):
                    found[claim_id] = (status, f"{BASELINE_BACKEND} run {entry.get('run_id')}")
    return found


@dataclass
class ClaimCheck:
    claim_id: str
    chapter: str
    baseline: str
    """The verdict a fault must move away from: real Pi's recorded one, else the stand-in's faultless one; UNRUN
    when the stand-in cannot run the claim."""
    reason: str = ""
    faults: list[FaultCheck] = field(default_factory=list)
    standin: str = ""
    """The stand-in's verdict with no fault on."""
    source: str = ""
    """Where the baseline comes from: `pi@1.6.0 run …`, or empty (the stand-in's own, not confirmed on Pi)."""

    def baseline_problem(self) -> str | None:
        if self.standin in ("ERROR", "NOT EXERCISED"):
            return f"{self.claim_id}: {self.standin} with no fault on ({self.reason})"
        if self.source and self.standin != self.baseline:
            return (
                f"{self.claim_id}: the stand-in says {self.standin} with no fault on, but real Pi said "
                f"{self.baseline} ({self.source}): {self.reason}"
            )
        return None


@dataclass
class JudgeReport:
    claims: list[ClaimCheck]
    all_chapters: bool

    def problems(self) -> list[str]:
        """Everything that makes the check fail, one line each (empty: every judge catches its faults)."""
        out: list[str] = []
        named: set[str] = set()
        caught: set[str] = set()
        for claim in self.claims:
            if claim.baseline == "UNRUN":
                continue
            problem = claim.baseline_problem()
            if problem is not None:
                out.append(problem)
            if not claim.faults:
                out.append(f"{claim.claim_id}: names no fault that must flip it")
            for check in claim.faults:
                named.add(check.fault)
                if check.caught:
                    caught.add(check.fault)
                else:
                    out.append(
                        f"{claim.claim_id}: still {check.status} (the baseline) under {check.fault} ({check.evidence})"
                    )
        for name in sorted(set(faults.FAULTS) - named if self.all_chapters else ()):
            out.append(f"fault {name} is named by no claim")
        for name in sorted(named - caught):
            out.append(f"fault {name} flips none of the claims that name it")
        return out

    def counts(self) -> dict[str, int]:
        judged = [c for c in self.claims if c.baseline != "UNRUN"]
        return {
            "runnable_claims": len(self.claims),
            "judged_on_standin": len(judged),
            "faults": len({f.fault for c in judged for f in c.faults}),
            "named": sum(len(c.faults) for c in judged),
            "catches": sum(f.caught for c in judged for f in c.faults),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "claims": [
                {
                    "claim_id": c.claim_id,
                    "chapter": c.chapter,
                    "baseline": c.baseline,
                    **({"reason": c.reason} if c.baseline == "UNRUN" else {}),
                    **({"standin": c.standin, "baseline_from": c.source or "standin"} if c.baseline != "UNRUN" else {}),
                    "faults": [{"fault": f.fault, "status": f.status, "caught": f.caught} for f in c.faults],
                }
                for c in self.claims
            ],
            "counts": self.counts(),
            "problems": self.problems(),
        }


async def acheck_judges(chapter_ids: Sequence[str] = (), recorded: Recorded | None = None) -> JudgeReport:
    """`recorded(chapter_id)`: the recorded verdicts the baselines come from (default: `pinb.kit.recorded`)."""
    from pinb.chapters.registry import chapters

    faults.load_chapter_faults()
    known = chapters()
    unknown = [c for c in chapter_ids if c not in known]
    if unknown:
        raise UsageError(f"unknown chapter {unknown[0]!r}; known: {', '.join(known)}")
    selected = list(chapter_ids) or list(known)
    table = claim_faults(selected)
    unknown_faults = {claim_id: [f for f in names if f not in faults.FAULTS] for claim_id, names in table.items()}
    for claim_id, names in unknown_faults.items():
        if names:
            raise UsageError(f"the ledger entry of {claim_id} names unknown fault(s): {', '.join(names)}")
    report = JudgeReport([], all_chapters=set(selected) == set(known))
    baselines = pi_baselines(selected, recorded)
    for chapter_id in selected:
        for claim in known[chapter_id].claims:
            if claim.kind != "runnable":
                continue
            reason = standin_reason(claim.id)
            if reason is not None:
                report.claims.append(ClaimCheck(claim.id, chapter_id, "UNRUN", reason))
                continue
            base = await ajudge(claim.id)
            baseline, source = (
                baselines.get(claim.id, (base.status, "")) if _same_on_pi(claim.id) else (base.status, "")
            )
            check = ClaimCheck(claim.id, chapter_id, baseline, base.evidence, standin=base.status, source=source)
            for name in table.get(claim.id, ()):
                verdict = await ajudge(claim.id, name)
                caught = verdict.status != baseline
                check.faults.append(FaultCheck(name, verdict.status, caught, verdict.evidence))
            report.claims.append(check)
    return report


def _same_on_pi(claim_id: str) -> bool:
    """Whether real Pi ran the experiment the stand-in runs (not so for the book's TypeScript program, which Node
    runs as printed while the stand-in runs its port): only then is Pi's verdict the stand-in's baseline."""
    from pinb.chapters.registry import claim

    experiment = claim(claim_id).experiment
    return experiment is not None and experiment.on("pi") is experiment.on("standin")


def render_text(report: JudgeReport) -> str:
    lines = []
    for claim in report.claims:
        if claim.baseline == "UNRUN":
            lines.append(f"  – {claim.claim_id}: not judged on the stand-in ({claim.reason})")
            continue
        caught = [f.fault for f in claim.faults if f.caught]
        whole = claim.faults and len(caught) == len(claim.faults) and claim.baseline_problem() is None
        detail = ", ".join(f"{f.fault} → {f.status}" for f in claim.faults) or "no fault named"
        source = claim.source or "the stand-in, not confirmed on Pi"
        finding = " (a finding)" if claim.baseline == "CONTRADICTED" else ""
        lines.append(
            f"{'✔' if whole else '✘'} {claim.claim_id}: baseline {claim.baseline}{finding} from {source}; "
            f"caught {len(caught)}/{len(claim.faults)} ({detail})"
        )
    counts = report.counts()
    lines.append(
        f"{counts['runnable_claims']} runnable claims, {counts['judged_on_standin']} judged on the stand-in under "
        f"{counts['faults']} faults: {counts['catches']} of {counts['named']} named faults caught"
    )
    problems = report.problems()
    lines.extend(f"problem: {p}" for p in problems)
    return "\n".join(lines)


__all__ = ["JudgeReport", "acheck_judges", "claim_faults", "pi_baselines", "recorded_status", "render_text"]
