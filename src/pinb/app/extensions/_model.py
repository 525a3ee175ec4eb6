"""The base model of extension events, results and boundary drafts: pinb.ai's record base, plus live objects."""

from __future__ import annotations

from pydantic import ConfigDict

from pinb.ai.types import PiRecord


class PiModel(PiRecord):
    """Frozen, strict about unknown fields, camelCase aliases; containers stay mutable where Pi mutates in place.

    Pi lets handlers edit ``event.input`` (``tool_call``) and ``event.messages`` (``context``) in place; a frozen
    model with a ``dict``/``list`` field allows exactly that and nothing else. Live objects (an abort signal) are
    allowed as field values.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def to_json_dict(self) -> dict:
        """Pi's JSON shape of this object (camelCase keys, absent fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
