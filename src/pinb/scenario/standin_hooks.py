"""Scenario ``hooks`` for the stand-in's agent layer: the ``Agent``'s ``prepare_request``, ``before_tool_call`` and
``after_tool_call`` options built from the declarative hook kinds (scenarios/README.md, "hooks").

Each hook does what the real runner's JavaScript hook does, so their effects show up alike in the compared lines:
no ``model`` line after a ``prepare_request`` that throws, the tool's result computed from mutated arguments, an
error result for a blocked call, a patched result.
"""

from __future__ import annotations

from typing import Any, assert_never

from pinb.agent import AfterToolCallResult, BeforeToolCallResult
from pinb.ai import TextContent
from pinb.scenario.model import BlockCall, HookRecord, Hooks, HookThrow, MutateArgs, PatchResult
from pinb.scenario.trace import blocks_text, to_pi_json

__all__ = ["agent_hook_options"]


class _Counter:
    def __init__(self) -> None:
        self.invocations = 0

    def next(self) -> int:
        self.invocations += 1
        return self.invocations


def _throw_if_due(hook: HookThrow, counter: _Counter) -> None:
    if counter.next() == hook.at:
        raise RuntimeError(hook.message)


def _prepare_request(hook: HookRecord | HookThrow) -> Any:
    counter = _Counter()

    async def prepare_request(_request: Any, _signal: Any = None) -> None:
        if isinstance(hook, HookThrow):
            _throw_if_due(hook, counter)

    return prepare_request


def _before_tool_call(hook: HookRecord | HookThrow | MutateArgs | BlockCall) -> Any:
    counter = _Counter()

    async def before_tool_call(context: Any, _signal: Any = None) -> BeforeToolCallResult | None:
        match hook:
            case HookRecord():
                return None
            case HookThrow():
                _throw_if_due(hook, counter)
                return None
            case MutateArgs():
                # Object.assign(context.args, set): the validated arguments object the tool is called with.
                if isinstance(context.args, dict):
                    context.args.update(hook.set)
                return None
            case BlockCall():
                return BeforeToolCallResult(block=True, reason=hook.reason)
            case _:
                assert_never(hook)

    return before_tool_call


def _after_tool_call(hook: HookRecord | HookThrow | PatchResult) -> Any:
    counter = _Counter()

    async def after_tool_call(context: Any, _signal: Any = None) -> AfterToolCallResult | None:
        match hook:
            case HookRecord():
                return None
            case HookThrow():
                _throw_if_due(hook, counter)
                return None
            case PatchResult():
                fields = hook.patch_fields()
                current = blocks_text(to_pi_json(context.result).get("content")) or ""
                patch: dict[str, Any] = {}
                if "text" in fields:
                    patch["content"] = (TextContent(text=fields["text"].replace("{text}", current)),)
                if "isError" in fields:
                    patch["is_error"] = fields["isError"]
                if "details" in fields:
                    patch["details"] = fields["details"]
                return AfterToolCallResult(**patch)
            case _:
                assert_never(hook)

    return after_tool_call


def agent_hook_options(hooks: Hooks | None) -> dict[str, Any]:
    """Keyword arguments for ``Agent(...)``: one callable per hook the scenario sets."""
    if hooks is None:
        return {}
    options: dict[str, Any] = {}
    if hooks.prepare_request is not None:
        options["prepare_request"] = _prepare_request(hooks.prepare_request)
    if hooks.before_tool_call is not None:
        options["before_tool_call"] = _before_tool_call(hooks.before_tool_call)
    if hooks.after_tool_call is not None:
        options["after_tool_call"] = _after_tool_call(hooks.after_tool_call)
    return options
