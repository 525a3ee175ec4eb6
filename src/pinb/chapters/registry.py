"""The chapters pinb knows, with their claim ledgers: the one entry point the kit discovers chapters through."""

from __future__ import annotations

from functools import cache
from types import ModuleType

from pinb.chapters import ch01, ch16
from pinb.chapters._claimspec import ClaimSpec
from pinb.kit.claims import Chapter, Claim

_MODULES: tuple[ModuleType, ...] = (ch01, ch16)


def _to_claim(chapter_id: str, spec: ClaimSpec) -> Claim:
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
