"""The UI an extension talks to through ``ctx.ui``: Pi's no-op UI (no UI at all) and a scriptable one.

Pi gives handlers a no-op UI when the mode has none (``ctx.has_ui`` false): ``confirm`` answers ``False``, ``select``
/ ``input`` / ``editor`` answer ``None``, everything else does nothing. ``ScriptedUI`` stands in for a person so code
that asks the user runs headlessly: its dialogs answer from a script and every call is recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

UICallKind = Literal["select", "confirm", "input", "editor", "custom", "notify", "set_status", "set_title"]


@dataclass(frozen=True)
class UICall:
    """One call an extension made on the UI."""

    kind: UICallKind
    title: str | None
    message: str | None = None
    answer: Any = None


class ExtensionUI:
    """Pi's ``ExtensionUIContext`` surface that pinb models. This base is Pi's no-op UI."""

    async def select(self, title: str, options: Sequence[str], opts: Any = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str, opts: Any = None) -> bool:
        return False

    async def input(self, title: str, placeholder: str | None = None, opts: Any = None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return None

    async def custom(self, factory: Any, options: Any = None) -> Any:
        return None

    def notify(self, message: str, kind: str = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_widget(self, key: str, content: Any) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""


class NoOpUI(ExtensionUI):
    """No UI (print/json mode, or a session built without one): ``ctx.has_ui`` is false."""


#: The one no-op UI; ``ctx.has_ui`` is "the UI is not this object", as in Pi.
NO_OP_UI = NoOpUI()

Answer = Any
Script = Answer | Sequence[Answer] | Callable[..., Answer]


class _Answers:
    """A fixed answer, a sequence consumed in order (its last answer repeats), or a callable."""

    def __init__(self, script: Script, default: Answer) -> None:
        self._script = script
        self._default = default
        self._index = 0

    def next(self, *args: Any) -> Answer:
        script = self._script
        if callable(script):
            return script(*args)
        if isinstance(script, (list, tuple)):
            if not script:
                return self._default
            answer = script[min(self._index, len(script) - 1)]
            self._index += 1
            return answer
        return script


class ScriptedUI(ExtensionUI):
    """A UI whose dialogs answer from a script; ``calls`` records every call in order.

    ``on_call`` sees each call as it is made (a trace writer uses it to record what the dialogs were asked).
    """

    def __init__(
        self,
        *,
        confirm: Script = False,
        select: Script = None,
        input: Script = None,
        editor: Script = None,
        on_call: Callable[[UICall], None] | None = None,
    ) -> None:
        self._confirm = _Answers(confirm, False)
        self._select = _Answers(select, None)
        self._input = _Answers(input, None)
        self._editor = _Answers(editor, None)
        self.calls: list[UICall] = []
        self._on_call = on_call
        self.notifications: list[tuple[str, str]] = []
        self.status: dict[str, str | None] = {}
        self.title: str | None = None

    def _record(self, call: UICall) -> None:
        self.calls.append(call)
        if self._on_call is not None:
            self._on_call(call)

    async def select(self, title: str, options: Sequence[str], opts: Any = None) -> str | None:
        answer = self._select.next(title, list(options))
        self._record(UICall("select", title, None, answer))
        return answer

    async def confirm(self, title: str, message: str, opts: Any = None) -> bool:
        answer = bool(self._confirm.next(title, message))
        self._record(UICall("confirm", title, message, answer))
        return answer

    async def input(self, title: str, placeholder: str | None = None, opts: Any = None) -> str | None:
        answer = self._input.next(title, placeholder)
        self._record(UICall("input", title, placeholder, answer))
        return answer

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        answer = self._editor.next(title, prefill)
        self._record(UICall("editor", title, prefill, answer))
        return answer

    async def custom(self, factory: Any, options: Any = None) -> Any:
        self._record(UICall("custom", None))
        return None

    def notify(self, message: str, kind: str = "info") -> None:
        self.notifications.append((kind, message))
        self._record(UICall("notify", None, message))

    def set_status(self, key: str, text: str | None) -> None:
        self.status[key] = text
        self._record(UICall("set_status", key, text))

    def set_title(self, title: str) -> None:
        self.title = title
        self._record(UICall("set_title", title))


class PromptEventUI(ExtensionUI):
    """Wraps a real UI so blocking dialogs announce themselves, as Pi's runner does.

    ``on_prompt(kind, title, starting)`` is called at the start and the end of the outermost dialog; nested dialogs
    (a dialog opened while another waits) produce no events of their own.
    """

    def __init__(self, inner: ExtensionUI, on_prompt: Callable[[str, str | None, bool], None]) -> None:
        self.inner = inner
        self._on_prompt = on_prompt
        self._depth = 0
        self._active: tuple[str, str | None] | None = None

    async def _prompt(self, kind: str, title: str | None, run: Callable[[], Any]) -> Any:
        self._depth += 1
        outermost = self._depth == 1
        if outermost:
            self._active = (kind, title)
            # Pi queues the announcement, then calls the UI at once: the UI is asked first, the announcement's
            # handlers start next, and both before the dialog's answer reaches the caller.
            call: Any = asyncio.ensure_future(run())
            self._on_prompt(kind, title, True)
        else:
            call = run()
        try:
            if outermost:
                await asyncio.sleep(0)
            return await call
        except asyncio.CancelledError:
            if isinstance(call, asyncio.Future):
                call.cancel()
            raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                active_kind, active_title = self._active or (kind, title)
                self._active = None
                self._on_prompt(active_kind, active_title, False)
                await asyncio.sleep(0)

    async def select(self, title: str, options: Sequence[str], opts: Any = None) -> str | None:
        return await self._prompt("select", title, lambda: self.inner.select(title, options, opts))

    async def confirm(self, title: str, message: str, opts: Any = None) -> bool:
        return await self._prompt("confirm", title, lambda: self.inner.confirm(title, message, opts))

    async def input(self, title: str, placeholder: str | None = None, opts: Any = None) -> str | None:
        return await self._prompt("input", title, lambda: self.inner.input(title, placeholder, opts))

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return await self._prompt("editor", title, lambda: self.inner.editor(title, prefill))

    async def custom(self, factory: Any, options: Any = None) -> Any:
        return await self._prompt("custom", None, lambda: self.inner.custom(factory, options))

    def notify(self, message: str, kind: str = "info") -> None:
        self.inner.notify(message, kind)

    def set_status(self, key: str, text: str | None) -> None:
        self.inner.set_status(key, text)

    def set_title(self, title: str) -> None:
        self.inner.set_title(title)

    def set_widget(self, key: str, content: Any) -> None:
        self.inner.set_widget(key, content)

    def set_editor_text(self, text: str) -> None:
        self.inner.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self.inner.get_editor_text()
