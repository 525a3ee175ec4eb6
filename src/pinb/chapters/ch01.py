"""Chapter 01, "The Loop You Are Writing For": every claim of the text, quoted with where it stands.

Locations name the section heading and the paragraph (¶, counted from the heading) or bullet. The four-inputs
table is quoted from the chapter text as the research brief renders it (the plain-text snapshot drops tables).
"""

from __future__ import annotations

from pinb.chapters._claimspec import (
    BOTH,
    DESIGN_REASON,
    DOCS_REASON,
    FORK_REASON,
    PI,
    STANDIN,
    TUI_REASON,
    XREF_REASON,
    ClaimSpec,
    reported,
)

CHAPTER_ID = "pi-01-chapter"
NUMBER = "01"
TITLE = "The Loop You Are Writing For"
NOTEBOOK = "notebooks/01-chapter.ipynb"
TEXT_FILE = "ch01-the-loop-you-are-writing-for.txt"
# pinb.kit.fingerprint of the chapter text file (tests/chapters/test_fingerprints.py recomputes it).
TEXT_FINGERPRINT = "330a4820184657acc0274e2614f21e63a45c423f88c8d596810b8314ab226126"

_C = ClaimSpec

CLAIMS: tuple[ClaimSpec, ...] = (
    # One turn
    _C(
        "pi-01.loop.message-added-to-branch",
        "A submitted message is added to the active branch.",
        "One turn ¶2",
    ),
    _C(
        "pi-01.loop.request-four-inputs",
        "Pi builds a model request from four things: the system prompt, the active branch, the available tools, and "
        "the model settings. That request goes out through the selected provider.",
        "One turn ¶2",
    ),
    _C(
        "pi-01.loop.response-text-and-tool-calls",
        "The provider streams back an assistant response, which can contain text and tool calls.",
        "One turn ¶3",
        layer="agent",
    ),
    _C(
        "pi-01.loop.records-executes-records",
        "Pi records the response, executes any requested tool calls, and records the results. That completes one "
        "model-and-tool cycle.",
        "One turn ¶3",
        layer="agent",
    ),
    _C(
        "pi-01.loop.wider-run",
        "The wider run may continue through another request, a queued message, or application-level recovery.",
        "One turn ¶3",
        notes=(
            "observed with tool results, a queued follow-up and a settlement handler; provider-error recovery "
            "is not scripted",
        ),
    ),
    _C(
        "pi-01.loop.continuation-test",
        "Do the tool results, or queued messages, require another model request? | +-- yes -> start another turn | "
        "+-- no -> the run ends",
        "One turn, the continuation test",
        layer="agent",
    ),
    _C(
        "pi-01.loop.turn-shape",
        "A turn has a fixed shape. It is one request plus the tool execution that follows it. The tool execution is "
        "not a separate loop; it belongs to the turn that asked for it.",
        "One turn, first load-bearing property (bullet 1)",
        layer="agent",
    ),
    _C(
        "pi-01.loop.continuation-explicit",
        "Continuation is an explicit decision. Tool results and queued messages can cause another request. At the "
        "application layer, retries, recovery and settlement handlers can also affect when the run actually ends.",
        "One turn, second load-bearing property (bullet 2)",
        notes=(
            "retries and overflow recovery need a provider error path the scenarios do not script; the "
            "experiment covers tool results, a queued follow-up and a settlement handler",
        ),
    ),
    _C(
        "pi-01.loop.request-assembled",
        "The request is assembled, not written. It is built from parts",
        "One turn, third load-bearing property (bullet 3)",
        backends=STANDIN,
        notes=(
            "checked on pinb's request assembly: the same parts give the same request, changing one part "
            "changes only its own input",
        ),
    ),
    # Four inputs, one request
    _C(
        "pi-01.inputs.branch-injection",
        "An extension that inserts a sentence into the conversation is working on the second input — the active "
        "branch.",
        "Four inputs, one request ¶2",
    ),
    _C(
        "pi-01.inputs.tool-registration",
        "An extension that registers a tool is working on the third — the available tools.",
        "Four inputs, one request ¶2",
        notes=(
            "scenarios declare tools rather than registering them from an extension; the experiment adds one "
            "declared tool and observes which request input changes",
        ),
    ),
    _C(
        "pi-01.inputs.neither-changes-other",
        "Both end up in the same request, both appear to “change what the model sees”, and changing one does "
        "nothing to the other.",
        "Four inputs, one request ¶2",
    ),
    _C(
        "pi-01.inputs.table-system-prompt",
        "System prompt Pi’s base instructions plus discovered context files SYSTEM.md, APPEND_SYSTEM.md, AGENTS.md, "
        "or an event handler",
        "Four inputs, one request, table row 1",
        backends=STANDIN,
        notes=(
            "the pi backend runs sessions with context files off (scenario format), so only the stand-in's "
            "resource loader can be checked here",
        ),
    ),
    _C(
        "pi-01.inputs.table-active-branch",
        "Active branch The conversation history that leads to the current entry The conversation itself, or "
        "context / context_with_system",
        "Four inputs, one request, table row 2",
        backends=STANDIN,
    ),
    _C(
        "pi-01.inputs.table-tools",
        "Available tools What the model may call pi.registerTool(), pi.setActiveTools()",
        "Four inputs, one request, table row 3",
        backends=STANDIN,
    ),
    reported(
        "pi-01.inputs.table-model-settings",
        "Model settings Which model, and how hard it thinks /model, thinking level, settings.json",
        "Four inputs, one request, table row 4",
        "/model is a terminal command and the scenarios pin one faux model with thinking off; model choice never "
        "reaches a trace",
    ),
    # What is the active branch?
    _C(
        "pi-01.tree.entries-id-parent",
        "Pi stores sessions as trees. Each entry has an ID and refers to its parent.",
        "What is the active branch? ¶1",
        backends=STANDIN,
        notes=("session files are not part of a pi trace; checked on the stand-in's session tree",),
    ),
    _C(
        "pi-01.tree.active-branch-supplies-history",
        "The path from the root to the current entry is the active branch, and that path is what supplies the "
        "history for the next request.",
        "What is the active branch? ¶1",
        backends=STANDIN,
    ),
    _C(
        "pi-01.tree.branches-survive-edits",
        "The branch is not the session. A session file can contain several branches. Going back and editing creates "
        "another one. Everything on the other branches still exists in the file.",
        "What is the active branch? ¶3",
        backends=STANDIN,
    ),
    _C(
        "pi-01.tree.walk-versus-branch",
        "A tool that walks the tree and a tool that reads the branch will disagree about what “earlier” means, and "
        "both will be correct about their own question.",
        "What is the active branch? ¶3",
        backends=STANDIN,
    ),
    _C(
        "pi-01.compaction.replaces-in-later-requests",
        "When Pi compacts, it inserts a summary entry that replaces older messages in subsequent requests.",
        "What is the active branch? ¶4",
        backends=STANDIN,
    ),
    _C(
        "pi-01.compaction.entries-stay",
        "Compaction does not delete. When Pi compacts, it inserts a summary entry that replaces older messages in "
        "subsequent requests. The original entries stay in the tree.",
        "What is the active branch? ¶4",
        backends=STANDIN,
    ),
    # The turn is not the run
    _C(
        "pi-01.run.turn-versus-run",
        "A turn is one model request plus the tool execution that follows it. A run is the whole sequence — turn, "
        "tool results, another turn, tool results, until nothing more is needed.",
        "The turn is not the run ¶2",
        layer="agent",
    ),
    _C(
        "pi-01.run.agent-end-not-the-end",
        "Correct: “agent_end closed one low-level agent run. Automatic retry, overflow recovery, compaction, "
        "steering or follow-up work can still follow.”",
        "The turn is not the run ¶4",
        notes=("observed with a settlement handler that requests one continuation after agent_end",),
    ),
    _C(
        "pi-01.settle.before-settle-actionable",
        "agent_before_settle — the final actionable boundary. A handler here can append entries and request one "
        "continuation.",
        "The turn is not the run, bullet 1",
    ),
    _C(
        "pi-01.settle.settled-final",
        "agent_settled — final and notification-only. Nothing can continue after it.",
        "The turn is not the run, bullet 2",
    ),
    _C(
        "pi-01.settle.permission-sequence",
        "agent_end is a checkpoint you can act after. agent_before_settle is the last point at which a handler can "
        "still change what happens — it can append entries and ask for one more turn. agent_settled is past all "
        "action: it announces that the run is done, and nothing can continue after it.",
        "The turn is not the run ¶6",
    ),
    # Queued messages
    _C(
        "pi-01.queue.steering-after-turn",
        "Steering messages enter after the current assistant turn. They do not interrupt the tool calls already in "
        "flight; they land once that turn closes.",
        "Queued messages ¶2",
        layer="agent",
    ),
    _C(
        "pi-01.queue.follow-up-after-pending-work",
        "Follow-up messages enter after the agent has finished its pending work. That is after the agent stops "
        "asking for turns, not after agent_settled: queued follow-up work is resolved before the final settlement "
        "boundary",
        "Queued messages ¶3",
    ),
    _C(
        "pi-01.queue.abort-keeps-queued",
        "And aborting stops the current run and returns queued messages to the editor, rather than discarding them.",
        "Queued messages ¶5",
        layer="agent",
        notes=(
            "checked: abort stops the run and the queued messages are still held afterwards; returning them to "
            "the editor is the terminal's job (pi-01.queue.abort-returns-to-editor)",
        ),
    ),
    reported(
        "pi-01.queue.abort-returns-to-editor",
        "To stop the current work, abort the run; queued messages can then return to the editor.",
        "Queued messages ¶6",
        TUI_REASON,
    ),
    # Where the context comes from
    _C(
        "pi-01.context.base-and-context-files",
        "The system prompt is built from Pi’s base instructions and discovered context files. The request also "
        "carries tool definitions and skill descriptions.",
        "Where the context comes from ¶2",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.skill-instructions-on-demand",
        "Full skill instructions are not included merely because a skill is available. Pi can advertise skills by "
        "their descriptions; the instructions enter the conversation when a skill is selected and its content is "
        "read.",
        "Where the context comes from ¶3",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.extensions-add-instructions",
        "Extensions can add instructions or transform context.",
        "Where the context comes from ¶4",
    ),
    reported(
        "pi-01.context.prompt-templates-in-editor",
        "Prompt templates expand in the editor before anything becomes a user message.",
        "Where the context comes from ¶4",
        TUI_REASON,
    ),
    reported(
        "pi-01.context.editor-input",
        "Selected files, images, pasted text and shell output can all become message content.",
        "Where the context comes from ¶4",
        TUI_REASON,
    ),
    _C(
        "pi-01.context.agents-md-by-directory",
        "context files AGENTS.md and friends, discovered by directory",
        "Where the context comes from, the context ladder, line 2",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.append-system-additive",
        "APPEND_SYSTEM.md additive instructions",
        "Where the context comes from, the context ladder, line 3",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.system-md-replaces",
        "SYSTEM.md replaces the base prompt",
        "Where the context comes from, the context ladder, line 4",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.skill-descriptions-always",
        "skill descriptions always present skill instructions loaded on demand, when matched",
        "Where the context comes from, the context ladder, lines 5–6",
        backends=STANDIN,
    ),
    _C(
        "pi-01.context.tool-definitions-active",
        "tool definitions always present, for active tools",
        "Where the context comes from, the context ladder, line 7",
        notes=("on pi the active tools are the scenario's tools; the stand-in also checks a tool set inactive",),
    ),
    # The loop, as a drawing
    reported(
        "pi-01.diagram.attachment-points",
        "registerTool lands on EXECUTION; a context handler lands on REQUEST; a provider lands on PROVIDER; and "
        "pi.on for any event lands on the edges — the moments between boxes",
        "The loop, as a drawing ¶3",
        "a map of where extension points attach; the attachments themselves are checked by the input, event and "
        "seam claims",
    ),
    reported(
        "pi-01.procedure.misattachment",
        "an extension bug may be correct code attached to the wrong place, rather than incorrect code attached to "
        "the right one.",
        "Why this chapter is first ¶5",
        DESIGN_REASON,
    ),
    # What kind of thing the loop is
    _C(
        "pi-01.packages.graph",
        "pi-ai model access: provider SDKs, schemas, telemetry. No loop, no tool execution, no session. ↑ "
        "pi-agent-core pi-ai + typebox.",
        "What kind of thing the loop is, the package graph",
        backends=PI,
        layer="package",
        notes=("package facts need the real packages' manifests",),
    ),
    _C(
        "pi-01.packages.coding-agent-composes",
        "pi-coding-agent composes pi-agent-core and pi-ai directly, with pi-tui, pi-mcp, pi-codemode and chord",
        "What kind of thing the loop is, the package graph",
        backends=PI,
        layer="package",
    ),
    _C(
        "pi-01.packages.core-no-tui",
        "pi-agent-core depends on nothing from pi-tui, and pi-tui depends on nothing from the agent.",
        "What kind of thing the loop is ¶4",
        backends=PI,
        layer="package",
    ),
    _C(
        "pi-01.packages.core-runs-alone",
        "The core runs without a terminal, without an application, and without a provider-specific model.",
        "What kind of thing the loop is ¶4",
        layer="agent",
    ),
    reported(
        "pi-01.layers.embeddable",
        "You can embed it; the same agent then drives a terminal, a JSON stream, an RPC process, or an application "
        "you wrote yourself.",
        "What kind of thing the loop is ¶4",
        XREF_REASON + " (the interfaces are chapters 31 to 35); here only the embedding without a terminal runs "
        "(pi-01.packages.core-runs-alone)",
    ),
    _C(
        "pi-01.packages.core-description",
        "Its own package description is a “general-purpose agent with transport abstraction, state management, and "
        "attachment support”",
        "What kind of thing the loop is ¶5",
        backends=PI,
        layer="package",
    ),
    _C(
        "pi-01.packages.core-size",
        "the shipped module is about sixty kilobytes across an agent, a loop, a proxy and the type surface.",
        "What kind of thing the loop is ¶5",
        backends=PI,
        layer="package",
        notes=("'about sixty kilobytes' is read as 45–75 kB of the dist JavaScript, excluding maps and .d.ts",),
    ),
    reported(
        "pi-01.packages.core-owns",
        "It owns the loop, messages, agent state, tool execution and the event flow.",
        "What kind of thing the loop is ¶5",
        DESIGN_REASON,
    ),
    reported(
        "pi-01.layers.stack",
        "Read it as a dependency direction: each layer uses the one beneath it and knows nothing about the one above.",
        "What kind of thing the loop is ¶9",
        DESIGN_REASON,
    ),
    reported(
        "pi-01.layers.replaceability-not-isolation",
        "Replaceability says “you can put something else here.” Isolation says “what you put here can stop what "
        "happens above it.” Those are different promises, and the second does not follow from the first.",
        "Replaceability is not isolation ¶4",
        DESIGN_REASON,
    ),
    reported(
        "pi-01.layers.interfaces-same-answer",
        "chapter 31 drives one agent through print, JSON and RPC on the shipped binary and gets the same answer each "
        "time",
        "Replaceability is not isolation ¶2",
        XREF_REASON,
    ),
    # The agent core, run with no provider and no terminal
    _C(
        "pi-01.example.three-lines",
        'This program prints: stop: toolUse tool: word_count {"words":4} stop: stop',
        "The agent core, run with no provider and no terminal ¶3",
        layer="agent",
        notes=(
            "on pi, the book's TypeScript program itself (kept verbatim in reference/book-examples/) is run by Node "
            "against the Pi version's packages; on the stand-in, its Python port runs as a scenario",
        ),
    ),
    _C(
        "pi-01.example.node-runs-typescript",
        "Run it from the examples/ folder beside this book, on Node.js 22.19 or newer, which executes TypeScript "
        "directly.",
        "The agent core, run with no provider and no terminal ¶2",
        backends=PI,
        layer="agent",
        notes=(
            "checked by running the book's program as `node <file>.ts` with the reference Node 22, no flag and no "
            "compile step; the examples/ folder is the book's own layout",
        ),
    ),
    _C(
        "pi-01.example.provider-is-one-argument",
        "The provider is one argument, streamFn.",
        "The agent core, run with no provider and no terminal ¶6",
        backends=STANDIN,
        layer="agent",
        notes=("needs a second provider passed in code; the pi runner builds its Agent itself",),
    ),
    _C(
        "pi-01.example.tool-shape",
        "The tool is a plain object whose execute() returns content and details",
        "The agent core, run with no provider and no terminal ¶6",
        layer="agent",
    ),
    _C(
        "pi-01.example.runs-on-pinned-packages",
        "The specific program, examples/ch01-agent-core/agent-core.ts, is run by the book’s test suite against "
        "@earendil-works/pi-agent-core and @earendil-works/pi-ai 1.0.4, the pinned release.",
        "The agent core, run with no provider and no terminal ¶7",
        backends=PI,
        layer="agent",
        notes=(
            "1.0.4 is not on the registry; the pi backend runs the book's program, verbatim, on the nearest "
            "release (1.0.3) and on 1.6.0, and package facts say which versions exist",
        ),
    ),
    _C(
        "pi-01.packages.pinned-release",
        "@earendil-works/pi-agent-core and @earendil-works/pi-ai 1.0.4, the pinned release.",
        "The agent core, run with no provider and no terminal ¶7",
        backends=PI,
        layer="package",
        notes=("checked against the versions published on the npm registry",),
    ),
    reported(
        "pi-01.example.api-documented",
        "the Agent class, agent.subscribe(), fauxProvider() and the streamFn option are documented in the packages' "
        "READMEs and declarations.",
        "The agent core, run with no provider and no terminal ¶7",
        DOCS_REASON,
    ),
    reported(
        "pi-01.representation.not-responsibility",
        "So the useful test is not does this layer mention the thing, which is meaningless, but does this layer "
        "decide.",
        "Representation crossing a boundary is not responsibility crossing it ¶4",
        DESIGN_REASON,
    ),
    # Where the layer boundary actually is
    reported(
        "pi-01.fork.compact-on-overflow",
        "Compact when a model rejects a context that is too long. An extension can observe session_before_compact "
        "and can act after one, and it can call ctx.compact() itself. It cannot intercept the point at which a "
        "provider rejects an over-long request",
        "Where the layer boundary actually is, case 1",
        FORK_REASON,
    ),
    reported(
        "pi-01.fork.refuse-session",
        "Refuse to start a session on a model that cannot afford it. A budget check that throws from "
        "createAgentSession runs in the constructor, which happens before any extension hook is wired.",
        "Where the layer boundary actually is, case 2",
        FORK_REASON,
    ),
    reported(
        "pi-01.fork.prompt-from-parts",
        "Build the system prompt from parts rather than by appending to it. A before_agent_start handler may append "
        "to the prompt for one turn. It cannot replace the builder that produced it",
        "Where the layer boundary actually is, case 3",
        FORK_REASON,
    ),
    _C(
        "pi-01.seam.before-agent-start-text-not-builder",
        "appending can change the prompt’s text without changing its structure.",
        "Where the layer boundary actually is, case 3",
        backends=STANDIN,
        notes=(
            "observed on the stand-in's application layer: a before_agent_start system prompt changes one "
            "prompt's request, and the next prompt is built by the same builder again",
        ),
    ),
    reported(
        "pi-01.seam.principle",
        "An extension point is a real architectural seam only for decisions it can intercept before those decisions "
        "become irreversible.",
        "Where the layer boundary actually is ¶4",
        DESIGN_REASON,
    ),
    _C(
        "pi-01.seam.prepare-request-throw-stops",
        "a prepareRequest that throws stops the request",
        "Where the layer boundary actually is ¶6",
        layer="agent",
        notes=(
            "run as scenarios with pinb's hooks extension of the format (the Agent's prepareRequest), on the "
            "stand-in and on real Pi 1.0.3 and 1.6.0; the book says it was observed on 1.0.4, which was never "
            "published",
        ),
    ),
    _C(
        "pi-01.seam.before-tool-call-mutation",
        "a beforeToolCall that mutates args changes what the tool receives.",
        "Where the layer boundary actually is ¶6",
        layer="agent",
        notes=("as above, with the Agent's beforeToolCall; the tool's result shows which arguments it received",),
    ),
    reported(
        "pi-01.seam.named-decision",
        "First, a seam is a seam for a named decision. beforeToolCall is a seam for “may this effect happen”, and, as "
        "chapter 39 shows, a hook that is no seam for that decision can still be one for another (“does this run "
        "continue”).",
        "Where the layer boundary actually is ¶5",
        XREF_REASON + " (chapter 39 runs it)",
    ),
    reported(
        "pi-01.seam.undocumented",
        "Both are observed on 1.0.4. Neither is documented, and a policy built on either is built on an "
        "implementation detail.",
        "Where the layer boundary actually is ¶6",
        DOCS_REASON,
    ),
    reported(
        "pi-01.seam.narrow-claim",
        "several lifecycle decisions — when to compact, whether to admit a session, how the base prompt is "
        "constructed — are ones an extension can see too late to influence",
        "Where the layer boundary actually is ¶9",
        FORK_REASON,
    ),
    reported(
        "pi-01.procedure.any-pipeline",
        "It is stated here as the book’s proposed procedure, not as a measured result",
        "The same test on any assembly-to-execution pipeline ¶1",
        DESIGN_REASON,
    ),
)

__all__ = ["BOTH", "CHAPTER_ID", "CLAIMS", "NOTEBOOK", "NUMBER", "TEXT_FILE", "TEXT_FINGERPRINT", "TITLE"]
