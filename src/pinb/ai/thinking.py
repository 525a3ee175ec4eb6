"""Thinking levels as pi-ai 1.6.0 clamps them (``getSupportedThinkingLevels``, ``clampThinkingLevel``)."""

from __future__ import annotations

from pinb.ai.types import Model

#: pi-ai's ``EXTENDED_THINKING_LEVELS``, weakest first.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def supported_thinking_levels(model: Model) -> tuple[str, ...]:
    """A model without reasoning supports only ``off``; one with reasoning every level up to ``high`` (``xhigh`` and
    ``max`` need an entry in the model's thinking-level map, which pinb's models never have)."""
    if not model.reasoning:
        return ("off",)
    return tuple(level for level in THINKING_LEVELS if level not in ("xhigh", "max"))


def clamp_thinking_level(model: Model, level: str) -> str:
    """The level itself when supported; else the nearest supported level above it, else the nearest below."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0]
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if candidate in available:
            return candidate
    return available[0]
