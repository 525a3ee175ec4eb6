"""``JSON.stringify`` as JavaScript writes it, for the texts Pi builds from JSON (error messages, usage estimates).

Differences from ``json.dumps`` that matter here: no spaces after separators, non-ASCII kept, integral floats written
without ``.0``, exponents as ``1e-7`` / ``1e+21``, ``NaN``/``Infinity`` as ``null``, and UTF-16 lengths.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel


def js_number(value: float | int) -> str:
    """A number as JavaScript's ``String(n)`` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa.removesuffix('.0')}e{sign}{int(exponent.lstrip('+-'))}"
    return text


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
    return len(text.encode("utf-16-le")) // 2
