"""Claim data as the chapters write it, before it becomes the kit's `Claim`.

Chapters keep their ledgers as plain specs so that the list reads like the chapter it quotes; the registry turns
each spec into a `pinb.kit.claims.Claim`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["runnable", "reported"]
Layer = Literal["agent", "app", "package", "none"]

BOTH: tuple[str, ...] = ("standin", "pi")
STANDIN: tuple[str, ...] = ("standin",)
PI: tuple[str, ...] = ("pi",)

FORK_REASON = "reported from one fork's change records; nothing here can run them"
TUI_REASON = "behaviour only Pi's interactive terminal UI shows; the scenarios drive sessions without a terminal"
DESIGN_REASON = "the book's proposed design argument, not a behaviour a program can observe"
DOCS_REASON = "a statement about Pi's documentation; pinb checks behaviour, not the wording of documents"
XREF_REASON = "refers to another chapter's material, which is outside this text"


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a chapter: the quoted sentence(s), where they are, and who can check them.

    `layer` is which part of Pi the experiment needs: `agent` (pi-agent-core alone), `app` (a coding-agent
    session), `package` (facts about the published packages) or `none` (reported claims).
    """

    id: str
    quote: str
    location: str
    kind: Kind = "runnable"
    backends: tuple[str, ...] = BOTH
    layer: Layer = "app"
    reason: str = ""
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind == "reported" and not self.reason:
            raise ValueError(f"reported claim {self.id} needs a reason")
        if self.kind == "reported" and self.backends:
            raise ValueError(f"reported claim {self.id} cannot name backends")


def reported(id: str, quote: str, location: str, reason: str) -> ClaimSpec:
    return ClaimSpec(id=id, quote=quote, location=location, kind="reported", backends=(), layer="none", reason=reason)
