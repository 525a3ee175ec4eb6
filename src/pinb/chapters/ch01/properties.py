"""Every runnable claim of chapter 01 as a property, by experiment name.

`SCENARIO_PROPERTIES` run scenarios (their witnesses: the hand-written one and the family's); `FACT_PROPERTIES`
and `PROGRAM_PROPERTIES` run none: their witnesses are Pi releases, with the release's package facts or its run of
the book's program in `Witness.params` (`props_packages.facts_witness`, `props_packages.program_witness`).
`example.three-lines` has both: the book's program on the pi backend, its port on the stand-in.
"""

from __future__ import annotations

from pinb.chapters.ch01 import props_context, props_inputs, props_loop, props_session
from pinb.chapters.ch01.props_packages import FACT_PROPERTIES, PROGRAM_PROPERTIES, facts_witness, program_witness
from pinb.chapters.properties import Property

SCENARIO_PROPERTIES: dict[str, Property] = {
    **props_loop.PROPERTIES,
    **props_inputs.PROPERTIES,
    **props_context.PROPERTIES,
    **props_session.PROPERTIES,
}

__all__ = ["FACT_PROPERTIES", "PROGRAM_PROPERTIES", "SCENARIO_PROPERTIES", "facts_witness", "program_witness"]
