"""JavaScript value semantics for JSON Schema checks and coercion (pi-schema's rules, ported).

JavaScript has one number type, ``===`` for primitives, ``Number(text)`` parsing and ``String(n)`` printing; tool
arguments are validated and coerced with those rules, so the helpers here reproduce them over Python values.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pinb.ai.jsjson import js_number, js_stringify
from pinb.ai.jsregex import JsPattern, schema_regex


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def is_integer(v: Any) -> bool:
    return is_number(v) and (isinstance(v, int) or float(v).is_integer())


def normal_number(n: float | int) -> float | int:
    """JavaScript has one number type: keep integral values as Python ints."""
    if isinstance(n, float) and n.is_integer() and abs(n) < 2**53:
        return int(n)
    return n


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_PREFIXED = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")


def js_to_number(text: str) -> float | int:
    """``+text`` / ``Number(text)`` in JavaScript (NaN as ``math.nan``)."""
    s = text.strip()
    if s == "":
        return 0
    if _DECIMAL.fullmatch(s):
        return normal_number(float(s))
    if m := _PREFIXED.fullmatch(s):
        base = {"x": 16, "o": 8, "b": 2}[m.group(1).lower()]
        try:
            return int(m.group(2), base)
        except ValueError:
            return math.nan
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    return math.nan


def js_string(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int | float):
        return js_number(v)
    return str(v)


def js_same(a: Any, b: Any) -> bool:
    """JavaScript ``===``: identity for objects, value for primitives."""
    if a is b:
        return True
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b


def deep_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return js_same(a, b)


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, list | tuple):
        return "array"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        if not math.isfinite(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return "integer" if is_integer(v) else "number"
    if isinstance(v, str):
        return "string"
    return "object"


def matches_type(v: Any, t: Any) -> bool:
    match t:
        case "string":
            return isinstance(v, str)
        case "number":
            return is_number(v)
        case "integer":
            return is_integer(v)
        case "boolean":
            return isinstance(v, bool)
        case "null":
            return v is None
        case "array":
            return isinstance(v, list | tuple)
        case "object":
            return isinstance(v, dict)
        case _:
            return False


def cached_regex(pattern: str) -> JsPattern:
    """A schema ``pattern`` (or ``patternProperties`` key) as pi-schema compiles it: a JavaScript regex with the
    ``u`` flag, or without it when ``u`` rejects the source. ``^\\d+$`` rejects ``"12\\n"`` and ``"١٢"`` there."""
    return schema_regex(pattern)


def schema_types(node: dict[str, Any]) -> list[Any]:
    t = node.get("type")
    if t is None:
        return []
    return list(t) if isinstance(t, list) else [t]


# --- conversions and keyword helpers ----------------------------------------------------------------------------


def or_value(result: tuple[Any] | None, value: Any) -> Any:
    return value if result is None else result[0]


def try_string(v: Any) -> tuple[Any] | None:
    if isinstance(v, bool) or is_number(v):
        return (js_string(v),)
    if v is None:
        return ("null",)
    if isinstance(v, str):
        return (v,)
    return None


def try_number(v: Any) -> tuple[Any] | None:
    if isinstance(v, bool):
        return (1 if v else 0,)
    if is_number(v):
        return (v,)
    if v is None:
        return (0,)
    if not isinstance(v, str):
        return None
    n = js_to_number(v)
    if isinstance(n, int) or math.isfinite(n):
        return (n,)
    lower = v.lower()
    if lower == "false":
        return (0,)
    if lower == "true":
        return (1,)
    if m := re.fullmatch(r"(-?(?:0|[1-9]\d*))(?:n|\.\d+)?", v):
        big = int(m.group(1))
        return (big,) if abs(big) <= 2**53 - 1 else None
    return None


def try_boolean(v: Any) -> tuple[Any] | None:
    if isinstance(v, bool):
        return (v,)
    if is_number(v):
        return (False,) if v == 0 else (True,) if v == 1 else None
    if v is None:
        return (False,)
    if not isinstance(v, str):
        return None
    lower = v.lower()
    if lower == "false" or v == "0":
        return (False,)
    if lower == "true" or v == "1":
        return (True,)
    return None


def try_null(v: Any) -> tuple[Any] | None:
    if isinstance(v, bool):
        return (None,) if v is False else None
    if is_number(v):
        return (None,) if v == 0 else None
    if v is None:
        return (None,)
    if not isinstance(v, str):
        return None
    return (None,) if v.lower() in ("undefined", "null") or v in ("", "0") else None


def convert_literal(literal: Any, value: Any) -> Any:
    if js_same(literal, value):
        return value
    if isinstance(literal, str):
        result = try_string(value)
    elif isinstance(literal, bool):
        result = try_boolean(value)
    elif is_number(literal):
        result = try_number(value)
    else:
        result = None
    return result[0] if result is not None and js_same(result[0], literal) else value


def coerce_primitive(v: Any, t: str) -> Any:
    if t in ("number", "integer"):
        if v is None:
            return 0
        if isinstance(v, str) and v.strip() != "":
            parsed = js_to_number(v)
            if is_integer(parsed) if t == "integer" else is_number(parsed):
                return parsed
        if isinstance(v, bool):
            return 1 if v else 0
        return v
    if t == "boolean":
        if v is None:
            return False
        if v == "true" or (is_number(v) and v == 1):
            return True
        if v == "false" or (is_number(v) and v == 0):
            return False
        return v
    if t == "string":
        if v is None:
            return ""
        if isinstance(v, bool) or is_number(v):
            return js_string(v)
        return v
    if t == "null":
        return None if v == "" or v is False or (is_number(v) and v == 0) else v
    return v


def item_schemas(node: dict[str, Any]) -> tuple[list[Any], Any]:
    if isinstance(node.get("items"), list):
        return node["items"], node.get("additionalItems")
    prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
    return prefix, node.get("items")


def item_schema_at(schema: dict[str, Any], index: int) -> Any:
    if isinstance(schema.get("items"), list):
        items = schema["items"]
        return items[index] if index < len(items) else None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return schema.get("items")


def all_unique(v: Any) -> bool:
    return all(not deep_equal(v[i], v[j]) for i in range(1, len(v)) for j in range(i))


def contains_bounds(node: dict[str, Any]) -> tuple[float, float]:
    low = node["minContains"] if isinstance(node.get("minContains"), int) else 1
    high = node["maxContains"] if isinstance(node.get("maxContains"), int) else math.inf
    return low, high


def contains_message(low: float, high: float) -> str:
    if high == math.inf:
        return f"expected at least {low} matching {'item' if low == 1 else 'items'}"
    if low == 0:
        return f"expected at most {high} matching {'item' if high == 1 else 'items'}"
    return f"expected between {low} and {high} matching items"


def is_multiple(v: float, d: float) -> bool:
    if d == 0:
        return False
    q = v / d
    if math.isfinite(q) and float(q).is_integer():
        return True
    from decimal import Decimal

    return Decimal(repr(v)) % Decimal(repr(d)) == 0


def list_values(values: list[Any]) -> str:
    if len(values) <= 20:
        return js_stringify(values)
    listed = js_stringify(values[:20])
    return f"{listed[:-1]}, ... and {len(values) - 20} more]"


def json_pointer(path: str, key: str) -> str:
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
