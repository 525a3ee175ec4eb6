"""Show the reader the counterfactual: what a claim's check would say had Pi behaved otherwise.

A notebook calls `attach(run, fault)` after it builds its `ChapterRun` when its `counterfactual` parameter is set
(off by default, so papermill and `pinb verify` never run it). Each later `await run.check(claim_id)` then also
re-judges the claim on the stand-in with one of the faults its ledger entry names switched on, and shows that
verdict under the real one. Nothing of it is recorded: the run record keeps only the real verdicts.
"""

from __future__ import annotations

import html
from typing import Any

from pinb.testing import faults
from pinb.testing.judges import Verdict, ajudge

#: `counterfactual = "first"` picks each claim's first named fault.
FIRST = "first"


def fault_for(claim_id: str, choice: str) -> str | None:
    """Which fault to show for this claim: its first named one (`first`), or `choice` when the claim names it."""
    from pinb.chapters.registry import claim

    named = claim(claim_id).faults
    if choice == FIRST:
        return named[0] if named else None
    return choice if choice in named else None


async def counterfactual(claim_id: str, choice: str = FIRST, knobs: dict[str, Any] | None = None) -> Verdict | None:
    """The claim's verdict on the stand-in under the chosen fault (None when the claim names no such fault)."""
    fault = fault_for(claim_id, choice)
    if fault is None:
        return None
    return await ajudge(claim_id, fault, knobs)


def render_html(verdict: Verdict) -> str:
    assert verdict.fault is not None
    deviation = faults.get(verdict.fault).deviation
    colour = "#1a7f37" if verdict.status != "OBSERVED" else "#cf222e"
    caught = "the check catches it" if verdict.status != "OBSERVED" else "the check does NOT catch it"
    return (
        f'<div class="pinb-counterfactual" style="border-left:4px dashed {colour};padding:2px 8px;margin-top:4px">'
        f"<b>Counterfactual</b> (not recorded; stand-in with fault <code>{html.escape(verdict.fault)}</code>: "
        f"{html.escape(deviation)}): this check would say <b>{verdict.status}</b> ({caught}): "
        f"{html.escape(verdict.evidence)}</div>"
    )


def render_text(verdict: Verdict) -> str:
    assert verdict.fault is not None
    return (
        f"counterfactual (not recorded; stand-in with fault {verdict.fault}: {faults.get(verdict.fault).deviation}): "
        f"{verdict.status}: {verdict.evidence}"
    )


def attach(run: Any, choice: str) -> None:
    """Make `run.check` also show each claim's counterfactual under `choice` (`first` or a fault name)."""
    if choice != FIRST:
        faults.get(choice)  # an unknown name is a one-line error now, not a silent no-op later
    check = run.check

    async def check_and_show(claim_id: str, *args: Any, **kwargs: Any) -> Any:
        observation = await check(claim_id, *args, **kwargs)
        verdict = await counterfactual(claim_id, choice, dict(run.knobs))
        if verdict is not None and verdict.status != "UNRUN":
            _display(verdict)
        return observation

    run.check = check_and_show


def _display(verdict: Verdict) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        print(render_text(verdict))
        return
    if get_ipython() is None:
        print(render_text(verdict))
    else:
        display(HTML(render_html(verdict)))


__all__ = ["FIRST", "attach", "counterfactual", "fault_for", "render_html", "render_text"]
