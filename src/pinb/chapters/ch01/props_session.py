"""Chapter 01's session sentences as properties: the tree, compaction, settlement, what continues after agent_end,
queued messages and abort, and the agent core's two hooks.

A continuation counts only as a *turn* request (a model request inside a turn_start … turn_end window): the
summary requests compaction makes after agent_end are not "another request" of the run. An abort is tried before
a tool's body runs and while it runs, on the agent core and in a session.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters import common, tq
from pinb.chapters import scenarios as sc
from pinb.chapters.ch01 import assembly as asm
from pinb.chapters.ch01 import experiments as ex
from pinb.chapters.ch01 import families as fam
from pinb.chapters.ch01.turns import loop_lines, prompts, reply, runs_of, script, words
from pinb.chapters.properties import Params, Premise, Property, Witness, st

# --- the session tree -------------------------------------------------------------------------------------------


@st.composite
def _edit_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    n = draw(st.integers(2, 3))
    texts = draw(st.lists(fam.sentence("Question"), min_size=n + 1, max_size=n + 1, unique=True))
    questions, edit = texts[:n], texts[n].replace("Question", "Edited question")
    answers = [f"Answer {i}." for i in range(n)]
    k = draw(st.integers(2, n))
    scenario = sc.app(
        "ch01-tree-edit",
        questions,
        [sc.text(a) for a in answers] + [sc.text("Answer to the edit.")],
        observe={"requests": True},
        steps=[
            {"do": "navigate", "target": {"role": "user", "text": questions[k - 1]}},
            {"do": "prompt", "text": edit},
            {"do": "snapshot"},
        ],
    )
    return {"edit": scenario}


def _edit_plan(w: Witness) -> dict[str, Any]:
    """What the witness does: its questions and answers, which question it goes back to, the edited text."""
    scenario = w.scenarios["edit"]
    questions = prompts(scenario)
    answers = [t.text for run in script(scenario) for t in run][: len(questions)]
    steps = scenario.get("steps", [])
    target = next(s["target"]["text"] for s in steps if s.get("do") == "navigate")
    edit = next(s["text"] for s in steps if s.get("do") == "prompt")
    k = questions.index(target)
    return {"questions": questions, "answers": answers, "k": k, "edit": edit}


def _edit_premise(w: Witness) -> Premise:
    steps = w.scenarios.get("edit", {}).get("steps", [])
    kinds = [s.get("do") for s in steps]
    if kinds[:2] != ["navigate", "prompt"] or "snapshot" not in kinds:
        return Premise(False, "no going back to a question and editing it, then a tree snapshot")
    plan = _edit_plan(w)
    if plan["k"] < 1:
        return Premise(False, "goes back to the first question: the edit has no earlier entry")
    return Premise(True, f"{len(plan['questions'])} questions, then back to question {plan['k'] + 1} and an edit")


def _snapshot(w: Witness) -> dict[str, Any]:
    found = asm.snapshots(w.traces["edit"])
    return found[-1] if found else {}


def _by_text(snap: dict[str, Any], role: str, text: str) -> dict[str, Any]:
    return asm._entry(snap, role, text)


def _ids_expected(w: Witness) -> dict[str, Any]:
    plan = _edit_plan(w)
    return {
        "ids unique": True,
        "every parent is an entry": True,
        "roots": 1,
        "the edit's parent": plan["answers"][plan["k"] - 1],
        "children of that answer": 2,
    }


def _ids_observed(w: Witness) -> dict[str, Any]:
    plan, snap = _edit_plan(w), _snapshot(w)
    entries = snap.get("entries", [])
    ids = [e.get("id") for e in entries]
    by_id = {e.get("id"): e for e in entries}
    edit = _by_text(snap, "user", plan["edit"])
    parent = by_id.get(edit.get("parentId"), {})
    return {
        "ids unique": bool(ids) and len(set(ids)) == len(ids),
        "every parent is an entry": all("parentId" not in e or e["parentId"] in ids for e in entries),
        "roots": sum(1 for e in entries if "parentId" not in e),
        "the edit's parent": parent.get("text"),
        "children of that answer": sum(1 for e in entries if parent and e.get("parentId") == parent.get("id")),
    }


def _edit_family_of(params: Params) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return _edit_family()


ENTRIES_ID_PARENT = Property(asm.edited, _edit_premise, _ids_expected, _ids_observed, _edit_family_of)


def _branch_expected(w: Witness) -> list[str]:
    plan = _edit_plan(w)
    pairs = [
        x
        for q, a in zip(plan["questions"][: plan["k"]], plan["answers"], strict=False)
        for x in (f"user:{q}", f"assistant:{a}")
    ]
    return [*pairs, f"user:{plan['edit']}"]


def _branch_observed(w: Witness) -> dict[str, Any]:
    requests, lines = tq.requests(w.traces["edit"]), asm.inputs(w.traces["edit"])
    return {
        "the request carried": asm.request_history(dict(requests[-1])) if requests else None,
        "the active branch": asm.branch_history(lines[-1]) if lines else None,
    }


ACTIVE_BRANCH_SUPPLIES = Property(
    asm.edited,
    _edit_premise,
    lambda w: {"the request carried": _branch_expected(w), "the active branch": _branch_expected(w)},
    _branch_observed,
    _edit_family_of,
)


def _abandoned(w: Witness) -> list[str]:
    plan = _edit_plan(w)
    k = plan["k"]
    return [*(f"user:{q}" for q in plan["questions"][k:]), *(f"assistant:{a}" for a in plan["answers"][k:])]


def _survive_expected(w: Witness) -> dict[str, Any]:
    return {"abandoned entries still in the file": _abandoned(w), "branch tips": 2, "on the active branch": []}


def _survive_observed(w: Witness) -> dict[str, Any]:
    snap = _snapshot(w)
    entries = snap.get("entries", [])
    said = {f"{e.get('role')}:{e.get('text')}": e.get("id") for e in entries if e.get("type") == "message"}
    parents = {e.get("parentId") for e in entries}
    branch = set(snap.get("branch", []))
    return {
        "abandoned entries still in the file": [t for t in _abandoned(w) if t in said],
        "branch tips": sum(1 for e in entries if e.get("id") not in parents),
        "on the active branch": [t for t in _abandoned(w) if said.get(t) in branch],
    }


BRANCHES_SURVIVE = Property(asm.edited, _edit_premise, _survive_expected, _survive_observed, _edit_family_of)


def _walk_observed(w: Witness) -> dict[str, Any]:
    plan, snap = _edit_plan(w), _snapshot(w)
    walk = [e.get("id") for e in snap.get("entries", [])]
    branch = list(snap.get("branch", []))
    edit = _by_text(snap, "user", plan["edit"]).get("id")
    old = _by_text(snap, "user", plan["questions"][plan["k"]]).get("id")
    if edit not in walk or edit not in branch:
        return {"the edit is in the tree and on the branch": False}
    return {
        "the edit is in the tree and on the branch": True,
        "the abandoned question is earlier when walking the tree": old in walk[: walk.index(edit)],
        "the abandoned question is earlier when reading the branch": old in branch[: branch.index(edit)],
    }


WALK_VERSUS_BRANCH = Property(
    asm.edited,
    _edit_premise,
    lambda w: {
        "the edit is in the tree and on the branch": True,
        "the abandoned question is earlier when walking the tree": True,
        "the abandoned question is earlier when reading the branch": False,
    },
    _walk_observed,
    _edit_family_of,
)

# --- compaction -------------------------------------------------------------------------------------------------


@st.composite
def _compaction_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    n = draw(st.integers(3, 5))
    summary = draw(fam.sentence("Summary:"))
    scenario = sc.app(
        "ch01-compacted",
        [f"question {i}{asm.WORDS}" for i in range(n)],
        [sc.text(f"answer {i}{asm.WORDS}") for i in range(n)]
        + [sc.text(summary), sc.text("after compaction"), sc.text("spare")],
        settings={"compaction": {"keep_recent_tokens": draw(st.sampled_from([40, 60]))}},
        observe={"requests": True},
        steps=[{"do": "compact"}, {"do": "prompt", "text": f"question {n}"}, {"do": "snapshot"}],
    )
    return {"compact": scenario}


def _compaction_premise(w: Witness) -> Premise:
    scenario = w.scenarios.get("compact", {})
    asked = prompts(scenario)
    steps = [s.get("do") for s in scenario.get("steps", [])]
    if "compact" not in steps or len(asked) < 3 or not asked[0].startswith("question 0"):
        return Premise(False, "no compaction after three or more long turns")
    return Premise(True, f"{len(asked)} long turns, then a compaction and one more question")


def _summary(w: Witness) -> str:
    """The reply the scenario scripts for the compaction's summary request: the one after every prompt's answer."""
    scenario = w.scenarios["compact"]
    return reply(scenario["responses"][len(prompts(scenario))]).text


def _compaction_observed(w: Witness) -> dict[str, Any]:
    trace = w.traces["compact"]
    turn_requests = _turn_requests(trace)
    before = asm.request_history(turn_requests[-2]) if len(turn_requests) > 1 else []
    last = asm.request_history(turn_requests[-1]) if turn_requests else []
    snap = asm.snapshots(trace)[-1] if asm.snapshots(trace) else {}
    entries = snap.get("entries", [])
    return {
        "the request before compacting carried question 0": any(m.startswith("user:question 0") for m in before),
        "the next request starts from the summary": bool(last) and _summary(w) in last[0],
        "the next request carries question 0": any(m.startswith("user:question 0") for m in last),
        "compaction entries": sum(1 for e in entries if e.get("type") == "compaction"),
        "user questions still in the tree": sum(
            1 for e in entries if e.get("role") == "user" and str(e.get("text", "")).startswith("question ")
        ),
    }


def _compaction_expected(w: Witness) -> dict[str, Any]:
    return {
        "the request before compacting carried question 0": True,
        "the next request starts from the summary": True,
        "the next request carries question 0": False,
        "compaction entries": 1,
        "user questions still in the tree": len(prompts(w.scenarios["compact"])) + 1,
    }


def _subset(keys: tuple[str, ...]) -> Any:
    def agree(expected: dict[str, Any], observed: dict[str, Any]) -> bool:
        return all(observed.get(k) == expected.get(k) for k in keys)

    return agree


_REPLACES = (
    "the request before compacting carried question 0",
    "the next request starts from the summary",
    "the next request carries question 0",
)
COMPACTION_REPLACES = Property(
    asm.compacted,
    _compaction_premise,
    lambda w: {k: v for k, v in _compaction_expected(w).items() if k in _REPLACES},
    lambda w: {k: v for k, v in _compaction_observed(w).items() if k in _REPLACES},
    lambda p: _compaction_family(),
)
COMPACTION_ENTRIES_STAY = Property(
    asm.compacted, _compaction_premise, _compaction_expected, _compaction_observed, lambda p: _compaction_family()
)

# --- what continues after agent_end (a turn request, never a summary request) ------------------------------------


def _turn_requests(trace: Any) -> list[Any]:
    """The model requests made inside a turn (compaction's summary requests are made outside any turn)."""
    lines = loop_lines(trace)
    windows = tq.turn_windows(lines)
    inside = lambda i: any(s <= i <= (e if e >= 0 else len(lines)) for s, e in windows)  # noqa: E731
    return [ln for i, ln in enumerate(lines) if ln.get("type") == "request" and inside(i)]


def went_on(trace: Any) -> dict[str, bool]:
    """At which points of the run another turn's request followed, and whether agent_settled came once, last."""
    lines = loop_lines(trace)
    windows = tq.turn_windows(lines)
    turn_request_at = [
        i
        for i, ln in enumerate(lines)
        if ln.get("type") == "request" and any(s <= i <= (e if e >= 0 else len(lines)) for s, e in windows)
    ]
    after = lambda i: i >= 0 and any(r > i for r in turn_request_at)  # noqa: E731
    tool_reply = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "toolUse")
    stop_reply = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "stop")
    runs = runs_of(trace)
    last_run = loop_lines([dict(ln) for ln in runs[-1]]) if runs else []
    end = tq.index(last_run, tq.is_("agent_end"))
    later = [i for i, ln in enumerate(last_run) if ln.get("type") == "request"]
    last_windows = tq.turn_windows(last_run)
    in_turn = [i for i in later if any(s <= i <= (e if e >= 0 else len(last_run)) for s, e in last_windows)]
    settled = [i for i, ln in enumerate(last_run) if ln.get("type") == "agent_settled"]
    return {
        "a turn after a reply with tool calls": after(tool_reply),
        "a turn after a reply that said stop": after(stop_reply),
        "a turn after the last run's first agent_end": end >= 0 and any(i > end for i in in_turn),
        "settled once, at the end": len(settled) == 1 and settled[0] == len(last_run) - 1,
    }


def _cause(scenario: Any) -> str:
    """Which of the chapter's causes the scenario scripts (read from its own fields)."""
    if any(
        q.get("do") == "follow_up" and str(q.get("when", "")).startswith("agent_end") for q in scenario.get("queue", ())
    ):
        return "a follow-up queued at agent_end"
    if scenario.get("queue"):
        return "a queued follow-up"
    if any(
        h.get("action", {}).get("kind") == "continue_once"
        for e in scenario.get("extensions", ())
        for h in e.get("handlers", ())
    ):
        return "a settlement handler's continue"
    errors = [str(r.get("errorMessage", "")) for r in scenario.get("responses", ()) if r.get("stopReason") == "error"]
    if any("too long" in e or "too_large" in e for e in errors):
        return "overflow recovery"
    if errors:
        return "an automatic retry"
    return "tool results"


_AFTER_END = {"a turn after the last run's first agent_end": True, "settled once, at the end": True}
EXPECTED_BY_CAUSE: dict[str, dict[str, bool]] = {
    "tool results": {"a turn after a reply with tool calls": True},
    "a queued follow-up": {"a turn after a reply that said stop": True},
    "a settlement handler's continue": {"a turn after a reply that said stop": True, **_AFTER_END},
    "a follow-up queued at agent_end": {"a turn after a reply that said stop": True, **_AFTER_END},
    "an automatic retry": _AFTER_END,
    "overflow recovery": _AFTER_END,
}


def _continued_expected(w: Witness) -> dict[str, Any]:
    return {name: EXPECTED_BY_CAUSE[_cause(s)] for name, s in w.scenarios.items()}


def _continued_observed(w: Witness) -> dict[str, Any]:
    return {name: went_on(t) for name, t in w.traces.items()}


def _agree_by_cause(expected: dict[str, Any], observed: dict[str, Any]) -> bool:
    return all(all(observed.get(n, {}).get(k) == v for k, v in want.items()) for n, want in expected.items())


def _after_end_expected(w: Witness) -> dict[str, Any]:
    return {name: _AFTER_END for name in w.scenarios}


def _causes_premise(needed: int) -> Any:
    def premise(w: Witness) -> Premise:
        causes = {name: _cause(s) for name, s in w.scenarios.items()}
        tools = [n for n, c in causes.items() if c == "tool results"]
        if any(not any(t.calls for r in script(w.scenarios[n]) for t in r) for n in tools):
            return Premise(False, "a scenario with no tool calls scripts no cause of continuation")
        if len(set(causes.values())) < needed:
            return Premise(False, f"only {sorted(set(causes.values()))}")
        return Premise(True, "; ".join(f"{n}: {c}" for n, c in causes.items()))

    return premise


def _after_end_premise(w: Witness) -> Premise:
    causes = {name: _cause(s) for name, s in w.scenarios.items()}
    if not causes or any(c in ("tool results", "a queued follow-up") for c in causes.values()):
        return Premise(False, "a scenario without work after agent_end")
    return Premise(True, "; ".join(f"{n}: {c}" for n, c in causes.items()))


RETRY_ERRORS = (
    "503 Service Unavailable: overloaded",
    "429 Too Many Requests",
    "Internal server error",
    "socket hang up",
)
OVERFLOW_ERRORS = ("prompt is too long: 213462 tokens > 200000 maximum", "request_too_large: request exceeds limit")


@st.composite
def _after_end_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    found = common.after_agent_end({"settle_entry": draw(fam.sentence("Check"))})
    found["retry"]["responses"][0]["errorMessage"] = draw(st.sampled_from(RETRY_ERRORS))
    found["overflow-recovery"]["responses"][1]["errorMessage"] = draw(st.sampled_from(OVERFLOW_ERRORS))
    found["queued"]["queue"][0]["text"] = draw(fam.sentence("One more"))
    keep = draw(st.sets(st.sampled_from(sorted(found)), min_size=2))
    return {name: s for name, s in found.items() if name in keep}


@st.composite
def _continuation_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    found = common.after_agent_end({"settle_entry": draw(fam.sentence("Check"))})
    found["retry"]["responses"][0]["errorMessage"] = draw(st.sampled_from(RETRY_ERRORS))
    found["overflow-recovery"]["responses"][1]["errorMessage"] = draw(st.sampled_from(OVERFLOW_ERRORS))
    found.pop("queued")
    tools = draw(fam.loop_scenario(layer="app", min_tool_turns=1, prompts=(1, 1), name="ch01-word-count-app"))
    return {"word-count-app": tools, **found, "follow-up-app": ex._continuation_app({})["follow-up-app"]}


AGENT_END_NOT_THE_END = Property(
    common.after_agent_end,
    _after_end_premise,
    _after_end_expected,
    _continued_observed,
    lambda p: _after_end_family(),
    agree=_agree_by_cause,
)
CONTINUATION_EXPLICIT = Property(
    ex._continuation_app,
    _causes_premise(4),
    _continued_expected,
    _continued_observed,
    lambda p: _continuation_family(),
    agree=_agree_by_cause,
)
WIDER_RUN = Property(
    ex._continuation_app,
    _causes_premise(3),
    _continued_expected,
    _continued_observed,
    lambda p: _continuation_family(),
    agree=_agree_by_cause,
    picture="settle-continue",
)

# --- settlement -------------------------------------------------------------------------------------------------


@st.composite
def _settle_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    entry = draw(fam.sentence("Check"))
    scenario = sc.settle_continue(entry_text=entry)
    first = draw(fam.run_script(0, 2))
    scenario["tools"] = [sc.WORD_COUNT_TOOL, fam.LOOKUP_TOOL]
    scenario["responses"] = [*first, sc.text(draw(fam.sentence("Checked")))]
    return {"settle-continue": scenario}


def _settle_entry(w: Witness) -> str:
    ext = w.scenarios["settle-continue"]["extensions"][0]["handlers"][0]
    return str(ext["action"]["entry"]["content"])


def _settle_premise(w: Witness) -> Premise:
    scenario = w.scenarios.get("settle-continue", {})
    handlers = [h for e in scenario.get("extensions", ()) for h in e.get("handlers", ())]
    if not any(
        h.get("event") == "agent_before_settle" and h["action"].get("kind") == "continue_once" for h in handlers
    ):
        return Premise(False, "no agent_before_settle handler asking for one continuation")
    return Premise(True, f"an agent_before_settle handler appends {_settle_entry(w)!r} and asks for one more turn")


def _actionable_expected(w: Witness) -> dict[str, Any]:
    first = len(script(w.scenarios["settle-continue"])[0])
    return {"turn requests": first + 1, "the entry reached the last request": True}


def _actionable_observed(w: Witness) -> dict[str, Any]:
    requests = _turn_requests(w.traces["settle-continue"])
    return {
        "turn requests": len(requests),
        "the entry reached the last request": bool(requests) and tq.mentions(requests[-1], _settle_entry(w)),
    }


BEFORE_SETTLE_ACTIONABLE = Property(
    common.settle, _settle_premise, _actionable_expected, _actionable_observed, lambda p: _settle_family()
)


def _final_observed(w: Witness) -> dict[str, Any]:
    lines = tq.core(w.traces["settle-continue"])
    settled = tq.indexes(lines, tq.is_("agent_settled", "session"))
    after = [f"{ln.get('source')}:{ln.get('type')}" for ln in lines[settled[-1] + 1 :]] if settled else []
    # Handlers notified of agent_settled may be recorded after it; they are the notification, not a continuation.
    return {"agent_settled": len(settled), "after it": sorted(set(after) - {"ext:agent_settled"})}


def _final_expected(w: Witness) -> dict[str, Any]:
    return {"agent_settled": 1, "after it": []}


SETTLED_FINAL = Property(common.settle, _settle_premise, _final_expected, _final_observed, lambda p: _settle_family())


def _sequence_observed(w: Witness) -> dict[str, Any]:
    seq = common.settle_sequence(w.traces["settle-continue"])
    ends = [i for i, s in enumerate(seq) if s == "agent_end"]
    acted = "agent_before_settle+continue" in seq and bool(ends) and seq.index("agent_before_settle+continue") > ends[0]
    return {
        "the last three boundaries": [s for s in seq if s != "request"][-3:],
        "a continue asked after agent_end took effect": acted and seq.count("request") >= 2,
    }


SETTLE_SEQUENCE = Property(
    common.settle,
    _settle_premise,
    lambda w: {
        "the last three boundaries": ["agent_end", "agent_before_settle", "agent_settled"],
        "a continue asked after agent_end took effect": True,
    },
    _sequence_observed,
    lambda p: _settle_family(),
)

# --- steering ---------------------------------------------------------------------------------------------------


@st.composite
def _steering_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    n = draw(st.integers(1, 3))
    at = draw(st.integers(1, n))
    steer = draw(fam.sentence("Also"))
    tools = [sc.sleep_tool(f"job_{i}", draw(st.integers(5, 30)), f"job {i} finished") for i in range(n)]
    return {
        "steering": sc.agent(
            "ch01-steering",
            "Start the jobs.",
            [sc.calls(*(sc.call(t["name"], {}) for t in tools)), sc.text("Noted the steer.")],
            tools=tools,
            queue=[{"when": f"tool_execution_start#{at}", "do": "steer", "text": steer}],
            settings={"tool_execution": draw(st.sampled_from(["sequential", "parallel"]))},
        )
    }


def _steer_text(w: Witness) -> str:
    return str(w.scenarios["steering"]["queue"][0]["text"])


def _steer_premise(w: Witness) -> Premise:
    queue = w.scenarios.get("steering", {}).get("queue", [])
    if not any(q.get("do") == "steer" and str(q.get("when", "")).startswith("tool_execution") for q in queue):
        return Premise(False, "no steering message queued while a tool runs")
    return Premise(True, f"a steer queued at {queue[0]['when']}, with {len(w.scenarios['steering']['tools'])} tools")


def _steer_observed(w: Witness) -> dict[str, Any]:
    lines = [ln for ln in tq.core(w.traces["steering"]) if ln.get("source") in ("agent", "model")]
    first_end = tq.index(lines, tq.is_("turn_end"))
    ended = [ln for ln in lines[: max(first_end, 0)] if ln.get("type") == "tool_execution_end"]
    steer_at = tq.index(lines, lambda ln: ln.get("type") == "message_start" and ln.get("text") == _steer_text(w))
    second = tq.index(lines, tq.is_("request", "model", n=2))
    where = (
        "never"
        if steer_at < 0
        else "inside the first turn"
        if steer_at < first_end
        else "after request 2"
        if second < steer_at
        else "after the first turn closed, before request 2"
    )
    return {
        "first turn's tools that finished without error": sum(1 for ln in ended if not ln.get("isError")),
        "the steering message": where,
    }


STEERING = Property(
    ex._steering,
    _steer_premise,
    lambda w: {
        "first turn's tools that finished without error": len(w.scenarios["steering"]["tools"]),
        "the steering message": "after the first turn closed, before request 2",
    },
    _steer_observed,
    lambda p: _steering_family(),
)

# --- follow-ups -------------------------------------------------------------------------------------------------


@st.composite
def _follow_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    text = draw(fam.sentence("And"))
    during = sc.word_count("app", draw(fam.phrase(1, 4)))
    during["id"] = "ch01-app-follow-up-during-tool"
    calls = draw(st.integers(1, 3))
    during["responses"][0] = sc.calls(*(sc.call("word_count", {"text": draw(fam.phrase())}) for _ in range(calls)))
    during["responses"].append(sc.text("Following up."))
    during["queue"] = [{"when": "tool_execution_start#1", "do": "follow_up", "text": text}]
    streaming = ex._continuation_app({})["follow-up-app"]
    streaming["queue"][0]["text"] = text
    return {"follow-up-app": streaming, "during-tool": during}


def _follow_text(w: Witness, name: str) -> str:
    return str(w.scenarios[name]["queue"][0]["text"])


def _follow_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        lines = loop_lines(trace)
        text = _follow_text(w, name)
        follow = tq.index(lines, tq.is_("message_start", text=text))
        stop = tq.index(lines, lambda ln: ln.get("type") == "message_end" and ln.get("stopReason") == "stop")
        last_tool = max(tq.indexes(lines, tq.is_("tool_execution_end")), default=-1)
        carrying = [i for i in tq.indexes(lines, tq.is_("request")) if i > follow and tq.mentions(lines[i], text)]
        asked = carrying[0] if carrying else -1
        settled = tq.index(lines, tq.is_("agent_settled"))
        out[name] = {
            "after the pending work (tools and the reply to their results)": 0 <= max(stop, last_tool) < follow,
            "a request carries it before agent_settled": 0 <= asked < settled,
        }
    return out


def _follow_premise(w: Witness) -> Premise:
    queued = {
        n: s.get("queue", [{}])[0].get("when")
        for n, s in w.scenarios.items()
        if any(q.get("do") == "follow_up" for q in s.get("queue", ()))
    }
    if not queued:
        return Premise(False, "no follow-up queued during a run")
    return Premise(True, "follow-ups queued at " + ", ".join(f"{n}: {q}" for n, q in queued.items()))


FOLLOW_UP = Property(
    ex._follow_up,
    _follow_premise,
    lambda w: {
        n: {
            "after the pending work (tools and the reply to their results)": True,
            "a request carries it before agent_settled": True,
        }
        for n in w.scenarios
    },
    _follow_observed,
    lambda p: _follow_family(),
)

# --- abort keeps the queued messages ----------------------------------------------------------------------------


def _abort_scenario(layer: str, when: str, queued: list[tuple[str, str]], ms: int) -> dict[str, Any]:
    job = sc.sleep_tool("job", ms, "never")
    job["behavior"]["updates"] = ["working"]
    builder = sc.agent if layer == "agent" else sc.app
    return builder(
        f"ch01-abort-queued-{layer}",
        ["Start the long job.", "Carry on."],
        [sc.calls(sc.call("job", {})), *(sc.text(f"Reply {n}.") for n in range(5))],
        tools=[job],
        queue=[
            *({"when": "tool_execution_start#1", "do": do, "text": t} for do, t in queued),
            {"when": when, "do": "abort"},
        ],
    )


def abort_witness(params: Params) -> dict[str, dict[str, Any]]:
    """The abort before the tool body runs (the chapter's first witness), while it runs, and in a session."""
    queued = [("steer", "Queued steer."), ("follow_up", "Queued follow-up.")]
    ms = int(params.get("abort_tool_ms", 1000))
    return {
        **ex._abort(params),
        "abort-during-tool": _abort_scenario("agent", "tool_execution_update#1", queued, ms),
        "abort-in-session": _abort_scenario("app", "tool_execution_update#1", queued, ms),
    }


@st.composite
def _abort_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    out = {}
    # sorted: a set's order follows PYTHONHASHSEED, and the draws below must not (same seed, same witnesses)
    for layer in sorted(draw(st.sets(st.sampled_from(["agent", "app"]), min_size=1))):
        kinds = draw(st.sets(st.sampled_from(["steer", "follow_up"]), min_size=1))
        queued = [(k, draw(fam.sentence(f"Queued {k.replace('_', '-')}"))) for k in sorted(kinds)]
        when = draw(st.sampled_from(["tool_execution_start#1", "tool_execution_update#1"]))
        out[f"abort-{layer}"] = _abort_scenario(layer, when, queued, draw(st.integers(300, 600)))
    return out


def _queued(scenario: Any) -> list[str]:
    return [str(q["text"]) for q in scenario.get("queue", ()) if q.get("do") in ("steer", "follow_up")]


def _abort_premise(w: Witness) -> Premise:
    said = []
    for name, s in w.scenarios.items():
        queue = s.get("queue", [])
        abort = next((q for q in queue if q.get("do") == "abort"), None)
        if abort is None or not _queued(s):
            return Premise(False, f"{name}: no abort with messages queued before it")
        said.append(f"{name} ({s.get('layer')}): abort at {abort['when']} with {len(_queued(s))} queued")
    return Premise(True, "; ".join(said))


def _abort_expected(w: Witness) -> dict[str, Any]:
    return {
        name: {
            "the running tool call ended as an error": True,
            "requests after the abort in that run": 0,
            "queued messages that reached a later request": sorted(_queued(s)),
        }
        for name, s in w.scenarios.items()
    }


def _abort_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        lines = [ln for ln in trace if not ln.get("stream")]
        at = tq.index(lines, lambda ln: ln.get("source") == "driver" and ln.get("do") == "abort")
        end = tq.index(
            lines, lambda ln: ln.get("type") == "agent_end" and ln.get("source") in ("agent", "session"), max(at, 0)
        )
        tool = next((ln for ln in tq.listener(trace) if ln.get("type") == "tool_execution_end"), {})
        later = tq.requests(lines[end:]) if end >= 0 else []
        out[name] = {
            "the running tool call ended as an error": bool(tool.get("isError")),
            "requests after the abort in that run": len(tq.requests(lines[at:end])) if 0 <= at < end else None,
            "queued messages that reached a later request": sorted(
                t for t in _queued(w.scenarios[name]) if any(tq.mentions(r, t) for r in later)
            ),
        }
    return out


ABORT_KEEPS_QUEUED = Property(
    abort_witness, _abort_premise, _abort_expected, _abort_observed, lambda p: _abort_family()
)

# --- the agent core's hooks ---------------------------------------------------------------------------------------


@st.composite
def _prepare_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    message = draw(fam.sentence("policy says"))
    base = draw(fam.loop_scenario(min_tool_turns=0, prompts=(1, 1), name="ch01-seam-prepare-request"))
    turns = len(script(base)[0])
    at = draw(st.integers(1, turns))
    returns = {**base, "id": "ch01-seam-prepare-request-returns", "hooks": {"prepare_request": {"kind": "record"}}}
    throws = {
        **base,
        "id": "ch01-seam-prepare-request-throws",
        "hooks": {"prepare_request": {"kind": "throw", "message": message, "at": at}},
    }
    return {"hook-returns": returns, "hook-throws": throws}


def _hook(scenario: Any) -> dict[str, Any]:
    return dict((scenario.get("hooks") or {}).get("prepare_request") or {})


def _prepare_premise(w: Witness) -> Premise:
    throws = {n: _hook(s) for n, s in w.scenarios.items() if _hook(s).get("kind") == "throw"}
    if not throws:
        return Premise(False, "no prepareRequest that throws")
    return Premise(True, "; ".join(f"{n}: throws on call {h.get('at', 1)}" for n, h in throws.items()))


def _prepare_expected(w: Witness) -> dict[str, Any]:
    out = {}
    for name, s in w.scenarios.items():
        hook, turns = _hook(s), len(script(s)[0])
        if hook.get("kind") == "throw":
            out[name] = {"provider requests": int(hook.get("at", 1)) - 1, "ended on the hook's error": True}
        else:
            out[name] = {"provider requests": turns, "ended on the hook's error": False}
    return out


def _prepare_observed(w: Witness) -> dict[str, Any]:
    out = {}
    for name, trace in w.traces.items():
        message = str(_hook(w.scenarios[name]).get("message", ""))
        ends = tq.assistant_ends(tq.listener(trace))
        last = ends[-1] if ends else {}
        out[name] = {
            "provider requests": len(tq.requests(trace)),
            "ended on the hook's error": bool(message)
            and last.get("errorMessage") == message
            and bool(tq.events(trace, "agent_end")),
        }
    return out


PREPARE_REQUEST = Property(
    ex._prepare_request,
    _prepare_premise,
    _prepare_expected,
    _prepare_observed,
    lambda p: _prepare_family(),
    picture="hook-throws-second",
)


@st.composite
def _mutation_family(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    asked = draw(fam.phrase(1, 4))
    mutated = draw(fam.phrase(5, 8))
    hooks = {"before_tool_call": {"kind": "mutate_args", "set": {"text": mutated}}}
    return {
        "hook-mutates": ex._hooked("ch01-seam-before-tool-call-mutates", asked, hooks),
        "no-hook": ex._hooked("ch01-seam-before-tool-call-none", asked, None),
    }


def _mutated(w: Witness) -> str:
    return str(w.scenarios["hook-mutates"]["hooks"]["before_tool_call"]["set"]["text"])


def _asked(w: Witness, name: str) -> str:
    return str(w.scenarios[name]["responses"][0]["content"][0]["arguments"]["text"])


def _mutation_premise(w: Witness) -> Premise:
    if "hook-mutates" not in w.scenarios or "no-hook" not in w.scenarios:
        return Premise(False, "not a mutating hook beside no hook")
    if words(_mutated(w)) == words(_asked(w, "hook-mutates")):
        return Premise(False, "the mutation does not change the word count: the tool's result cannot tell")
    return Premise(True, f"the model asks for {_asked(w, 'hook-mutates')!r}; the hook sets {_mutated(w)!r}")


def _mutation_observed(w: Witness) -> dict[str, Any]:
    return {
        name: (next(iter(tq.events(t, "tool_execution_end")), {}) or {}).get("details") for name, t in w.traces.items()
    }


BEFORE_TOOL_CALL = Property(
    ex._before_tool_call,
    _mutation_premise,
    lambda w: {"hook-mutates": {"words": words(_mutated(w))}, "no-hook": {"words": words(_asked(w, "no-hook"))}},
    _mutation_observed,
    lambda p: _mutation_family(),
)

PROPERTIES: dict[str, Property] = {
    "tree.entries-id-parent": ENTRIES_ID_PARENT,
    "tree.active-branch-supplies-history": ACTIVE_BRANCH_SUPPLIES,
    "tree.branches-survive-edits": BRANCHES_SURVIVE,
    "tree.walk-versus-branch": WALK_VERSUS_BRANCH,
    "compaction.replaces-in-later-requests": COMPACTION_REPLACES,
    "compaction.entries-stay": COMPACTION_ENTRIES_STAY,
    "run.agent-end-not-the-end": AGENT_END_NOT_THE_END,
    "loop.continuation-explicit": CONTINUATION_EXPLICIT,
    "loop.wider-run": WIDER_RUN,
    "settle.before-settle-actionable": BEFORE_SETTLE_ACTIONABLE,
    "settle.settled-final": SETTLED_FINAL,
    "settle.permission-sequence": SETTLE_SEQUENCE,
    "queue.steering-after-turn": STEERING,
    "queue.follow-up-after-pending-work": FOLLOW_UP,
    "queue.abort-keeps-queued": ABORT_KEEPS_QUEUED,
    "seam.prepare-request-throw-stops": PREPARE_REQUEST,
    "seam.before-tool-call-mutation": BEFORE_TOOL_CALL,
}

__all__ = ["PROPERTIES", "abort_witness", "went_on"]
