"""pinb.ai.jsregex against V8: syntax errors with V8's message, Annex B leniency, the u flag, UTF-16 units.

``golden/jsregex_node22.json`` was printed by Node 22 (``new RegExp(source, flags).exec(subject)`` for every
subject, or the ``SyntaxError`` message); no Node is needed here. Matching under a time limit is checked too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pinb.ai.jsregex import JsRegexError, js_regex, schema_regex, utf16_units
from pinb.ai.timers import TimeLimitExceeded, time_limit
from pinb.errors import UsageError

GOLDEN = json.loads((Path(__file__).parent / "golden" / "jsregex_node22.json").read_text(encoding="utf-8"))
SUBJECTS: list[str] = GOLDEN["subjects"]


def _node_value(expected: Any, flags: str) -> Any:
    # JSON decoding joins a surrogate pair Node printed; without u, JavaScript's match holds the two units.
    if isinstance(expected, list) and "u" not in flags:
        return [None if m is None else [m[0], utf16_units(m[1])] for m in expected]
    return expected


@pytest.mark.parametrize(
    ("source", "flags", "expected"), GOLDEN["cases"], ids=[f"/{c[0]}/{c[1]}" for c in GOLDEN["cases"]]
)
def test_matches_and_errors_like_v8(source: str, flags: str, expected: Any) -> None:
    try:
        pattern = js_regex(source, flags)
    except JsRegexError as exc:
        got: Any = str(exc)
    else:
        got = [[m.start(), m.group(0)] if (m := pattern.search(s)) else None for s in SUBJECTS]
    assert got == _node_value(expected, flags)


def test_unterminated_group_is_v8s_syntax_error() -> None:
    with pytest.raises(JsRegexError, match=r"^Invalid regular expression: /\(unclosed/: Unterminated group$"):
        js_regex("(unclosed")


def test_schema_regex_uses_the_u_flag_and_falls_back_without_it() -> None:
    assert schema_regex(r"^\p{Lu}").flags == "u"
    assert schema_regex(r"^\p{Lu}").search("Élan")
    assert schema_regex(r"\-").flags == ""  # u rejects the identity escape; pi-schema compiles it without u
    with pytest.raises(JsRegexError, match=r"/\(/: Unterminated group"):
        schema_regex("(")


def test_catastrophic_backtracking_stops_at_the_limit_and_names_the_pattern() -> None:
    pattern = js_regex("(a|a)+$")
    started = time.monotonic()
    with time_limit(0.5), pytest.raises(TimeLimitExceeded, match=r"/\(a\|a\)\+\$/"):
        pattern.search("a" * 40 + "!")
    assert time.monotonic() - started < 5


def test_time_limit_is_not_an_ordinary_exception() -> None:
    # Pi's error paths catch Exception and turn it into data (a blocked call); running out of time must end the run.
    assert not issubclass(TimeLimitExceeded, Exception)


def test_no_limit_outside_a_limited_run() -> None:
    assert js_regex("(a+)+$").search("a" * 30 + "!") is None


@pytest.mark.parametrize("flags", ["g", "y", "ii", "iu"])
def test_unsupported_flags(flags: str) -> None:
    with pytest.raises(UsageError):
        js_regex("a", flags)
