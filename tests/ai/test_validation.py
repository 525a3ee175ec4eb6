"""Tool-argument validation against answers real Pi 1.6.0 gave.

``golden/validation_pi160.json`` holds schema/arguments pairs and what pi-ai 1.6.0's ``validateToolArguments``
returned for them (``{"ok": coerced arguments}`` or ``{"err": message}``), recorded once with Node.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pinb.ai import ToolArgumentsError, validate_tool_arguments
from pinb.ai.validation import format_validation_path

GOLDEN = json.loads((Path(__file__).parent / "golden" / "validation_pi160.json").read_text())


def outcome(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    tool = SimpleNamespace(parameters=schema)
    call = SimpleNamespace(name="t", arguments=arguments, arguments_error=None)
    try:
        return {"ok": validate_tool_arguments(tool, call)}
    except ToolArgumentsError as error:
        return {"err": str(error)}


@pytest.mark.parametrize("case", GOLDEN, ids=[json.dumps(c["arguments"])[:40] for c in GOLDEN])
def test_matches_pi(case: dict[str, Any]) -> None:
    assert outcome(case["schema"], case["arguments"]) == case["pi"]


def test_arguments_are_not_modified() -> None:
    arguments = {"n": "3"}
    result = outcome({"type": "object", "properties": {"n": {"type": "integer"}}}, arguments)
    assert result == {"ok": {"n": 3}} and arguments == {"n": "3"}


def test_arguments_error_is_reported_first() -> None:
    call = SimpleNamespace(name="t", arguments={}, arguments_error="not JSON: {oops")
    with pytest.raises(ToolArgumentsError) as raised:
        validate_tool_arguments(SimpleNamespace(parameters={"type": "object"}), call)
    assert str(raised.value) == 'Invalid arguments for tool "t": not JSON: {oops'


@pytest.mark.parametrize(
    ("pointer", "path"), [("", "root"), ("/edits/0/oldText", "edits.0.oldText"), ("/a~1b/c~0d", "a/b.c~d")]
)
def test_paths_as_the_model_sees_them(pointer: str, path: str) -> None:
    assert format_validation_path(pointer) == path


def test_a_malformed_schema_is_an_error_not_a_crash() -> None:
    assert (
        "A schema must be an object or a boolean"
        in outcome({"type": "object", "properties": {"x": 3}}, {"x": 1})["err"]
    )
