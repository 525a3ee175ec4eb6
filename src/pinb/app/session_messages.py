"""The coding agent's own transcript messages and their conversion for the model, like Pi's ``core/messages.ts``.

Besides pinb.ai's roles, a session's context holds three application roles: ``compactionSummary`` and
``branchSummary`` (projected from compaction and branch-summary entries) and ``bashExecution`` (a user's ``!``
command). ``convert_to_llm`` turns them into user messages with Pi's exact wording, so the summary a model
receives after compaction reads the same as in Pi.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from pinb.ai.transcript import content_text, system_message_text
from pinb.ai.transcript import get_current_system_message as current_system_message
from pinb.ai.transcript import get_current_tools as current_tools
from pinb.ai.types import (
    AssistantMessage,
    CustomMessage,
    PiRecord,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    now_ms,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "SESSION_MESSAGE_ADAPTER",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "SessionMessage",
    "bash_execution_to_text",
    "content_text",
    "convert_to_llm",
    "current_system_message",
    "current_tools",
    "system_message_text",
]

COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"


class BashExecutionMessage(PiRecord):
    """A command the user ran with ``!`` (``!!`` excludes it from the model's context)."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    #: None when the process did not report one (killed, cancelled).
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    timestamp: int = Field(default_factory=now_ms)
    #: True for ``!!``: recorded in the session, never sent to the model.
    exclude_from_context: bool | None = None


class BranchSummaryMessage(PiRecord):
    """A branch-summary entry as it enters the context."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    #: Leaf the summarised branch was left from (``"root"`` when the session was empty).
    from_id: str | None
    timestamp: int


class CompactionSummaryMessage(PiRecord):
    """A compaction entry as it enters the context (after the compaction's system-message snapshot)."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int
    timestamp: int


#: Any message a session context can hold.
SessionMessage: TypeAlias = Annotated[
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | CustomMessage
    | BashExecutionMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage,
    Field(discriminator="role"),
]
SESSION_MESSAGE_ADAPTER: TypeAdapter[Any] = TypeAdapter(SessionMessage)


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """Pi's ``bashExecutionToText``: how a ``!`` command reads to the model."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def convert_to_llm(messages: Iterable[Any]) -> list[Any]:
    """Pi's ``convertToLlm``: application messages become user messages; model messages pass through."""
    out: list[Any] = []
    for message in messages:
        match message:
            case BashExecutionMessage():
                if message.exclude_from_context:
                    continue
                text = bash_execution_to_text(message)
                out.append(UserMessage(content=(TextContent(text=text),), timestamp=message.timestamp))
            case CustomMessage():
                content = (TextContent(text=message.content),) if isinstance(message.content, str) else message.content
                out.append(UserMessage(content=content, timestamp=message.timestamp))
            case BranchSummaryMessage():
                text = BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX
                out.append(UserMessage(content=(TextContent(text=text),), timestamp=message.timestamp))
            case CompactionSummaryMessage():
                text = COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX
                out.append(UserMessage(content=(TextContent(text=text),), timestamp=message.timestamp))
            case SystemMessage() | UserMessage() | AssistantMessage() | ToolResultMessage():
                out.append(message)
            case _:
                continue  # Pi's exhaustive switch returns undefined for unknown roles, then filters them out
    return out
