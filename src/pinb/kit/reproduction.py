"""Did the committed outcomes reproduce? One line per chapter and backend after `pinb verify`, and the notes
`pinb status` prints where this machine's environment differs from the one a counted run was recorded in.
"""

from __future__ import annotations

from collections.abc import Iterable

from pinb.kit.store import StoredRun

_SHOWN = 4


def verify_line(
    new: StoredRun | None, previous: StoredRun | None, *, cached: bool = False, error: str | None = None
) -> str:
    """What one chapter's verify established on one backend, compared with the run that stood before it."""
    if error is not None or new is None:
        return f"not run: {error or 'no run'}"
    record = new.record
    if cached:
        return f"unchanged since run {record.run_id} in this environment; not re-run (use --force to run it again)"
    if record.status != "completed" or new.problem:
        why = new.problem or f"{record.status}: {record.failure or 'no detail'}"
        stand = f"the outcomes of run {previous.record.run_id} stand" if previous else "no completed run to count"
        seen = f"; it recorded {len(record.claims)} outcome(s) before it stopped (not counted)" if record.claims else ""
        return f"run {record.run_id} {why}{seen}; {stand}"
    if previous is None:
        return f"run {record.run_id} recorded {len(record.claims)} outcome(s); no earlier completed run to compare with"
    before = {outcome.claim_id: outcome.outcome for outcome in previous.record.claims}
    now = {outcome.claim_id: outcome.outcome for outcome in record.claims}
    ids = list(dict.fromkeys([*before, *now]))
    differ = [
        f"{claim_id} {before.get(claim_id, 'unchecked')} → {now.get(claim_id, 'unchecked')}"
        for claim_id in ids
        if before.get(claim_id) != now.get(claim_id)
    ]
    old = previous.record.run_id
    text = f"{len(ids) - len(differ)}/{len(ids)} outcomes reproduce run {old}"
    if previous.record.inputs.environment:
        changes = previous.record.inputs.environment_differences(record.inputs)
        if changes:
            text += f" (recorded with {_some(changes)})"
    else:
        text += f" (run {old} does not record its environment)"
    if not previous.record.inputs.same_content(record.inputs):
        text += f"; run {old} was on older inputs ({'; '.join(previous.record.inputs.differences(record.inputs))})"
    if differ:
        text += f"; differ: {_some(differ)}"
    return f"run {record.run_id}: {text}"


def environment_notes(counted: Iterable[StoredRun], here: dict[str, str]) -> list[str]:
    """One line per counted run whose recorded environment differs from `here` in the entries `here` names."""
    notes = []
    for run in counted:
        record = run.record
        where = f"{record.chapter} on {record.backend}"
        recorded = record.inputs.environment
        if not recorded:
            notes.append(
                f"{where}: run {record.run_id} does not record its environment; "
                f"`pinb verify {record.chapter}` checks whether its outcomes reproduce here"
            )
            continue
        changes = [
            f"{name} {recorded.get(name, 'unknown')} (here {value})"
            for name, value in here.items()
            if recorded.get(name) != value
        ]
        if changes:
            notes.append(
                f"{where}: run {record.run_id} was recorded with {_some(changes)}; "
                f"`pinb verify {record.chapter}` checks whether its outcomes reproduce here"
            )
    return notes


def _some(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown if len(items) <= _SHOWN else f"{shown} and {len(items) - _SHOWN} more"
