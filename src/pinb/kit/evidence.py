"""The claim outcomes an executed notebook emitted, read from its pinb outputs.

The executed notebook is the evidence; a run record's `claims` are an index of it. Recording a run and verifying
a recorded one both read the notebook through `notebook_outcomes`, so the two can only agree or disagree, never
read it differently. Plain `json`, no Jupyter imports: `pinb status` verifies every run it counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pinb.files import NOTEBOOK_LIMIT, FileError, read_bytes
from pinb.kit.claims import CLAIM_MIME, ClaimOutcome
from pinb.kit.record import MALFORMED_OUTPUT, UNREADABLE_NOTEBOOK


class UnreadableNotebook(Exception):
    """The file is not a notebook: not UTF-8 JSON, or no `cells` list."""


def load_notebook(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_bytes(path, limit=NOTEBOOK_LIMIT, what="executed notebook").decode("utf-8"))
    except FileError as exc:
        raise UnreadableNotebook(str(exc)) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UnreadableNotebook(_one_line(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UnreadableNotebook("no 'cells' list")
    return data


def notebook_outcomes(
    executed: Path, backend: str, known_claims: frozenset[str] = frozenset()
) -> tuple[tuple[ClaimOutcome, ...], tuple[str, ...]]:
    """Every pinb claim output of an executed notebook, in order, and the warnings met reading them."""
    try:
        nb = load_notebook(executed)
    except UnreadableNotebook as exc:
        return (), (f"{UNREADABLE_NOTEBOOK}: {exc}",)
    return outcomes_in(nb, backend, known_claims)


def outcomes_in(
    nb: dict[str, Any], backend: str, known_claims: frozenset[str] = frozenset()
) -> tuple[tuple[ClaimOutcome, ...], tuple[str, ...]]:
    warnings: list[str] = []
    outcomes: list[ClaimOutcome] = []
    for index, cell in enumerate(nb["cells"]):
        outputs = cell.get("outputs", []) if isinstance(cell, dict) else []
        for output in outputs if isinstance(outputs, list) else []:
            data = output.get("data", {}) if isinstance(output, dict) else {}
            if not isinstance(data, dict) or CLAIM_MIME not in data:
                continue
            raw = data[CLAIM_MIME]
            try:
                outcome = ClaimOutcome.model_validate(json.loads(raw) if isinstance(raw, str) else raw)
            except (ValidationError, ValueError) as exc:
                warnings.append(f"cell {index}: {MALFORMED_OUTPUT}: {_one_line(exc)}")
                continue
            outcomes.append(bind_backend(outcome, backend))
            if known_claims and outcome.claim_id not in known_claims:
                warnings.append(f"cell {index}: claim {outcome.claim_id} is not registered for this chapter")
    return tuple(outcomes), tuple(warnings)


def bind_backend(outcome: ClaimOutcome, backend: str) -> ClaimOutcome:
    """The outcome on the run's backend; a notebook that says it ran elsewhere turns it into an error."""
    if outcome.backend is None:
        return outcome.model_copy(update={"backend": backend})
    if outcome.backend != backend:
        return ClaimOutcome(
            claim_id=outcome.claim_id,
            outcome="error",
            evidence=f"the notebook reported backend {outcome.backend} but ran with {backend}",
            detail=f"recorded {outcome.outcome}: {outcome.evidence}",
            backend=backend,
        )
    return outcome


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
