"""``pinb.ai`` and ``pinb.app`` each had a ``JSON.stringify``; ``pinb.ai``'s kept insertion order for integer-like
keys (JavaScript puts them first, ascending), wrote a function inside an array as a quoted Python repr (JavaScript
writes ``null``), wrote ``True`` as a key and failed on a lone surrogate. There is now one, in ``pinb.ai.jsjson``."""

from __future__ import annotations

import pytest

from pinb.ai.jsjson import js_stringify
from pinb.app.js_compat import UNDEFINED, json_stringify


def _function() -> None:
    return None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1, "2": 2, "1": 3}, '{"1":3,"2":2,"b":1}'),
        ([_function, UNDEFINED], "[null,null]"),
        ({True: 1, "f": _function}, '{"true":1}'),
        ("a\ud800", '"a\\ud800"'),
    ],
)
def test_ai_writes_what_app_writes(value: object, text: str) -> None:
    assert js_stringify(value) == json_stringify(value) == text


def test_indent_drops_undefined_members_and_keeps_empty_containers() -> None:
    expected = '{\n  "a": [\n    null\n  ],\n  "c": {}\n}'
    assert js_stringify({"a": [UNDEFINED], "b": UNDEFINED, "c": {"d": UNDEFINED}}, indent=2) == expected


def test_no_json_form_is_misuse() -> None:
    from pinb.errors import UsageError

    with pytest.raises(UsageError):
        js_stringify(UNDEFINED)
    with pytest.raises(UsageError):
        js_stringify({1, 2})
