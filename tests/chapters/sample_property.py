"""A sample property for the framework's tests (a fixture, not a chapter's claim): "when several extensions handle
the same event, their handlers run in load order, and within one extension in registration order"."""

from __future__ import annotations

from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Params, Premise, Property, Scenarios, Witness, st

EVENT = "tool_call"


def order_scenario(shape: list[int], event: str = EVENT) -> dict[str, Any]:
    """Extension `e1` … with `shape[i]` handlers each, labelled `<ext><n>` (`e1h1`, `e1h2`, `e2h1` …)."""
    extensions = [
        sc.extension(f"e{i}", *(sc.handler(event, f"e{i}h{j}") for j in range(1, count + 1)))
        for i, count in enumerate(shape, 1)
    ]
    return sc.app(
        "sample-order",
        "Go.",
        [sc.calls(sc.call("bash", {"command": "ls"})), sc.text("ok")],
        tools=[sc.bash_tool()],
        extensions=extensions,
    )


def hand(params: Params) -> Scenarios:
    return {"order": order_scenario([2, 1, 1])}


def _handlers(witness: Witness) -> list[str]:
    """The scenario's own handlers of the event, in load order then registration order (its inputs, not Pi's)."""
    return [
        handler["label"]
        for extension in witness.scenarios["order"].get("extensions", ())
        for handler in extension["handlers"]
        if handler["event"] == EVENT
    ]


def premise(witness: Witness) -> Premise:
    owners = {
        extension["name"]
        for extension in witness.scenarios["order"].get("extensions", ())
        if any(handler["event"] == EVENT for handler in extension["handlers"])
    }
    says = f"{EVENT}: {len(_handlers(witness))} handlers in {len(owners)} extensions"
    return Premise(len(owners) >= 2, says)


def observed(witness: Witness) -> list[str]:
    return [line.get("handler") for line in tq.ext_lines(witness.traces["order"], EVENT)]


def family(params: Params) -> st.SearchStrategy[Scenarios]:
    return st.lists(st.integers(1, 3), min_size=1, max_size=4).map(lambda shape: {"order": order_scenario(shape)})


LOAD_ORDER = Property(hand=hand, premise=premise, expected=_handlers, observed=observed, family=family)


def _reversed(witness: Witness) -> list[str]:
    return list(reversed(_handlers(witness)))


#: A property that is false of Pi whenever two handlers exist: the sentence "the last-loaded handler runs first".
LAST_FIRST = Property(hand=hand, premise=premise, expected=_reversed, observed=observed, family=family)
