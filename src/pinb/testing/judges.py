"""Judge one claim in memory on the stand-in, with or without a fault switched on: no notebook, no run record.

This is what `pinb claims check-judges` and a notebook's counterfactual view use. It checks the claim through the
notebook's own path (`ChapterRun.observe`) on the `standin` backend (default knobs unless given) and returns the
verdict instead of recording it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pinb._async import run_sync
from pinb.testing import faults

Status = Literal["OBSERVED", "CONTRADICTED", "NOT EXERCISED", "ERROR", "UNRUN"]


@dataclass(frozen=True)
class Verdict:
    """What the claim's judge said on the stand-in (UNRUN: the stand-in cannot check it, with the reason)."""

    claim_id: str
    status: Status
    evidence: str
    fault: str | None = None
    result: Any = None
    """A property claim's `pinb.chapters.witnesses.PropertyResult` (its witnesses, its counterexample)."""


def standin_reason(claim_id: str) -> str | None:
    """Why the stand-in cannot check this claim (None when it can)."""
    from pinb.chapters.registry import claim

    return claim(claim_id).unrun("standin")


async def ajudge(
    claim_id: str, fault: str | None = None, knobs: Mapping[str, Any] | None = None, witnesses: int = 0
) -> Verdict:
    """The claim's verdict on the stand-in, under `fault` when one is named (on its hand-written witness and
    `witnesses` seeded generated ones)."""
    if fault is None:
        return await _judge(claim_id, knobs, None, witnesses)
    with faults.injected(fault):
        return await _judge(claim_id, knobs, fault, witnesses)


def judge(
    claim_id: str, fault: str | None = None, knobs: Mapping[str, Any] | None = None, witnesses: int = 0
) -> Verdict:
    """`ajudge` for code outside an event loop."""
    return run_sync(ajudge(claim_id, fault, knobs, witnesses))


async def _judge(claim_id: str, knobs: Mapping[str, Any] | None, fault: str | None, witnesses: int) -> Verdict:
    """The notebook's own path (`ChapterRun.observe`) on the stand-in, recording nothing."""
    from pinb.chapters.experiments import ChapterRun
    from pinb.chapters.registry import claim

    found = claim(claim_id)
    run = ChapterRun(found.chapter, "standin", knobs=knobs, witnesses=witnesses, notebook=False)
    observation = await run.observe(found)
    if observation.unrun is not None:
        return Verdict(claim_id, "UNRUN", observation.unrun, fault)
    if observation.error is not None:  # a fault may break the experiment itself: an ERROR, as in a notebook
        return Verdict(claim_id, "ERROR", f"{type(observation.error).__name__}: {observation.error}", fault)
    result = observation.result
    assert result is not None
    return Verdict(claim_id, result.status, result.evidence, fault, result)


__all__ = ["Verdict", "ajudge", "judge", "standin_reason"]
