"""What a handler receives as ``ctx``, and the record an extension error becomes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pinb.app.ui import ExtensionUI

if TYPE_CHECKING:
    from pinb.app.extensions.runner import ExtensionRunner


@dataclass(frozen=True)
class ExtensionErrorRecord:
    """One error Pi reports to ``on_error`` listeners: which extension (Pi's path; pinb: its name, or a synthetic
    path such as ``<boundary>`` or ``<runtime>``), which event, and the message."""

    extension_path: str
    event: str
    error: str
    stack: str | None = None


@dataclass(frozen=True)
class ModelRegistry:
    """``ctx.model_registry``: ``find(provider, model_id)`` returns the model, or ``None``."""

    find: Callable[[str, str], Any]


class ExtensionContext:
    """Pi's ``ExtensionContext``: values are read from the runner at access time, so later bindings show through.

    After the session is disposed every access raises the runner's stale-context message, as in Pi.
    """

    def __init__(self, runner: ExtensionRunner, overrides: dict[str, Callable[..., Any]] | None = None) -> None:
        self._runner = runner
        self._overrides = overrides or {}

    @property
    def ui(self) -> ExtensionUI:
        self._runner.assert_active()
        return self._runner.ui

    @property
    def mode(self) -> str:
        self._runner.assert_active()
        return self._runner.mode

    @property
    def has_ui(self) -> bool:
        self._runner.assert_active()
        return self._runner.has_ui()

    @property
    def cwd(self) -> str:
        self._runner.assert_active()
        return self._runner.cwd

    @property
    def session_manager(self) -> Any:
        self._runner.assert_active()
        return self._runner.session_manager

    @property
    def model(self) -> Any:
        self._runner.assert_active()
        return self._runner.actions.get_model()

    @property
    def model_registry(self) -> ModelRegistry:
        """The models the session's provider serves (Pi's ``ctx.modelRegistry``; ``find`` only)."""
        self._runner.assert_active()
        return ModelRegistry(self._runner.actions.find_model)

    @property
    def thinking_level(self) -> str:
        self._runner.assert_active()
        return self._runner.runtime.get_thinking_level()

    @property
    def signal(self) -> Any:
        self._runner.assert_active()
        return self._runner.actions.get_signal()

    def is_idle(self) -> bool:
        self._runner.assert_active()
        return self._runner.actions.is_idle()

    def abort(self) -> None:
        self._runner.assert_active()
        self._runner.actions.abort()

    def has_pending_messages(self) -> bool:
        self._runner.assert_active()
        return self._runner.actions.has_pending_messages()

    def shutdown(self) -> None:
        self._runner.assert_active()
        self._runner.actions.shutdown()

    def get_context_usage(self) -> Any:
        self._runner.assert_active()
        return self._runner.actions.get_context_usage()

    def compact(self, options: Any = None) -> None:
        self._runner.assert_active()
        self._runner.actions.compact(options)

    async def wait_for_idle(self) -> None:
        """Wait until the session is idle (Pi gives this to command contexts)."""
        self._runner.assert_active()
        waiter = self._runner.actions.wait_for_idle
        if waiter is not None:
            await waiter()

    def get_system_prompt(self) -> str:
        self._runner.assert_active()
        override = self._overrides.get("get_system_prompt")
        return override() if override else self._runner.actions.get_system_prompt()
