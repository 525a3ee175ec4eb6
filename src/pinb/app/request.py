"""A model request seen as its four inputs: system prompt, active branch, tools, model settings.

``request_inputs(...)`` assembles them the way Pi 1.6.0 does for the next request:

1. the **system prompt**: replayed from the system messages on the active branch when it has any (in 1.6.0 the
   prompt and the tool declarations ride in the transcript as system messages), else built by the 1.6.0 builder
   from the workspace's resources (context files, ``SYSTEM.md``, ``APPEND_SYSTEM.md``, skills, trust);
2. the **active branch**: ``SessionManager.build_session_context()`` (compaction-aware), then ``convert_to_llm``;
3. the **tools**: the declarations replayed from the branch, else those of the given tools;
4. the **model settings**: the given model and thinking level, else the ones the branch last selected.

Each input is a separate field, so a notebook can show which one an extension changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pinb.ai.transcript import get_current_system_prompt, get_current_tools, to_tool_declaration
from pinb.ai.types import SystemMessage, Tool, to_json
from pinb.app.resources import LoadedResources, Workspace, load_resources
from pinb.app.session_messages import convert_to_llm
from pinb.app.session_tree import SessionManager
from pinb.app.system_prompt import SystemPromptOptions, build_system_prompt, options_from_resources

__all__ = ["ModelSettings", "RequestInputs", "request_inputs"]


@dataclass(frozen=True)
class ModelSettings:
    """The fourth input: which model, and how hard it should think."""

    provider: str | None
    model_id: str | None
    thinking_level: str = "off"


@dataclass(frozen=True)
class RequestInputs:
    """The four inputs of one model request."""

    #: Input 1: the system prompt text the model receives.
    system_prompt: str
    #: Input 2: the active branch as the session projects it (application messages such as compaction
    #: summaries included; system messages left out: they are inputs 1 and 3).
    messages: tuple[Any, ...]
    #: Input 3: the tool declarations the model is told about.
    tools: tuple[Tool, ...]
    #: Input 4: model and thinking level.
    model: ModelSettings
    #: Where the prompt came from: ``"transcript"`` (replayed system messages) or ``"builder"``.
    system_prompt_source: str = "builder"

    def llm_messages(self) -> list[Any]:
        """The branch as the provider receives it (``convert_to_llm``: summaries and custom messages as user text)."""
        return convert_to_llm(self.messages)

    def summary(self) -> dict[str, Any]:
        """A compact, JSON-friendly view for notebooks."""
        return {
            "system_prompt": {"source": self.system_prompt_source, "characters": len(self.system_prompt)},
            "active_branch": [getattr(m, "role", type(m).__name__) for m in self.messages],
            "tools": [tool.name for tool in self.tools],
            "model": {
                "provider": self.model.provider,
                "model_id": self.model.model_id,
                "thinking_level": self.model.thinking_level,
            },
        }

    def to_json(self) -> dict[str, Any]:
        """All four inputs as JSON (messages in Pi's camelCase form)."""
        return {
            "systemPrompt": self.system_prompt,
            "messages": [to_json(m) for m in self.messages],
            "tools": [to_json(t) for t in self.tools],
            "model": {
                "provider": self.model.provider,
                "modelId": self.model.model_id,
                "thinkingLevel": self.model.thinking_level,
            },
        }


def request_inputs(
    session: SessionManager,
    *,
    workspace: Workspace | None = None,
    resources: LoadedResources | None = None,
    prompt_options: SystemPromptOptions | None = None,
    tools: Sequence[Any] = (),
    model: ModelSettings | None = None,
) -> RequestInputs:
    """The four inputs of the next request from ``session``'s active branch.

    ``prompt_options`` wins over ``resources``, which win over ``workspace`` (loaded with Pi's rules); with none of
    them and no system message on the branch, the prompt is the builder's default for the session's cwd.
    """
    context = session.build_session_context()
    system_messages = [m for m in context.messages if isinstance(m, SystemMessage)]
    branch = tuple(m for m in context.messages if not isinstance(m, SystemMessage))
    declared = tuple(to_tool_declaration(tool) for tool in tools)
    if system_messages:
        prompt, source = get_current_system_prompt(system_messages), "transcript"
        replayed = tuple(get_current_tools(system_messages))
        declared = replayed or declared
    else:
        options = prompt_options
        if options is None:
            if resources is None and workspace is not None:
                resources = load_resources(workspace)
            cwd = workspace.cwd if workspace is not None else session.cwd
            names = [tool.name for tool in declared] if tools else None
            if resources is not None:
                options = options_from_resources(resources, cwd, *([names] if names is not None else []))
            else:
                options = SystemPromptOptions(cwd=cwd, **({"selected_tools": names} if names is not None else {}))
        prompt, source = build_system_prompt(options), "builder"
    if model is None:
        model = ModelSettings(
            provider=context.model.provider if context.model else None,
            model_id=context.model.model_id if context.model else None,
            thinking_level=context.thinking_level,
        )
    return RequestInputs(
        system_prompt=prompt, messages=branch, tools=declared, model=model, system_prompt_source=source
    )
