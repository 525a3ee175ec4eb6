"""A traced run of N tool-call turns took time quadratic in N: every model line summarised (and serialised) every
message of its context again, and on the application layer the faux usage estimate measured every message of every
request again. Each message is now summarised and measured once; this counts the calls, on both layers."""

from __future__ import annotations

from typing import Any

import pytest

from pinb.ai import faux
from pinb.scenario import trace
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin

TURNS = 40


def scenario(layer: str) -> Any:
    calls = [
        {"content": [{"type": "toolCall", "name": "word_count", "arguments": {"text": f"turn {i}"}}],
         "stopReason": "toolUse"}
        for i in range(TURNS - 1)
    ]  # fmt: skip
    return parse_scenario(
        {
            "id": f"long-{layer}",
            "description": "one word_count call a turn",
            "layer": layer,
            "prompt": "Count.",
            "tools": [{"name": "word_count", "behavior": {"kind": "word_count"}}],
            "responses": [*calls, {"content": [{"type": "text", "text": "done"}], "stopReason": "stop"}],
        }
    )


@pytest.mark.parametrize("layer", ["agent", "app"])
def test_each_context_message_is_summarised_and_measured_once(monkeypatch: pytest.MonkeyPatch, layer: str) -> None:
    counts = {"summarised": 0, "measured": 0}

    def counting(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(trace, "model_message", counting("summarised", trace.model_message))
    monkeypatch.setattr(faux, "_entry_text", counting("measured", faux._entry_text))
    lines = run_on_standin(scenario(layer))
    requests = [line for line in lines if line["source"] == "model"]
    assert len(requests) == TURNS
    largest = len(requests[-1]["messages"])  # every message the run sent, each once
    carried = sum(len(line["messages"]) for line in requests)  # what re-summarising every request would cost
    assert carried > 10 * largest
    assert counts["summarised"] <= largest
    assert counts["measured"] <= largest
