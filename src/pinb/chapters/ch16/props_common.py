"""What chapter 16's properties share: reading a witness (its scenarios and traces), the run every generated
dispatch witness drives, and hypothesis strategies for extensions and handlers.

Nothing here imports the stand-in's code under test (`pinb.ai`, `pinb.agent`, `pinb.app`): expected values come
from the scenarios and the chapter's text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pinb.chapters import scenarios as sc
from pinb.chapters import tq
from pinb.chapters.properties import Premise, Witness, st

Trace = list[dict[str, Any]]

#: Extension events a plain app run (a prompt, one tool call, a text answer) dispatches to handlers, in the order
#: the run first reaches them. A witness over "all handlers" draws from these.
RUN_EVENTS: tuple[str, ...] = (
    "session_start",
    "resources_discover",
    "input",
    "before_agent_start",
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "message_end",
    "context",
    "tool_execution_start",
    "tool_call",
    "tool_result",
    "tool_execution_end",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "agent_settled",
)
#: Events a plain run dispatches whose declared result is nothing: Pi 1.6.0's `pi.on` overloads
#: (`dist/core/extensions/types.d.ts`) give them `ExtensionHandler<Event>` with no result type. A handler's return
#: value must have no effect there.
NOTIFY_ONLY_EVENTS: tuple[str, ...] = (
    "session_start",
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "tool_execution_start",
    "tool_execution_end",
    "agent_end",
    "agent_settled",
)
#: Names an extension may have; drawn in any order, so load order and alphabetical order differ.
EXTENSION_NAMES: tuple[str, ...] = ("zeta", "alpha", "mid", "beta", "omega", "kappa", "delta", "nu")
TOOL_OUTPUT = "listed"


# --- reading a witness ---------------------------------------------------------------------------------------------


def scenario(w: Witness, name: str | None = None) -> Mapping[str, Any]:
    """The witness's scenario `name` (default: its only or first one)."""
    if name is None:
        return next(iter(w.scenarios.values()), {})
    return w.scenarios.get(name, {})


def trace(w: Witness, name: str | None = None) -> Trace:
    if name is None:
        return list(next(iter(w.traces.values()), []))
    return list(w.traces.get(name, []))


def handlers(s: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(extension name, handler) in load order, then registration order: what the scenario declares."""
    return [(ext["name"], h) for ext in s.get("extensions", ()) for h in ext.get("handlers", ())]


def declared_order(s: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per event: the labels of its handlers in extension load order, then registration order within each."""
    order: dict[str, list[str]] = {}
    for _ext, h in handlers(s):
        order.setdefault(h["event"], []).append(str(h.get("label")))
    return order


def dispatches(lines: Iterable[Mapping[str, Any]]) -> dict[str, list[list[str]]]:
    """Per event: the handler labels of each dispatch, in the order their lines were written.

    A dispatch is the run of `ext` lines of one event and one tool call. Dispatches of one event for parallel tool
    calls overlap (Pi awaits each handler, and each await lets the other call's dispatch go on), so an ext line of
    the same event for another call does not end it; any other line — another source, or an ext line of another
    event — ends every open dispatch, and so does a handler that already ran in it. A handler's line is written
    when it returns, so a handler that was not awaited shows up outside its dispatch."""
    out: dict[str, list[list[str]]] = {}
    open_: dict[tuple[Any, Any], list[str]] = {}
    for line in lines:
        event = line.get("type")
        if line.get("source") != "ext" or any(key[0] != event for key in open_):
            open_ = {}
        if line.get("source") != "ext":
            continue
        key, label = (event, line.get("toolCallId")), str(line.get("handler"))
        group = open_.get(key)
        if group is None or label in group:
            group = open_[key] = []
            out.setdefault(str(event), []).append(group)
        group.append(label)
    return out


def tool_results(lines: Trace) -> list[tuple[Any, Any, Any]]:
    """(toolName, text, isError) of each tool result the session listener saw, in order."""
    return [
        (ln.get("toolName"), ln.get("text"), ln.get("isError"))
        for ln in tq.events(lines, "tool_execution_end", "session")
    ]


def replies(lines: Trace) -> list[Any]:
    return [ln.get("text") for ln in tq.assistant_ends(lines)]


def response_texts(s: Mapping[str, Any]) -> list[str]:
    """The text of each scripted response (tool calls have their preface, or an empty text)."""
    return ["".join(b.get("text", "") for b in r.get("content", ()) if b.get("type") == "text") for r in s["responses"]]


def requests_until_stop(s: Mapping[str, Any]) -> int:
    """How many scripted responses a plain run consumes: up to the first that does not ask for tools."""
    for n, response in enumerate(s["responses"], 1):
        if response.get("stopReason") != "toolUse":
            return n
    return len(s["responses"])


# --- the run a generated witness drives ----------------------------------------------------------------------------


def plain_run(
    id_: str,
    extensions: Sequence[dict[str, Any]],
    *,
    commands: Sequence[str] = ("ls",),
    parallel: bool = True,
    spare_reply: bool = False,
) -> dict[str, Any]:
    """A prompt, one batch of bash calls, a text answer (and, with `spare_reply`, one more scripted reply a run that
    stopped as it should never asks for)."""
    responses = [sc.calls(*(sc.call("bash", {"command": c}) for c in commands)), sc.text("Done.")]
    if spare_reply:
        responses.append(sc.text("never asked for"))
    return sc.app(
        id_,
        "Go.",
        responses,
        tools=[sc.bash_tool(stdout=TOOL_OUTPUT)],
        extensions=list(extensions),
        settings={"tool_execution": "parallel" if parallel else "sequential"},
    )


@st.composite
def extension_sets(
    draw: st.DrawFn,
    events: Sequence[str],
    action: Callable[[str], dict[str, Any]] | None = None,
    min_extensions: int = 1,
) -> list[dict[str, Any]]:
    """1–4 extensions with distinct names in any order, 1–3 handlers each, every handler on one of `events` (a few
    events at most, so handlers share them). `action(event)` builds a handler's action (default: record)."""
    names = draw(st.lists(st.sampled_from(EXTENSION_NAMES), min_size=min_extensions, max_size=4, unique=True))
    shared = draw(st.lists(st.sampled_from(list(events)), min_size=1, max_size=3, unique=True))
    out = []
    for name in names:
        count = draw(st.integers(1, 3))
        # Every extension's first handler is on the first shared event, so even the simplest draw has an event
        # with handlers in several extensions.
        chosen = [shared[0], *(draw(st.sampled_from(shared)) for _ in range(count - 1))]
        out.append(
            {
                "name": name,
                "handlers": [
                    {"event": e, "label": f"{name}{i + 1}", "action": action(e) if action else {"kind": "record"}}
                    for i, e in enumerate(chosen)
                ],
            }
        )
    return out


def shared_events(s: Mapping[str, Any], dispatched: Mapping[str, Any] | None = None) -> dict[str, set[str]]:
    """Events with at least two handlers (and, given the dispatches, that were dispatched): event → extensions."""
    owners: dict[str, list[str]] = {}
    for ext, h in handlers(s):
        owners.setdefault(h["event"], []).append(ext)
    return {
        event: set(exts)
        for event, exts in owners.items()
        if len(exts) >= 2 and (dispatched is None or dispatched.get(event))
    }


def premise(holds: bool, yes: str, no: str) -> Premise:
    return Premise(holds, yes if holds else no)


__all__ = [
    "EXTENSION_NAMES",
    "NOTIFY_ONLY_EVENTS",
    "RUN_EVENTS",
    "TOOL_OUTPUT",
    "declared_order",
    "dispatches",
    "extension_sets",
    "handlers",
    "plain_run",
    "premise",
    "replies",
    "requests_until_stop",
    "response_texts",
    "scenario",
    "shared_events",
    "tool_results",
    "trace",
]
