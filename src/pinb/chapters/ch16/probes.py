"""Chapter 16's experiments no scenario can express, run on the stand-in's Python API: declared result types,
an unconditional continuation, project trust, session shutdown and session_before_compact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pinb.chapters import probing
from pinb.chapters.experiments import Finding, Params, ProbeExperiment


async def declared_result_type(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.faux import faux_assistant_message, faux_text

    errors: list[Any] = []
    returned: list[str] = []

    def extension(pi: Any) -> None:
        def returning(value: dict[str, Any]) -> Any:
            def handler(event: Any, ctx: Any) -> Any:
                returned.append(event.type)
                return value

            return handler

        pi.on("turn_start", returning({"block": True, "reason": "turn_start has no result"}))
        pi.on("agent_start", returning({"continue": True}))

    provider = probing.faux(faux_assistant_message([faux_text("done")]), faux_assistant_message([faux_text("again?")]))
    from pinb.app.session import create_agent_session

    session = await create_agent_session(
        stream_fn=provider.stream, extensions=[("returner", extension)], on_error=errors.append
    )
    await session.prompt("go")
    session.dispose()
    # Only an observation if both handlers did return their values: a handler that never ran proves nothing.
    holds = sorted(returned) == ["agent_start", "turn_start"] and len(provider.requests) == 1
    return Finding(
        holds,
        f"handlers returned values on notify-only events {sorted(returned)}; requests made: "
        f"{len(provider.requests)}; errors reported: {len(errors)}",
    ), {}


async def unconditional_loop(params: Params) -> tuple[Finding, probing.Shown]:
    """A handler that continues every time; the probe itself stops it after `loop_limit` boundaries."""
    from pinb.ai.faux import faux_assistant_message, faux_text

    cap = int(params.get("loop_limit", 6))
    asked = {"n": 0}

    def extension(pi: Any) -> None:
        def always(event: Any, ctx: Any) -> Any:
            asked["n"] += 1
            if asked["n"] > cap:  # the probe's safety stop, not the handler's condition
                return None
            draft = {"type": "custom_message", "customType": "again", "content": "Once more.", "display": False}
            return {"entries": [*event.entries, draft], "continue": True}

        pi.on("agent_before_settle", always)

    provider = probing.faux(*(faux_assistant_message([faux_text(f"reply {i}")]) for i in range(cap + 2)))
    session = await probing.session_with(provider, [("looper", extension)])
    await session.prompt("go")
    session.dispose()
    requests = len(provider.requests)
    holds = asked["n"] == cap + 1 and requests == cap + 1
    return Finding(
        holds,
        f"a handler that appends an entry and answers continue: true every time was asked {asked['n']} times and "
        f"the run made {requests} requests; nothing but the probe's own stop after {cap} continuations ended it",
    ), {}


async def project_trust(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.app.extensions.events import ProjectTrustEvent
    from pinb.app.extensions.results import ProjectTrustEventResult

    seen: list[str] = []

    def answering(name: str, answer: str) -> Any:
        def extension(pi: Any) -> None:
            def on_trust(event: Any, ctx: Any) -> Any:
                seen.append(name)
                return ProjectTrustEventResult(trusted=answer)

            pi.on("project_trust", on_trust)

        return (name, extension)

    provider = probing.faux(faux_assistant_message([faux_text("ok")]))
    extensions = [answering("a", "undecided"), answering("b", "yes"), answering("c", "no")]
    session = await probing.session_with(provider, extensions)
    outcome = await session.extension_runner.emit_project_trust(ProjectTrustEvent(cwd="/project"))
    session.dispose()
    decided = getattr(getattr(outcome, "result", None), "trusted", None)
    holds = decided == "yes" and seen == ["a", "b"]
    return Finding(holds, f"handlers asked: {seen}; decision: {decided!r}"), {}


async def session_shutdown(params: Params) -> tuple[Finding, probing.Shown]:
    from pinb.ai.faux import faux_assistant_message, faux_text

    reasons: list[str] = []

    def extension(pi: Any) -> None:
        pi.on("session_shutdown", lambda event, ctx: reasons.append(event.reason))

    provider = probing.faux(faux_assistant_message([faux_text("ok")]))
    session = await probing.session_with(provider, [("releaser", extension)])
    await session.prompt("hi")
    await session.shutdown("quit")
    holds = reasons == ["quit"]
    return Finding(
        holds, f"after session.shutdown('quit') the handler received session_shutdown with reasons {reasons}"
    ), {}


OWN_SUMMARY = "The user asked three questions; the last one is still open."


DEFAULT_SUMMARY = "Summary pinb writes where Pi would ask the model."


BEFORE_COMPACT_FIELDS = ("preparation", "reason", "willRetry", "signal")


async def _compacted(answer: Callable[[Any], Any]) -> dict[str, Any]:
    """Three turns, then a manual compact() whose session_before_compact handler answers `answer(event)`.

    Without the handler's say the compaction goes through with `DEFAULT_SUMMARY` (pinb's stand-in for the
    summary Pi asks the model for), so a cancel that is ignored shows as a compaction entry. Returns what the
    handler saw, what compact() did to the branch, and the next request's messages.
    """
    from pinb.ai.abort import AbortSignal
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.ai.types import message_text
    from pinb.app.session_compaction import CompactionSettings

    seen: dict[str, Any] = {}

    def extension(pi: Any) -> None:
        def before(event: Any, ctx: Any) -> Any:
            prep = event.preparation
            seen.update(
                fields=sorted(event.model_dump(by_alias=True)),
                reason=event.reason,
                will_retry=event.will_retry,
                signal=type(event.signal).__name__,
                signal_live=isinstance(event.signal, AbortSignal) and not event.signal.aborted,
                first_kept=prep.first_kept_entry_id,
                tokens_before=prep.tokens_before,
                to_summarize=len(prep.messages_to_summarize),
            )
            return answer(event)

        pi.on("session_before_compact", before)

    provider = probing.faux(*(faux_assistant_message([faux_text(f"answer {n} " + "word " * 50)]) for n in range(4)))
    session = await probing.session_with(provider, [("compactor", extension)])
    for n in range(3):
        await session.prompt(f"question {n} " + "word " * 50)
    before_ids = [e.id for e in session.session_manager.get_branch()]
    try:
        # keep_recent_tokens=1 keeps only the last reply, so three short turns are enough to compact.
        await session.compact(
            summarize=lambda prep, extra: (DEFAULT_SUMMARY, "") if prep.is_split_turn else DEFAULT_SUMMARY,
            settings=CompactionSettings(keep_recent_tokens=1),
        )
        raised = None
    except Exception as error:  # a cancelled compaction raises, as Pi's compact() rejects
        raised = f"{type(error).__name__}: {error}"
    branch = session.session_manager.get_branch()
    compactions = [e for e in branch if e.type == "compaction"]
    await session.prompt("question 3")
    session.dispose()
    request = provider.requests[-1].context.messages if provider.requests else ()
    return {
        "seen": seen,
        "raised": raised,
        "branch_unchanged": [e.id for e in branch] == before_ids,
        "compaction": [
            {"summary": e.summary, "first_kept": e.first_kept_entry_id, "from_hook": e.from_hook} for e in compactions
        ],
        "next_request": [f"{m.role}:{message_text(m) or ''}" for m in request if m.role != "system"],
    }


def judge_before_compact(cancel: dict[str, Any], supply: dict[str, Any]) -> Finding:
    """Cancel leaves the branch alone; a supplied summary becomes the compaction and heads the next request."""
    from pinb.app.session_messages import COMPACTION_SUMMARY_PREFIX

    fields = cancel["seen"].get("fields", [])
    missing = [name for name in BEFORE_COMPACT_FIELDS if name not in fields]
    carried = not missing and cancel["seen"].get("reason") == "manual" and cancel["seen"].get("will_retry") is False
    carried = carried and cancel["seen"].get("signal_live") is True and cancel["seen"].get("to_summarize", 0) > 0
    cancelled = cancel["raised"] is not None and cancel["branch_unchanged"] and not cancel["compaction"]
    cancelled = cancelled and any(m.startswith("user:question 0") for m in cancel["next_request"])
    entry = supply["compaction"][-1] if supply["compaction"] else {}
    head = supply["next_request"][0] if supply["next_request"] else ""
    supplied = supply["raised"] is None and entry.get("summary") == OWN_SUMMARY and entry.get("from_hook") is True
    supplied = supplied and entry.get("first_kept") == supply["seen"].get("first_kept")
    supplied = supplied and head.startswith("user:" + COMPACTION_SUMMARY_PREFIX) and OWN_SUMMARY in head
    supplied = supplied and not any("question 0" in m for m in supply["next_request"])
    seen = cancel["seen"]
    return Finding(
        carried and cancelled and supplied,
        f"the event carried {[n for n in BEFORE_COMPACT_FIELDS if n in fields]} (missing {missing}): reason "
        f"{seen.get('reason')!r}, willRetry {seen.get('will_retry')}, signal {seen.get('signal')} (live: "
        f"{seen.get('signal_live')}), preparation to summarise {seen.get('to_summarize')} messages; "
        f"{{cancel: true}} → compact() {cancel['raised']!r}, branch unchanged: {cancel['branch_unchanged']}, "
        f"compaction entries {len(cancel['compaction'])}; own summary → compaction entry {entry.get('summary')!r} "
        f"(fromHook {entry.get('from_hook')}), next request after the system prompt starts "
        f"{head[:60] + '…' if len(head) > 60 else head!r} and carries the summary: {OWN_SUMMARY in head}",
    )


async def session_before_compact(params: Params) -> tuple[Finding, probing.Shown]:
    def own(event: Any) -> dict[str, Any]:
        prep = event.preparation
        compaction = {"summary": OWN_SUMMARY, "firstKeptEntryId": prep.first_kept_entry_id}
        return {"compaction": {**compaction, "tokensBefore": prep.tokens_before}}

    cancel = await _compacted(lambda event: {"cancel": True})
    supply = await _compacted(own)
    return judge_before_compact(cancel, supply), {"cancel": cancel, "supply": supply}


async def before_agent_start_replace(params: Params) -> tuple[Finding, probing.Shown]:
    """A before_agent_start handler that returns `systemPrompt` replaces the prompt the model receives."""
    from pinb.ai.faux import faux_assistant_message, faux_text
    from pinb.ai.transcript import get_current_system_prompt
    from pinb.app.extensions.results import BeforeAgentStartEventResult

    replacement = str(params.get("replacement_prompt", "You answer in haiku."))

    def extension(pi: Any) -> None:
        pi.on("before_agent_start", lambda event, ctx: BeforeAgentStartEventResult(system_prompt=replacement))

    provider = probing.faux(faux_assistant_message([faux_text("ok")]), faux_assistant_message([faux_text("ok")]))
    plain_provider = probing.faux(faux_assistant_message([faux_text("ok")]))
    session = await probing.session_with(provider, [("replacer", extension)])
    plain = await probing.session_with(plain_provider)
    await session.prompt("hello")
    await plain.prompt("hello")
    session.dispose()
    plain.dispose()
    received = [get_current_system_prompt(r.context.messages) for r in provider.requests]
    base = [get_current_system_prompt(r.context.messages) for r in plain_provider.requests]
    holds = received == [replacement] and base != [replacement] and bool(base and base[0])
    return Finding(
        holds,
        f"with the handler the model received the system prompt {received[0] if received else None!r}; without "
        f"it, a prompt of {len(base[0]) if base else 0} characters starting {base[0][:40] if base else ''!r}",
    ), {}


EXPERIMENTS: dict[str, ProbeExperiment] = {
    "dispatch.declared-result-type": ProbeExperiment(declared_result_type),
    "settle.unconditional-can-loop": ProbeExperiment(unconditional_loop),
    "events.project-trust": ProbeExperiment(project_trust),
    "events.session-shutdown": ProbeExperiment(session_shutdown),
    "events.before-agent-start-replace": ProbeExperiment(before_agent_start_replace),
    "events.session-before-compact": ProbeExperiment(session_before_compact),
}
