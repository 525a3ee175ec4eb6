"""An integer beyond the double range is Infinity in JavaScript, not an error.

A scenario's tool-call argument ``1`` followed by 400 zeros made the stand-in's faux provider fail with Python's
"int too large to convert to float" (the reply became an error) where real Pi reads the literal as Infinity, runs
the tool and writes ``null`` for it. Observed with ``pinb scenario run --backend pi`` on Pi 1.6.0: the second
model request carries the call's arguments as ``{"n":null,"small":12345678901234567000}`` and the tool result
``stored`` (not a corpus scenario: recorded traces never hold null).
"""

from __future__ import annotations

from pinb.ai.jsjson import js_stringify
from pinb.app.js_compat import json_stringify
from pinb.scenario.model import parse_scenario
from pinb.scenario.standin import run_on_standin


def test_stringify_writes_null_for_an_integer_beyond_the_double_range() -> None:
    assert json_stringify({"n": 10**400, "m": -(10**400)}) == '{"n":null,"m":null}'
    assert js_stringify(10**400) == "null"


def test_the_run_goes_on_as_on_real_pi() -> None:
    scenario = parse_scenario(
        {
            "id": "number-beyond-double",
            "layer": "agent",
            "prompt": "Store the big number.",
            "tools": [{"name": "store", "behavior": {"kind": "return", "text": "stored"}}],
            "responses": [
                {
                    "content": [
                        {
                            "type": "toolCall",
                            "name": "store",
                            "arguments": {"n": 10**400, "small": 12345678901234567890},
                        }
                    ],
                    "stopReason": "toolUse",
                },
                {"content": [{"type": "text", "text": "Stored."}]},
            ],
        }
    )
    lines = run_on_standin(scenario)
    requests = [line for line in lines if line["source"] == "model"]
    args = requests[1]["messages"][2]["toolCalls"][0]["args"]
    assert json_stringify(args) == '{"n":null,"small":12345678901234567000}'
    assert requests[1]["messages"][3] == {
        "role": "toolResult",
        "toolCallId": "call#1",
        "isError": False,
        "text": "stored",
    }
