"""``JSON.stringify`` as JavaScript writes it, for the texts Pi builds from JSON (error messages, usage estimates,
guard subjects, session lines).

Differences from ``json.dumps`` that matter here: no spaces after separators, insertion order with JavaScript's
array-index keys first, non-ASCII kept, control characters and lone surrogates escaped the way JavaScript escapes
them, numbers as JavaScript prints them (``1e-7``, ``0.00001``, ``1e+21``; ``NaN``/``Infinity`` as ``null``),
``undefined`` and functions dropped from objects and ``null`` in arrays; and UTF-16 lengths.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from pinb.errors import UsageError


class _Undefined:
    """JavaScript's ``undefined``: dropped from objects, ``null`` in arrays, no output at the top level."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = _Undefined()


def js_double(value: float | int) -> float:
    """The JavaScript number a Python number stands for: an integer beyond the double range is ``±Infinity``
    (as ``JSON.parse`` reads a literal that long)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def js_number_to_string(value: float | int) -> str:
    """``Number.prototype.toString()`` for a finite number (ECMAScript Number::toString, radix 10)."""
    number = js_double(value)
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
    number = js_double(value)
    if math.isnan(number) or math.isinf(number):
        return "null"
    return js_number_to_string(value)


_SHORT_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_ENCODE_STRING: Final = json.JSONEncoder(ensure_ascii=False).encode


def _quote(text: str) -> str:
    if text.isascii() or _SURROGATE.search(text) is None:
        # Without surrogates Python's encoder escapes exactly what JavaScript's does, in the same forms.
        return _ENCODE_STRING(text)
    out = ['"']
    i = 0
    length = len(text)
    while i < length:
        ch = text[i]
        code = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDBFF:
            if i + 1 < length and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
                # A surrogate pair held as two code points is one character in JavaScript.
                out.append(chr(0x10000 + ((code - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
                i += 1
            else:
                out.append(f"\\u{code:04x}")
        elif 0xDC00 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
        i += 1
    out.append('"')
    return "".join(out)


def _is_array_index(key: str) -> bool:
    # JavaScript orders integer-like keys (canonical array indices) first, ascending, then strings by insertion.
    return key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return js_number_to_string(key)
    if key is None:
        return "null"
    raise UsageError(f"json_stringify: object keys must be strings or numbers, not {type(key).__name__}")


#: Integers JavaScript holds exactly: `String(n)` writes their decimal digits, as `str` does.
_SAFE_INTEGER: Final = 2**53


def _array(value: Sequence[Any], indent: str, level: int) -> str:
    inner = indent * (level + 1)
    parts = [inner + (_stringify(item, indent, level + 1, in_array=True) or "null") for item in value]
    return _wrap("[", parts, "]", indent, level)


def _stringify(value: Any, indent: str, level: int, in_array: bool) -> str | None:
    # The plain JSON types first, by exact type (most of what a session holds); the general path below them.
    kind = type(value)
    if kind is str:
        return _quote(value)
    if kind is int and -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
        return str(value)
    if kind is dict:
        return _object(value, indent, level)
    if kind is list:
        return _array(value, indent, level)
    if value is UNDEFINED or callable(value):
        return "null" if in_array else None
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, Mapping):
        return _object(value, indent, level)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return _array(value, indent, level)
    dump = getattr(value, "model_dump", None)
    if dump is not None:  # a pydantic model: its JSON form, Pi's camelCase keys
        return _stringify(dump(mode="json", by_alias=True, exclude_none=True), indent, level, in_array)
    raise UsageError(f"json_stringify: cannot serialise a {type(value).__name__}")


def _object(value: Mapping[Any, Any], indent: str, level: int) -> str:
    items = [(_key(k), v) for k, v in value.items()]
    if any(key[:1].isdigit() for key, _ in items):
        indices = sorted((item for item in items if _is_array_index(item[0])), key=lambda item: int(item[0]))
        items = indices + [item for item in items if not _is_array_index(item[0])]
    inner = indent * (level + 1)
    separator = ": " if indent else ":"
    parts = []
    for key, item in items:
        text = _stringify(item, indent, level + 1, in_array=False)
        if text is not None:
            parts.append(inner + _quote(key) + separator + text)
    return _wrap("{", parts, "}", indent, level)


def _wrap(open_: str, parts: list[str], close: str, indent: str, level: int) -> str:
    if not parts:
        return open_ + close
    if not indent:
        return open_ + ",".join(parts) + close
    return open_ + "\n" + ",\n".join(parts) + "\n" + indent * level + close


def json_stringify(value: Any, indent: int = 0) -> str | None:
    """``JSON.stringify(value, null, indent)``; ``None`` where JavaScript returns ``undefined`` (a top-level
    ``UNDEFINED`` or function)."""
    return _stringify(value, " " * indent, 0, in_array=False)


def js_stringify(value: Any, indent: int = 0) -> str:
    """``JSON.stringify(value, null, indent)`` for a value that has a JSON form."""
    text = json_stringify(value, indent)
    if text is None:
        raise UsageError(f"json_stringify: {value!r} has no JSON form")
    return text


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, start: int, end: int) -> str:
    """``text.slice(start, end)`` in JavaScript: counts UTF-16 code units, so it can cut a surrogate pair."""
    units = text.encode("utf-16-le", "surrogatepass")
    return units[2 * start : 2 * end].decode("utf-16-le", "surrogatepass")
