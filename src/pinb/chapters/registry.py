"""The chapters pinb knows, with their claim ledgers: the one entry point the kit discovers chapters through."""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from pinb.chapters import ch01, ch16
from pinb.chapters._claimspec import ClaimSpec

if TYPE_CHECKING:
    from pinb.kit.claims import Claim

_MODULES: tuple[ModuleType, ...] = (ch01, ch16)


class Chapter(BaseModel):
    """One chapter of the book and its ledger."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    id: str
    """The book's stable id, e.g. `pi-16-chapter`."""
    number: str
    """Two digits, e.g. `16`."""
    title: str
    notebook: str
    """Repository-relative path of the chapter's notebook."""
    text_fingerprint: str
    """sha256 of the chapter text the claims were quoted from (`pinb.kit.fingerprint`)."""
    claims: tuple[Claim, ...]


def _to_claim(chapter_id: str, spec: ClaimSpec) -> Claim:
    from pinb.kit.claims import Claim

    return Claim(
        id=spec.id,
        chapter=chapter_id,
        quote=spec.quote,
        location=spec.location,
        kind=spec.kind,
        reason=spec.reason,
        backends=spec.backends,
    )


def claim_specs(chapter_id: str) -> tuple[ClaimSpec, ...]:
    """The chapter's claims as written in its module (with the layer each experiment needs)."""
    for module in _MODULES:
        if chapter_id == module.CHAPTER_ID:
            return module.CLAIMS
    raise KeyError(chapter_id)


def claim_spec(claim_id: str) -> ClaimSpec:
    for module in _MODULES:
        for spec in module.CLAIMS:
            if spec.id == claim_id:
                return spec
    raise KeyError(claim_id)


@cache
def chapters() -> dict[str, Chapter]:
    """Every chapter by id, in book order."""
    from pinb.kit.claims import Claim

    Chapter.model_rebuild(_types_namespace={"Claim": Claim})
    return {
        module.CHAPTER_ID: Chapter(
            id=module.CHAPTER_ID,
            number=module.NUMBER,
            title=module.TITLE,
            notebook=module.NOTEBOOK,
            text_fingerprint=module.TEXT_FINGERPRINT,
            claims=tuple(_to_claim(module.CHAPTER_ID, spec) for spec in module.CLAIMS),
        )
        for module in _MODULES
    }


__all__ = ["Chapter", "chapters", "claim_spec", "claim_specs"]
