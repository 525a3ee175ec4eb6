"""Chapter 16's runnable claims as properties, by experiment name (the ledger's `experiment`).

Each property states its sentence over any witness: a premise (does the witness exercise it?), an expected value
from the witness's own scenarios or the chapter's text, the observed value from the traces, and a family of
generated witnesses (hypothesis) over the domain the sentence quantifies over. The modules split them by topic:
`props_dispatch` (how events dispatch), `props_guard` (the review guard), `props_settle` (boundaries and
settlement), `props_events` (the run's shape and the events table).
"""

from __future__ import annotations

from pinb.chapters.ch16 import props_dispatch, props_events, props_guard, props_settle
from pinb.chapters.properties import Property

PROPERTIES: dict[str, Property] = {
    **props_dispatch.PROPERTIES,
    **props_guard.PROPERTIES,
    **props_settle.PROPERTIES,
    **props_events.PROPERTIES,
}

__all__ = ["PROPERTIES"]
