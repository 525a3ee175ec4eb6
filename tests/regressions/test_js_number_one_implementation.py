"""``pinb.ai``'s ``JSON.stringify`` wrote numbers with Python's exponent rule (``1e-05`` → ``1e-5``) and exact big
integers, and its ``text.length`` failed on a lone surrogate; JavaScript writes ``0.00001`` and the nearest double,
and counts a lone surrogate as one unit. There is now one ``Number::toString`` and one UTF-16 length."""

from __future__ import annotations

import pytest

from pinb.ai.jsjson import js_length, js_number, js_stringify
from pinb.app.js_compat import js_number_to_string, json_stringify


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.00001, "0.00001"),
        (0.000015, "0.000015"),
        (1e-7, "1e-7"),
        (2**60, "1152921504606847000"),
        (1e21, "1e+21"),
        (float("nan"), "null"),
        (float("-inf"), "null"),
    ],
)
def test_ai_and_app_write_numbers_alike(value: float, text: str) -> None:
    assert js_number(value) == text
    assert js_stringify([value]) == json_stringify([value]) == f"[{text}]"


def test_number_to_string_keeps_nan_and_infinity() -> None:
    assert js_number_to_string(float("nan")) == "NaN"
    assert js_number_to_string(float("-inf")) == "-Infinity"


def test_length_counts_a_lone_surrogate_as_one_unit() -> None:
    assert js_length("a\ud800") == 2
    assert js_length("é😀") == 3
