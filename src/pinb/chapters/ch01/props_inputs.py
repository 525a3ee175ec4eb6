"""Chapter 01's request-input sentences as properties: the four inputs, the table's rows, and the request that is
assembled from parts.

Witnesses are sets of app-layer scenarios that differ in one input at a time (an injected sentence, one more tool,
another system prompt, another model or thinking level); the expected request parts are read from the scenarios'
own fields, the observed ones from the `model` and `request` trace lines.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch01 import assembly as asm
from pinb.chapters.ch01 import experiments as ex
from pinb.chapters.ch01 import families as fam
from pinb.chapters.ch01.turns import prompts, runs_of
from pinb.chapters.properties import Params, Premise, Property, Witness, st

EXTRA_TOOLS = ("lookup", "search", "fetch_page")


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "behavior": {"kind": "return", "text": "found"}}


def _names(scenario: Any) -> list[str]:
    return [str(t["name"]) for t in scenario.get("tools", ())]


# --- a submitted message is added to the active branch -----------------------------------------------------------


def _added_premise(w: Witness) -> Premise:
    scenario = next(iter(w.scenarios.values()))
    if scenario.get("layer") != "app":
        return Premise(False, "an agent-layer run has no session branch")
    return Premise(True, f"{len(prompts(scenario))} prompt(s) submitted to a session")


def _added_expected(w: Witness) -> list[list[str]]:
    return [["user", p] for p in prompts(next(iter(w.scenarios.values())))]


def _added_observed(w: Witness) -> list[list[Any]]:
    out = []
    for run in runs_of(next(iter(w.traces.values()))):
        lines = tq.core(run)
        user = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("role") == "user")
        request = tq.index(lines, tq.is_("request", "model"))
        last = lines[request].get("messages", [{}])[-1] if 0 <= user < request else {}
        out.append([last.get("role"), last.get("text")])
    return out


MESSAGE_ADDED = Property(
    ex._hello,
    _added_premise,
    _added_expected,
    _added_observed,
    lambda p: fam.loop_scenario(layer="app", min_tool_turns=0).map(lambda s: {"hello": s}),
)

# --- four inputs, and the model-settings row -----------------------------------------------------------------------

LEVELS = ("off", "minimal", "low", "medium", "high")


@st.composite
def _observed_app(draw: st.DrawFn, name: str) -> dict[str, Any]:
    tools = draw(st.lists(st.sampled_from(("word_count", *EXTRA_TOOLS)), min_size=1, max_size=3, unique=True))
    scenario = sc.app(
        f"ch01-{name}",
        draw(fam.sentence("Question")),
        [sc.text("Done.")],
        tools=[sc.WORD_COUNT_TOOL if t == "word_count" else _tool(t) for t in tools],
        observe={"requests": True},
    )
    scenario["model"] = {
        "id": draw(st.sampled_from(("faux-1", "faux-2", "faux-large"))),
        "reasoning": True,
        "thinking_level": draw(st.sampled_from(LEVELS)),
    }
    return scenario


def _settings_of(scenario: Any) -> dict[str, Any]:
    """The model and thinking level the scenario sets (Pi's faux defaults: faux-1, no reasoning, level off)."""
    model = scenario.get("model") or {}
    level = model.get("thinking_level", "off") if model.get("reasoning") else "off"
    return {"model": model.get("id", "faux-1"), "thinking": level}


def _four_expected(w: Witness) -> dict[str, Any]:
    return {
        name: {
            "first message": "system",
            "last message": ["user", prompts(s)[0]],
            "tools": _names(s),
            **_settings_of(s),
        }
        for name, s in w.scenarios.items()
    }


def _four_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        first, line = common.first_request(trace), ex._inputs_line(trace)
        messages = first.get("messages", [])
        out[name] = {
            "first message": messages[0].get("role") if messages else None,
            "last message": [messages[-1].get("role"), messages[-1].get("text")] if messages else None,
            "tools": list(first.get("tools", [])),
            "model": str(line.get("model", "")).rsplit("/", 1)[-1] or None,
            "thinking": line.get("thinkingLevel"),
        }
    return out


def _four_premise(w: Witness) -> Premise:
    unobserved = [n for n, s in w.scenarios.items() if not (s.get("observe") or {}).get("requests")]
    if unobserved or not all(s.get("tools") for s in w.scenarios.values()):
        return Premise(False, f"requests not observed in {unobserved} or a scenario declares no tools")
    return Premise(True, "; ".join(f"{n}: tools {_names(s)}, {_settings_of(s)}" for n, s in w.scenarios.items()))


def _four_family(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return st.tuples(_observed_app("word-count-app"), _observed_app("thinking")).map(
        lambda pair: {"word-count-app": pair[0], "thinking": pair[1]}
    )


FOUR_INPUTS = Property(ex._four_inputs, _four_premise, _four_expected, _four_observed, _four_family)


def _settings_expected(w: Witness) -> dict[str, Any]:
    out: dict[str, Any] = {name: _settings_of(s) for name, s in w.scenarios.items()}
    out["messages and tools the same in every request"] = True
    return out


def _settings_observed(w: Witness) -> dict[str, Any]:
    out: dict[str, Any] = {}
    firsts = []
    for name, trace in w.traces.items():
        line = ex._inputs_line(trace)
        out[name] = {
            "model": str(line.get("model", "")).rsplit("/", 1)[-1] or None,
            "thinking": line.get("thinkingLevel"),
        }
        first = common.first_request(trace)
        firsts.append(repr((first.get("messages"), first.get("tools"))))
    out["messages and tools the same in every request"] = len(set(firsts)) == 1
    return out


def _settings_premise(w: Witness) -> Premise:
    seen = {repr(_settings_of(s)) for s in w.scenarios.values()}
    rest = {repr({k: v for k, v in s.items() if k not in ("id", "model")}) for s in w.scenarios.values()}
    if len(seen) >= 2 and len(rest) == 1:
        return Premise(True, f"{len(seen)} model settings on otherwise equal sessions")
    return Premise(False, "the sessions do not differ in their model settings alone")


@st.composite
def _settings_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    base = draw(_observed_app("model-settings"))
    out = {}
    for name in ("off", "thinking", "other-model"):
        variant = {**base, "id": f"ch01-model-settings-{name}", "model": dict(base["model"])}
        if name == "off":
            variant["model"]["thinking_level"] = "off"
        elif name == "thinking":
            variant["model"]["thinking_level"] = draw(st.sampled_from(LEVELS[1:]))
        else:
            variant["model"]["id"] = "faux-other"
        out[name] = variant
    return out


MODEL_SETTINGS = Property(
    ex._model_settings,
    _settings_premise,
    _settings_expected,
    _settings_observed,
    lambda p: _settings_family(),
    picture="thinking",
)

# --- the four-inputs pair: an injected sentence and a registered tool ---------------------------------------------


@st.composite
def _inputs_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    sentence = draw(fam.sentence("Remember:"))
    custom = draw(st.sampled_from(("note", "reminder", "policy")))
    extra = draw(st.sampled_from(EXTRA_TOOLS))
    base_tools = [sc.bash_tool()] + ([sc.WORD_COUNT_TOOL] if draw(st.booleans()) else [])
    prompt = draw(fam.sentence("Please"))
    inject = sc.extension(
        "injector", sc.handler("before_agent_start", "inject", "inject_message", customType=custom, content=sentence)
    )

    def variant(name: str, extensions: list[Any], tools: list[Any]) -> dict[str, Any]:
        return sc.app(f"ch01-inputs-{name}", prompt, [sc.text("Done.")], tools=tools, extensions=extensions)

    return {
        "base": variant("base", [], base_tools),
        "sentence": variant("sentence", [inject], base_tools),
        "tool": variant("tool", [], [*base_tools, _tool(extra)]),
        "both": variant("both", [inject], [*base_tools, _tool(extra)]),
    }


def _injected(w: Witness) -> str:
    ext = (w.scenarios["sentence"].get("extensions") or [{}])[0]
    return str(ext.get("handlers", [{}])[0].get("action", {}).get("content", ""))


def _diff(w: Witness, key: str) -> dict[str, Any]:
    table = common.inputs_table(dict(w.traces))
    (base_m, base_t), (m, t) = table["base"], table[key]
    added = [msg for msg in m if msg not in base_m]
    return {
        "messages added": len(m) - len(base_m),
        "an added message carries the sentence": any(_injected(w) in str(x.get("text", "")) for x in added),
        "tools added": [x for x in t if x not in base_t],
        "tools dropped": [x for x in base_t if x not in t],
    }


def _pair_premise(w: Witness) -> Premise:
    if not all(k in w.scenarios for k in ("base", "sentence", "tool", "both")):
        return Premise(False, "not the four variants (base, sentence, tool, both)")
    extra = [n for n in _names(w.scenarios["tool"]) if n not in _names(w.scenarios["base"])]
    if not _injected(w) or not extra:
        return Premise(False, "no injected sentence or no extra tool")
    return Premise(True, f"an extension injects {_injected(w)!r}; one more tool {extra}")


def _extra(w: Witness) -> list[str]:
    return [n for n in _names(w.scenarios["tool"]) if n not in _names(w.scenarios["base"])]


def _injection_expected(w: Witness) -> dict[str, Any]:
    return {"messages added": 1, "an added message carries the sentence": True, "tools added": [], "tools dropped": []}


def _registration_expected(w: Witness) -> dict[str, Any]:
    return {
        "messages added": 0,
        "an added message carries the sentence": False,
        "tools added": _extra(w),
        "tools dropped": [],
    }


def _neither_expected(w: Witness) -> dict[str, Any]:
    return {
        "sentence": _injection_expected(w),
        "tool": _registration_expected(w),
        "both": {**_injection_expected(w), "tools added": _extra(w)},
    }


def _neither_observed(w: Witness) -> dict[str, Any]:
    return {key: _diff(w, key) for key in ("sentence", "tool", "both")}


def _inputs_family_of(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return _inputs_family()


BRANCH_INJECTION = Property(
    common.four_inputs,
    _pair_premise,
    _injection_expected,
    lambda w: _diff(w, "sentence"),
    _inputs_family_of,
    picture="sentence",
)
TOOL_REGISTRATION = Property(
    common.four_inputs,
    _pair_premise,
    _registration_expected,
    lambda w: _diff(w, "tool"),
    _inputs_family_of,
    picture="tool",
)
NEITHER_CHANGES_OTHER = Property(
    common.four_inputs, _pair_premise, _neither_expected, _neither_observed, _inputs_family_of, picture="both"
)


def _active_expected(w: Witness) -> dict[str, list[str]]:
    return {name: _names(s) for name, s in w.scenarios.items()}


def _active_observed(w: Witness) -> dict[str, list[str]]:
    return {name: list(common.first_request(t).get("tools", [])) for name, t in w.traces.items()}


TOOL_DEFINITIONS_ACTIVE = Property(
    common.four_inputs,
    lambda w: Premise(any(s.get("tools") for s in w.scenarios.values()), "scenarios with declared tools"),
    _active_expected,
    _active_observed,
    _inputs_family_of,
)

# --- the request is assembled from parts ----------------------------------------------------------------------


PARTS = ("system prompt", "history", "tools")


@st.composite
def _assembled_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    prompt = draw(fam.sentence("Question"))
    tools = [sc.WORD_COUNT_TOOL] + ([_tool("lookup")] if draw(st.booleans()) else [])
    system = draw(st.sampled_from([sc.SYSTEM, "You review code.", "You write tests."]))

    def one(id_: str, **fields: Any) -> dict[str, Any]:
        scenario = sc.app(id_, prompt, [sc.text("ok")], observe={"requests": True}, tools=tools)
        return {**scenario, "system_prompt": system, **fields}

    changes = draw(st.sets(st.sampled_from(PARTS), min_size=1))
    variant: dict[str, Any] = {}
    if "system prompt" in changes:
        variant["system_prompt"] = system + " Be terse."
    if "history" in changes:
        variant["prompt"] = prompt.removesuffix(".") + " again."
    if "tools" in changes:
        variant["tools"] = [*tools, _tool("search")]
    return {
        "same-a": one("ch01-assembled-a"),
        "same-b": one("ch01-assembled-b"),
        "changed": one("ch01-assembled-changed", **variant),
    }


_FIELD = {"system prompt": "system_prompt", "history": "prompt", "tools": "tools"}


def _assembled_expected(w: Witness) -> dict[str, list[str]]:
    base = w.scenarios["same-a"]
    out = {"same-b": [p for p in PARTS if w.scenarios["same-b"].get(_FIELD[p]) != base.get(_FIELD[p])]}
    for name in w.scenarios:
        if name not in ("same-a", "same-b"):
            out[name] = [p for p in PARTS if w.scenarios[name].get(_FIELD[p]) != base.get(_FIELD[p])]
    return out


def _assembled_observed(w: Witness) -> dict[str, list[str]]:
    base = asm._parts(w.traces["same-a"])
    return {
        name: [p for p, a, b in zip(PARTS, base, asm._parts(w.traces[name]), strict=True) if a != b]
        for name in w.traces
        if name != "same-a"
    }


def _assembled_premise(w: Witness) -> Premise:
    if "same-a" not in w.scenarios or "same-b" not in w.scenarios or len(w.scenarios) < 3:
        return Premise(False, "not the same parts twice plus a changed part")
    return Premise(True, f"the same parts twice; changed parts {_assembled_expected(w)}")


REQUEST_ASSEMBLED = Property(
    asm.assembled, _assembled_premise, _assembled_expected, _assembled_observed, lambda p: _assembled_family()
)

# --- the active-branch row: a context handler changes what the model receives, not the branch --------------------


@st.composite
def _pruned_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    texts = draw(st.lists(fam.sentence("Say"), min_size=2, max_size=3, unique=True))
    dropped = draw(st.sampled_from(texts[:-1]))
    pruner = sc.extension("pruner", sc.handler("context", "prune", "drop_messages", text=dropped))
    return {
        "pruned": sc.app(
            "ch01-context-pruned",
            texts,
            [sc.text(f"reply {n}") for n in range(len(texts))],
            extensions=[pruner],
            observe={"requests": True},
        )
    }


def _dropped(w: Witness) -> str:
    return str(w.scenarios["pruned"]["extensions"][0]["handlers"][0]["action"]["text"])


def _pruned_premise(w: Witness) -> Premise:
    scenario = w.scenarios.get("pruned", {})
    said = prompts(scenario)
    if not scenario.get("extensions") or _dropped(w) not in said[:-1]:
        return Premise(False, "no context handler dropping an earlier message")
    return Premise(True, f"a context handler drops {_dropped(w)!r} from {len(said)} prompts' requests")


def _pruned_expected(w: Witness) -> dict[str, Any]:
    said = prompts(w.scenarios["pruned"])
    last = f"user:{said[-1]}"
    return {"the branch holds the dropped message": True, "the model received it": False, "the model received": last}


def _pruned_observed(w: Witness) -> dict[str, Any]:
    trace = w.traces["pruned"]
    requests, lines = tq.requests(trace), asm.inputs(trace)
    sent = asm.request_history(dict(requests[-1])) if requests else []
    branch = asm.branch_history(lines[-1]) if lines else []
    dropped = f"user:{_dropped(w)}"
    return {
        "the branch holds the dropped message": dropped in branch,
        "the model received it": dropped in sent,
        "the model received": sent[-1] if sent else None,
    }


ACTIVE_BRANCH_ROW = Property(
    asm.active_branch, _pruned_premise, _pruned_expected, _pruned_observed, lambda p: _pruned_family()
)

# --- the tools row: pi.setActiveTools() narrows what the model may call ------------------------------------------


@st.composite
def _narrowed_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(("word_count", *EXTRA_TOOLS)), min_size=2, max_size=4, unique=True))
    keep = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names) - 1, unique=True))
    keep = [n for n in names if n in keep]
    tools = [sc.WORD_COUNT_TOOL if n == "word_count" else _tool(n) for n in names]
    narrower = sc.extension("narrower", sc.handler("agent_end", "narrow", "set_active_tools", tools=keep))
    return {
        "narrowed": sc.app(
            "ch01-tools-narrowed",
            ["first", "second"],
            [sc.text("one"), sc.text("two")],
            tools=tools,
            extensions=[narrower],
        )
    }


def _narrowed_expected(w: Witness) -> list[list[str]]:
    scenario = w.scenarios["narrowed"]
    keep = scenario["extensions"][0]["handlers"][0]["action"]["tools"]
    return [_names(scenario), [n for n in _names(scenario) if n in keep]]


def _narrowed_premise(w: Witness) -> Premise:
    scenario = w.scenarios.get("narrowed", {})
    if len(prompts(scenario)) < 2 or not scenario.get("extensions"):
        return Premise(False, "no pi.setActiveTools() between two prompts")
    return Premise(True, f"pi.setActiveTools({_narrowed_expected(w)[1]}) after the first of two prompts")


TOOLS_ROW = Property(
    asm.tools_table,
    _narrowed_premise,
    _narrowed_expected,
    lambda w: [list(r.get("tools", ())) for r in tq.requests(w.traces["narrowed"])],
    lambda p: _narrowed_family(),
)

# --- before_agent_start appends to the text, not the builder ------------------------------------------------------


@st.composite
def _append_once_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    addition = "\n" + draw(fam.sentence("ONE-OFF ADDITION"))
    texts = draw(st.lists(fam.sentence("Question"), min_size=2, max_size=3, unique=True))
    handler = sc.handler("before_agent_start", "append", "append_system_prompt", text=addition)
    return {
        "append-once": sc.app(
            "ch01-seam-append-once",
            texts,
            [sc.text(f"r{n}") for n in range(len(texts))],
            extensions=[sc.extension("appender", handler)],
            observe={"requests": True},
        )
    }


def _addition(w: Witness) -> str:
    return str(w.scenarios["append-once"]["extensions"][0]["handlers"][0]["action"]["text"])


def _once_premise(w: Witness) -> Premise:
    scenario = w.scenarios.get("append-once", {})
    if len(prompts(scenario)) < 2:
        return Premise(False, "one prompt: no later prompt to be built again")
    return Premise(True, f"a before_agent_start handler appends on the first of {len(prompts(scenario))} prompts")


def _once_expected(w: Witness) -> dict[str, Any]:
    n = len(prompts(w.scenarios["append-once"]))
    return {"request 1 is request 2 plus the addition": True, "later requests carry it": [False] * (n - 1)}


def _once_observed(w: Witness) -> dict[str, Any]:
    found = asm.prompts(w.traces["append-once"])
    return {
        "request 1 is request 2 plus the addition": len(found) >= 2 and found[0] == found[1] + _addition(w),
        "later requests carry it": [_addition(w).strip() in p for p in found[1:]],
    }


def _append_handler_first_only(w: Witness) -> Premise:
    premise = _once_premise(w)
    handler = w.scenarios.get("append-once", {}).get("extensions", [{}])[0].get("handlers", [{}])[0]
    if premise.holds and handler.get("action", {}).get("at", 1) != 1:
        return Premise(False, "the handler does not append on the first prompt")
    return premise


APPEND_ONCE = Property(
    asm.appended_once, _append_handler_first_only, _once_expected, _once_observed, lambda p: _append_once_family()
)

PROPERTIES: dict[str, Property] = {
    "loop.message-added-to-branch": MESSAGE_ADDED,
    "loop.request-four-inputs": FOUR_INPUTS,
    "inputs.table-model-settings": MODEL_SETTINGS,
    "inputs.branch-injection": BRANCH_INJECTION,
    "context.extensions-add-instructions": BRANCH_INJECTION,
    "inputs.tool-registration": TOOL_REGISTRATION,
    "inputs.neither-changes-other": NEITHER_CHANGES_OTHER,
    "context.tool-definitions-active": TOOL_DEFINITIONS_ACTIVE,
    "loop.request-assembled": REQUEST_ASSEMBLED,
    "inputs.table-active-branch": ACTIVE_BRANCH_ROW,
    "inputs.table-tools": TOOLS_ROW,
    "seam.before-agent-start-text-not-builder": APPEND_ONCE,
}

__all__ = ["PROPERTIES"]
