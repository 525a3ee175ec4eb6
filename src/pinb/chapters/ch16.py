"""Chapter 16, "Events and the Extension Lifecycle": every claim of the excerpt, quoted with where it stands.

The text is the excerpt in the chapter's research brief (section 2); it ends inside the guard's "four things worth
naming", so claims past that point are not in this ledger. Locations name the section heading and paragraph (¶),
or the table row / diagram step.
"""

from __future__ import annotations

from pinb.chapters._claimspec import DOCS_REASON, STANDIN, TUI_REASON, XREF_REASON, ClaimSpec, reported

CHAPTER_ID = "pi-16-chapter"
NUMBER = "16"
TITLE = "Events and the Extension Lifecycle"
NOTEBOOK = "notebooks/16-chapter.ipynb"
TEXT_FILE = "brief-pi-16-chapter.txt"
# pinb.kit.fingerprint of the excerpt (the brief's section 2, up to its end-of-excerpt marker).
TEXT_FINGERPRINT = "689394f377dc3e28e939e068bf6ee66f25e170a4e6217a9282c0d8ad38d9ce05"

_C = ClaimSpec

CLAIMS: tuple[ClaimSpec, ...] = (
    # Opening
    reported(
        "pi-16.review-guard.cannot-stop-push",
        "The review guard can suggest running the checks. It cannot stop a git push --force that the model decides "
        "to run while fixing a conflict.",
        "Opening ¶1",
        XREF_REASON + " (the review guard is built earlier in the book)",
    ),
    _C(
        "pi-16.guard.blocks-before-body",
        "A tool_call handler can block a matching invocation of a tool before its body runs.",
        "Opening ¶2",
    ),
    _C(
        "pi-16.guard.not-unconditional",
        "That makes it a useful extension-level guard, not an unconditional prohibition: commands can reach the same "
        "effect through other tools or paths the handler does not inspect.",
        "Opening ¶2",
        notes=(
            "an experiment over a corpus of commands that force-push or destroy work by other spellings, with "
            "the guard's verdict for each",
        ),
    ),
    # How events dispatch
    reported(
        "pi-16.dispatch.docs-three-rules",
        "extensions.md states three rules:",
        "How events dispatch ¶1",
        DOCS_REASON + "; each rule's behaviour is its own claim below",
    ),
    _C(
        "pi-16.dispatch.registration-order",
        "Handlers run in extension load and registration order.",
        "How events dispatch, rule 1",
    ),
    _C(
        "pi-16.dispatch.on-returns-unsubscribe",
        "pi.on() returns a function that unsubscribes that registration;",
        "How events dispatch, rule 1",
    ),
    _C(
        "pi-16.dispatch.unsubscribe-not-in-progress",
        "changes do not affect a dispatch already in progress.",
        "How events dispatch, rule 1",
    ),
    _C(
        "pi-16.dispatch.notify-or-transform",
        "Some events notify; others transform data, replace results, or cancel an operation.",
        "How events dispatch, rule 2",
    ),
    _C(
        "pi-16.dispatch.declared-result-type",
        "Use each event’s declared result type rather than assuming every return value has an effect.",
        "How events dispatch, rule 3",
        backends=STANDIN,
        notes=(
            "scenario actions only return declared results, so an undeclared return value needs a handler "
            "written in code: checked on the stand-in's extension API",
        ),
    ),
    _C(
        "pi-16.dispatch.handlers-awaited",
        "Handlers for a given event are awaited, so a slow handler can delay processing.",
        "How events dispatch ¶3",
    ),
    _C(
        "pi-16.dispatch.failing-tool-call-blocks",
        "Error handling depends on the event: notably, a failing tool_call handler blocks the affected tool "
        "invocation rather than allowing it to proceed.",
        "How events dispatch ¶3",
    ),
    # The shape of a run
    _C(
        "pi-16.run.shape",
        "a run proceeds from input and before_agent_start, through model, message, and tool events, to agent_end.",
        "The shape of a run ¶1",
    ),
    _C(
        "pi-16.run.agent-end-not-the-end",
        "Automatic retries, recovery, compaction, or queued work can continue afterward. That last sentence is the "
        "one that matters. agent_end is not the end.",
        "The shape of a run ¶1–2",
    ),
    _C(
        "pi-16.run.sequence-diagram",
        "U->>P: submit a prompt P->>H: input P->>H: before_agent_start P->>H: agent_start loop once per turn "
        "P->>H: turn_start P->>H: message_start, message_update, message_end P->>H: tool_call, before the tool runs "
        "H-->>P: block, or a patched input P->>H: tool_result P->>H: turn_end end P->>H: agent_end "
        "P->>H: agent_before_settle",
        "The shape of a run, sequence diagram",
    ),
    _C(
        "pi-16.run.continuation-branch",
        "alt continuation requested H-->>P: entries and continue true P->>P: run additional model work "
        "P->>H: agent_before_settle (when ready again) else no further work P->>H: agent_settled end",
        "The shape of a run, sequence diagram (alt block)",
    ),
    _C(
        "pi-16.run.settle-after-continuation-exhausted",
        "Note over H: settlement occurs only after continuation is exhausted",
        "The shape of a run, sequence diagram (note)",
    ),
    _C(
        "pi-16.run.tool-calls-concurrent",
        "Stream and tool events can interleave, tool calls may run concurrently, and settlement can follow more than "
        "one low-level run.",
        "The shape of a run ¶3",
    ),
    reported(
        "pi-16.run.omitted-events",
        "provider_stream_event, session_before_compact, user_bash and cache_warming_decision are omitted rather than "
        "assigned a misleading fixed position",
        "The shape of a run ¶3",
        "an editorial choice about the drawing, not a behaviour",
    ),
    # Two boundaries
    _C(
        "pi-16.settle.before-settle-actionable",
        "agent_before_settle is the final actionable boundary: it can append entries and request one continuation.",
        "Two boundaries ¶1",
    ),
    _C(
        "pi-16.settle.settled-notification-only",
        "agent_settled is final and notification-only; use it when an integration needs to know Pi will not "
        "continue automatically.",
        "Two boundaries ¶1",
    ),
    _C(
        "pi-16.settle.turn-end-actionable",
        "Alongside turn_end, agent_before_settle is an actionable boundary. Its handler can chain proposed custom, "
        "custom_message, context_edit or compaction entries and return continue: true for one next model request.",
        "Two boundaries ¶1",
        notes=(
            "the scenarios propose a custom_message entry; custom, context_edit and compaction drafts are not "
            "exercised",
        ),
    ),
    _C(
        "pi-16.settle.unconditional-can-loop",
        "Guard the condition, because an unconditional continuation can loop.",
        "Two boundaries ¶1",
        backends=STANDIN,
        notes=(
            "needs a handler that asks to continue every time; scenario actions continue once, so this runs on "
            "the stand-in's extension API with a bounded script",
        ),
    ),
    _C(
        "pi-16.settle.wrong-correct",
        'Correct: "agent_end closes one low-level run. agent_before_settle is the last boundary that can still add '
        'work, and agent_settled is the notification that nothing more will happen on its own."',
        "Two boundaries ¶2",
    ),
    # The events that change behaviour (table)
    _C(
        "pi-16.events.project-trust",
        'project_trust cwd, mode, hasUI, ui, trusted Return { trusted: "yes" | "no" | "undecided" }; the '
        "first to decide owns it",
        "The events that change behaviour, table row project_trust",
        backends=STANDIN,
        notes=(
            "project trust is decided before a session exists; the scenario runner trusts its in-memory project, "
            "so only the stand-in's trust gate can be exercised",
        ),
    ),
    _C(
        "pi-16.events.session-start",
        "session_start reason (startup, reload, new, resume, fork) Acquire session-scoped resources",
        "The events that change behaviour, table row session_start",
        notes=("a scenario starts one fresh session: only the startup reason is observable",),
    ),
    _C(
        "pi-16.events.session-shutdown",
        "session_shutdown reason, targetSessionFile? Release them, idempotently",
        "The events that change behaviour, table row session_shutdown",
        backends=STANDIN,
        notes=(
            "real Pi emits session_shutdown from its runtime host (exit, reload, new session), not from "
            "session.dispose(), which is all the scenario runner calls; checked through the stand-in's "
            "shutdown path",
        ),
    ),
    _C(
        "pi-16.events.input",
        "input text, images?, source, streamingBehavior? Continue, transform the text, or handle it",
        "The events that change behaviour, table row input",
    ),
    _C(
        "pi-16.events.before-agent-start",
        "before_agent_start prompt, images?, systemPrompt, systemPromptOptions Inject a message or replace the prompt",
        "The events that change behaviour, table row before_agent_start",
        notes=(
            "message injection runs on both backends; replacing the system prompt is checked on the stand-in "
            "(the trace never carries system-prompt text)",
        ),
    ),
    _C(
        "pi-16.events.tool-call",
        "tool_call toolName, input, toolCallId Mutate event.input, or { block: true, reason }",
        "The events that change behaviour, table row tool_call",
    ),
    _C(
        "pi-16.events.tool-result",
        "tool_result result Replace content, details, structuredContent, isError, usage",
        "The events that change behaviour, table row tool_result",
        notes=("content, details and isError are replaced; structuredContent and usage are not in the trace",),
    ),
    _C(
        "pi-16.events.message-end",
        "message_end message Replace the finalized message, keeping its role",
        "The events that change behaviour, table row message_end",
    ),
    _C(
        "pi-16.events.turn-end",
        "turn_end turnIndex, message, toolResults Append entries, return continue: true",
        "The events that change behaviour, table row turn_end",
    ),
    _C(
        "pi-16.events.agent-before-settle",
        "agent_before_settle boundary state The same, as the last chance",
        "The events that change behaviour, table row agent_before_settle",
    ),
    _C(
        "pi-16.events.session-before-compact",
        "session_before_compact preparation, reason, willRetry, signal Cancel, or supply your own summary",
        "The events that change behaviour, table row session_before_compact",
        backends=STANDIN,
        notes=(
            "the scenario format has no way to start a compaction on real Pi (no /compact step, and automatic "
            "compaction needs a context near the faux model's 128,000-token window), so this is checked on the "
            "stand-in's session: a manual compact() whose handler cancels, then one whose handler supplies the "
            "summary; the stand-in was compared once with Pi 1.6.0's compact() in a one-off run, not recorded here",
        ),
    ),
    reported(
        "pi-16.events.user-bash",
        "user_bash command, excludeFromContext, cwd Handle the command yourself",
        "The events that change behaviour, table row user_bash",
        TUI_REASON + " (user_bash fires for shell commands typed in the editor)",
    ),
    # The guard
    _C(
        "pi-16.guard.blocks-force-push",
        "if (!ctx.hasUI) { // No way to ask. Refuse rather than allow silently. return { block: true, reason: "
        "`Guard blocked: ${hit.source}` }; }",
        "The guard, the extension's code (no UI branch)",
    ),
    _C(
        "pi-16.guard.patterns",
        "const BLOCKED = [ /\\bgit\\s+push\\b[^\\n]*(--force(?:-with-lease)?|-f)\\b/, /\\bgit\\s+reset\\s+--hard\\b/, "
        "/\\bgit\\s+clean\\b[^\\n]*-[a-z]*f/, ];",
        "The guard, the extension's code (patterns)",
        notes=("each pattern blocks the command it names, with JavaScript regex semantics on JSON.stringify(input)",),
    ),
    _C(
        "pi-16.guard.only-bash-and-powershell",
        'if (event.toolName !== "bash" && event.toolName !== "powershell") return;',
        "The guard, the extension's code (tool filter)",
    ),
    _C(
        "pi-16.guard.confirm-with-ui",
        'const ok = await ctx.ui.confirm( "This command rewrites history or destroys work. Allow?", '
        'raw.slice(0, 200), ); if (ok) return; return { block: true, reason: "Blocked by review-guard extension" };',
        "The guard, the extension's code (UI branch)",
    ),
    _C(
        "pi-16.guard.reads-not-mutates",
        "This guard reads event.input; it does not mutate it. Other handlers may change tool arguments by mutating "
        "event.input, while this handler uses the declared { block: true, reason } result to deny a matching call.",
        "The guard, four things worth naming, 1",
    ),
    reported(
        "pi-16.guard.has-ui-docs",
        "ctx.hasUI guards the dialog. extensions.md says to use ctx.hasUI for interactions supported by intera",
        "The guard, four things worth naming, 2",
        DOCS_REASON + "; the excerpt ends mid-sentence here (the UI behaviour is pi-16.guard.confirm-with-ui)",
    ),
)

__all__ = ["CHAPTER_ID", "CLAIMS", "NOTEBOOK", "NUMBER", "TEXT_FILE", "TEXT_FINGERPRINT", "TITLE"]
