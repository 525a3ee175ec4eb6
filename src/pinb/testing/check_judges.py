"""`pinb claims check-judges`: re-judge each runnable claim under each fault it names, on the stand-in, in memory.

A claim's judge is worth something only if it would have said CONTRADICTED had Pi behaved otherwise. Each runnable
claim names the faults (`pinb.testing.faults`) that contradict its sentence; this check runs the claim's
experiment once as is (it must be OBSERVED) and once under each named fault (each must turn it CONTRADICTED, or
ERROR where the fault breaks the experiment itself). Every fault must also catch out at least one claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pinb.errors import UsageError
from pinb.testing import faults
from pinb.testing.judges import ajudge, standin_reason


def claim_faults(chapter_ids: Sequence[str] = ()) -> dict[str, tuple[str, ...]]:
    """Which faults each runnable claim names (the `faults` list of its ledger entry)."""
    from pinb.chapters.registry import chapters, claim_specs

    return {
        spec.id: tuple(spec.faults)
        for chapter_id in (chapter_ids or chapters())
        for spec in claim_specs(chapter_id)
        if spec.kind == "runnable"
    }


@dataclass(frozen=True)
class FaultCheck:
    fault: str
    status: str
    caught: bool
    evidence: str


@dataclass
class ClaimCheck:
    claim_id: str
    chapter: str
    baseline: str
    """The verdict with no fault on (OBSERVED for a judge worth checking); UNRUN when the stand-in cannot run it."""
    reason: str = ""
    faults: list[FaultCheck] = field(default_factory=list)


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
            if claim.baseline != "OBSERVED":
                out.append(f"{claim.claim_id}: {claim.baseline} with no fault on ({claim.reason})")
            if not claim.faults:
                out.append(f"{claim.claim_id}: names no fault that must flip it")
            for check in claim.faults:
                named.add(check.fault)
                if check.caught:
                    caught.add(check.fault)
                else:
                    out.append(f"{claim.claim_id}: still {check.status} under {check.fault} ({check.evidence})")
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
                    "faults": [{"fault": f.fault, "status": f.status, "caught": f.caught} for f in c.faults],
                }
                for c in self.claims
            ],
            "counts": self.counts(),
            "problems": self.problems(),
        }


async def acheck_judges(chapter_ids: Sequence[str] = ()) -> JudgeReport:
    from pinb.chapters.registry import chapters

    known = chapters()
    unknown = [c for c in chapter_ids if c not in known]
    if unknown:
        raise UsageError(f"unknown chapter {unknown[0]!r}; known: {', '.join(known)}")
    selected = list(chapter_ids) or list(known)
    table = claim_faults(selected)
    unknown_faults = {claim: [f for f in names if f not in faults.FAULTS] for claim, names in table.items()}
    for claim, names in unknown_faults.items():
        if names:
            raise UsageError(f"the ledger entry of {claim} names unknown fault(s): {', '.join(names)}")
    report = JudgeReport([], all_chapters=set(selected) == set(known))
    for chapter_id in selected:
        for claim in known[chapter_id].claims:
            if claim.kind != "runnable":
                continue
            reason = standin_reason(claim.id)
            if reason is not None:
                report.claims.append(ClaimCheck(claim.id, chapter_id, "UNRUN", reason))
                continue
            base = await ajudge(claim.id)
            check = ClaimCheck(claim.id, chapter_id, base.status, base.evidence)
            for name in table.get(claim.id, ()):
                verdict = await ajudge(claim.id, name)
                caught = verdict.status in ("CONTRADICTED", "ERROR")
                check.faults.append(FaultCheck(name, verdict.status, caught, verdict.evidence))
            report.claims.append(check)
    return report


def render_text(report: JudgeReport) -> str:
    lines = []
    for claim in report.claims:
        if claim.baseline == "UNRUN":
            lines.append(f"  – {claim.claim_id}: not judged on the stand-in ({claim.reason})")
            continue
        caught = [f.fault for f in claim.faults if f.caught]
        mark = "✔" if claim.faults and len(caught) == len(claim.faults) and claim.baseline == "OBSERVED" else "✘"
        detail = ", ".join(f"{f.fault} → {f.status}" for f in claim.faults) or "no fault named"
        lines.append(f"{mark} {claim.claim_id}: caught {len(caught)}/{len(claim.faults)} ({detail})")
    counts = report.counts()
    lines.append(
        f"{counts['runnable_claims']} runnable claims, {counts['judged_on_standin']} judged on the stand-in under "
        f"{counts['faults']} faults: {counts['catches']} of {counts['named']} named faults caught"
    )
    problems = report.problems()
    lines.extend(f"problem: {p}" for p in problems)
    return "\n".join(lines)


__all__ = ["JudgeReport", "acheck_judges", "claim_faults", "render_text"]
