"""pinb.app: the agent application, like pi-coding-agent (session, extensions, settlement, session tree, tools)."""

from pinb.app.extensions import (
    Extension,
    ExtensionAPI,
    ExtensionContext,
    ExtensionErrorRecord,
    ExtensionRunner,
    load_extensions,
)
from pinb.app.extensions.user_commands import CompactionEndEvent, CompactionStartEvent
from pinb.app.session import (
    AgentSession,
    AgentSessionOptions,
    AgentSettledEvent,
    EntryAppendedEvent,
    QueueUpdateEvent,
    SessionAgentEndEvent,
    create_agent_session,
)
from pinb.app.settlement import AutoRetryEndEvent, AutoRetryStartEvent, ContinuationRecord, RetrySettings
from pinb.app.ui import NO_OP_UI, ExtensionUI, NoOpUI, ScriptedUI, UICall

__all__ = [
    "NO_OP_UI",
    "AgentSession",
    "AgentSessionOptions",
    "AgentSettledEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "ContinuationRecord",
    "EntryAppendedEvent",
    "Extension",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionErrorRecord",
    "ExtensionRunner",
    "ExtensionUI",
    "NoOpUI",
    "QueueUpdateEvent",
    "RetrySettings",
    "ScriptedUI",
    "SessionAgentEndEvent",
    "UICall",
    "create_agent_session",
    "load_extensions",
]
