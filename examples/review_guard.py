"""Chapter 16's review guard as a pinb extension.

The book's TypeScript, line for line: a ``tool_call`` handler that, for ``bash`` and ``powershell`` calls, tests
``JSON.stringify(event.input)`` against three JavaScript regexes (``pinb.app.guard`` reproduces JavaScript's JSON
and regex semantics, so a tab between ``git`` and ``push`` does not match, exactly as in JavaScript). Without a UI it
refuses with ``Guard blocked: <pattern source>``; with one it asks, and blocks with "Blocked by review-guard
extension" when the answer is no.

Load it with ``create_agent_session(extensions=[("review-guard", review_guard)], ...)``.
"""

from __future__ import annotations

from pinb.ai.jsjson import js_slice
from pinb.app.extensions import ExtensionAPI, ExtensionContext
from pinb.app.extensions.events import ToolCallEvent
from pinb.app.extensions.results import ToolCallEventResult
from pinb.app.guard import guard_verdict
from pinb.chapters.ch16.guard import pattern_sources

CONFIRM_TITLE = "This command rewrites history or destroys work. Allow?"
DENIED_REASON = "Blocked by review-guard extension"

BOOK_PATTERNS = tuple(pattern_sources())


def review_guard(pi: ExtensionAPI) -> None:
    """The extension factory (the book's ``export default function (pi: ExtensionAPI)``)."""

    async def on_tool_call(event: ToolCallEvent, ctx: ExtensionContext) -> ToolCallEventResult | None:
        if event.tool_name not in ("bash", "powershell"):
            return None
        verdict = guard_verdict(event.tool_name, event.input, BOOK_PATTERNS)  # const raw = JSON.stringify(event.input)
        if not verdict.blocked:
            return None
        if not ctx.has_ui:
            # No way to ask. Refuse rather than allow silently.
            return ToolCallEventResult(block=True, reason=f"Guard blocked: {verdict.pattern}")
        raw = verdict.subject or ""
        ok = await ctx.ui.confirm(CONFIRM_TITLE, js_slice(raw, 0, 200))
        if ok:
            return None
        return ToolCallEventResult(block=True, reason=DENIED_REASON)

    pi.on("tool_call", on_tool_call)


async def _demo() -> None:
    """Chapter 16's force push, once with no UI and once with a user who says no."""
    from pinb.ai import message_text
    from pinb.ai.faux import FauxProvider, faux_assistant_message, faux_tool_call
    from pinb.app import ScriptedUI, create_agent_session
    from pinb.app.tools import create_bash_tool

    for ui in (None, ScriptedUI(confirm=False)):
        faux = FauxProvider()
        faux.set_responses(
            [
                faux_assistant_message(
                    faux_tool_call("bash", {"command": "git push --force origin main"}), stop_reason="toolUse"
                ),
                faux_assistant_message("The push was blocked."),
            ]
        )
        bash = create_bash_tool()
        session = await create_agent_session(
            stream_fn=faux.stream, model=faux.model, tools=[bash], extensions=[("review-guard", review_guard)], ui=ui
        )
        await session.prompt("Push my branch.")
        result = next(m for m in session.messages if m.role == "toolResult")
        label = "no UI" if ui is None else "UI, user denies"
        print(f"{label}: {message_text(result)!r} (commands run: {len(bash.calls)})")  # type: ignore[attr-defined]


if __name__ == "__main__":
    import asyncio

    asyncio.run(_demo())
