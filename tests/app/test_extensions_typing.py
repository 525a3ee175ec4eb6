"""``ExtensionAPI.on`` has one overload per event: a handler with the wrong result type is a type error.

Runs mypy (a test dependency); skipped where it is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SOURCE = """
from pinb.app.extensions import ExtensionAPI, ExtensionContext
from pinb.app.extensions.events import InputEvent, ToolCallEvent
from pinb.app.extensions.results import InputTransform, ToolCallEventResult


def good(pi: ExtensionAPI) -> None:
    def guard(event: ToolCallEvent, ctx: ExtensionContext) -> ToolCallEventResult | None:
        return ToolCallEventResult(block=True, reason="no")

    async def transform(event: InputEvent, ctx: ExtensionContext) -> InputTransform:
        return InputTransform(text=event.text)

    pi.on("tool_call", guard)
    pi.on("input", transform)


def bad(pi: ExtensionAPI) -> None:
    def wrong(event: ToolCallEvent, ctx: ExtensionContext) -> InputTransform:
        return InputTransform(text="x")

    pi.on("tool_call", wrong)  # line 21: wrong result type
    pi.on("input", wrong)  # line 22: wrong event type
"""


def test_wrong_handler_types_are_rejected_by_the_type_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    source = tmp_path / "check_on.py"
    source.write_text(SOURCE.lstrip("\n"), encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(Path(__file__).resolve().parents[2] / "src"))
    stdout, _stderr, _status = api.run(
        [str(source), "--follow-imports=silent", "--ignore-missing-imports", "--no-incremental", "--config-file="]
    )
    errors = [line for line in stdout.splitlines() if line.startswith(str(source)) and ": error:" in line]
    assert [line[len(str(source)) :].split(":")[1] for line in errors] == ["21", "22"], stdout
    assert all('No overload variant of "on"' in line for line in errors), stdout
