"""Test-only tools: named faults in the stand-in, and a check that every runnable claim's judge catches them.

Nothing in `pinb.ai`, `pinb.agent`, `pinb.app`, `pinb.scenario`, `pinb.chapters` or `pinb.kit` imports this
package; the stand-in's layers read only `pinb._faults.ACTIVE`, which stays empty unless a fault is switched on here.
"""
