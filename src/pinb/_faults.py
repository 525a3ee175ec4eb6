"""Which named faults are switched on: the only piece of the fault switchboard the stand-in's layers read.

Empty (the stand-in behaves as Pi) unless `pinb.testing.faults` turns one on for a test. Layers test membership
at a few seams (`"name" in ACTIVE`); with nothing on that is one lookup in an empty frozenset.
"""

from __future__ import annotations

ACTIVE: frozenset[str] = frozenset()
