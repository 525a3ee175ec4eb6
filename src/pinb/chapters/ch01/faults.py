"""Chapter 01's own named faults: realistic deviations of the stand-in from Pi that chapter 01's sentences speak of.

The same switchboard shape as `pinb.testing.faults` (a `FAULTS` dict of `Fault`, each a list of patches built when
it is injected). Each one is a bug the chapter's earlier checks missed, because no witness took the path it sits
on: a SYSTEM.md that also drops the context files, a CLAUDE.md that is never looked for, overflow recovery that
asks for its summaries and then never retries the request, an abort that does not reach a running tool, and an
application-layer abort that empties the queues.
"""

from __future__ import annotations

import dataclasses
import posixpath
from typing import Any

from pinb.testing.faults import Fault, Patch, registrar

FAULTS: dict[str, Fault] = {}
fault = registrar(FAULTS)


@fault("system-md-drops-context-files", "a SYSTEM.md replaces the whole prompt: the context files are left out too")
def _system_md_drops_context() -> list[Patch]:
    from pinb.app import system_prompt

    def build(orig: Any) -> Any:
        def sections(options: Any) -> dict[str, str]:
            if options.custom_prompt:
                options = dataclasses.replace(options, context_files=())
            return dict(orig(options))

        return sections

    return [(system_prompt, "build_system_prompt_sections", build)]


@fault("claude-md-not-loaded", "CLAUDE.md is not a context-file name: only AGENTS.md files are discovered")
def _no_claude_md() -> list[Patch]:
    from pinb.app import resources

    def build(orig: Any) -> Any:
        def load(*args: Any, **kwargs: Any) -> Any:
            return [f for f in orig(*args, **kwargs) if posixpath.basename(f.path).upper() != "CLAUDE.MD"]

        return load

    return [(resources, "load_project_context_files", build)]


@fault(
    "overflow-compacts-without-retry",
    "after a context-overflow error Pi compacts (asking the model for the summaries) but never retries the request",
)
def _compacts_without_retry() -> list[Patch]:
    from pinb.app import recovery

    def build(orig: Any) -> Any:
        async def run(self: Any, reason: Any, will_retry: bool) -> bool:
            await orig(self, reason, will_retry)
            self._compaction_will_retry = False
            return bool(self.agent.has_queued_messages())

        return run

    return [(recovery.RecoveryMixin, "_run_auto_compaction", build)]


@fault("abort-misses-running-tool", "a running tool is not given the run's abort signal: an abort waits for it to end")
def _abort_misses_tool() -> list[Patch]:
    from pinb.agent import tool_execution

    def build(orig: Any) -> Any:
        async def execute(prepared: Any, signal: Any, on_update: Any) -> Any:
            return await orig(prepared, None, on_update)

        return execute

    return [(tool_execution, "_execute", build)]


@fault(
    "session-abort-clears-queues", "an agent session's abort() also drops the queued steering and follow-up messages"
)
def _session_abort_clears() -> list[Patch]:
    from pinb.app.session import AgentSession

    def build(orig: Any) -> Any:
        def abort(self: Any) -> Any:
            self.clear_queue()
            return orig(self)

        return abort

    return [(AgentSession, "abort", build)]


__all__ = ["FAULTS", "fault"]
