"""``JSON.stringify`` as JavaScript writes it, for the texts Pi builds from JSON (error messages, usage estimates).

Differences from ``json.dumps`` that matter here: no spaces after separators, non-ASCII kept, integral floats written
without ``.0``, exponents as ``1e-7`` / ``1e+21``, ``NaN``/``Infinity`` as ``null``, and UTF-16 lengths.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from pydantic import BaseModel


def js_number_to_string(value: float | int) -> str:
    """``Number.prototype.toString()`` for a finite number (ECMAScript Number::toString, radix 10)."""
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
    if number == 0:
        return "0"  # also -0
    sign = "-" if number < 0 else ""
    # repr() gives the shortest digit string that round-trips, the same digits JavaScript chooses.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exponent, int)
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    k = len(digits)
    n = k + exponent
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + exp


def js_number(value: float | int) -> str:
    """A number as ``JSON.stringify`` writes it: ``String(n)``, with ``NaN``/``Infinity`` as ``null``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "null"
    return js_number_to_string(value)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _encode(value: Any, indent: str, level: int) -> str:
    value = _plain(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if not callable(v)]
        if not items:
            return "{}"
        if not indent:
            return (
                "{"
                + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_encode(v, indent, level)}" for k, v in items)
                + "}"
            )
        inner = indent * (level + 1)
        parts = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_encode(v, indent, level + 1)}" for k, v in items]
        return "{\n" + ",\n".join(parts) + "\n" + indent * level + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        if not indent:
            return "[" + ",".join(_encode(v, indent, level) for v in value) + "]"
        inner = indent * (level + 1)
        return (
            "[\n" + ",\n".join(f"{inner}{_encode(v, indent, level + 1)}" for v in value) + "\n" + indent * level + "]"
        )
    return json.dumps(str(value), ensure_ascii=False)


def js_stringify(value: Any, indent: int = 0) -> str:
    """``JSON.stringify(value, null, indent)``."""
    return _encode(value, " " * indent, 0)


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
