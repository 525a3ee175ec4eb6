"""The review guard's decision and dialog message in JavaScript's semantics, written apart from the stand-in.

The stand-in's guard port (`pinb.scenario.standin_app`) and its JavaScript helpers (`pinb.ai.jsregex`,
`pinb.ai.jsjson`, `pinb.app.js_compat`) are the code under test; chapter 16's properties must not derive what they
expect from them. This module is a second, deliberately small implementation of the three pieces of JavaScript the
book's guard uses:

- `JSON.stringify(value)` for the JSON values a tool input holds (ECMA-262 §25.5.2.2 QuoteJSONString: `\\b \\t
  \\n \\f \\r`, other controls as lowercase `\\u00xx`, lone surrogates as `\\udxxx`, everything else kept);
- `new RegExp(source).test(subject)` for the regex syntax the chapter's `BLOCKED` array uses (literals, `\\b`,
  `\\s`, `\\w`, `\\d`, `.`, classes with ranges and `\\n`, groups `(…)`/`(?:…)`, `|`, `* + ?` and `{m,n}`), with
  JavaScript's meaning: `\\b` and `\\w` on ASCII word characters, `\\s` JavaScript's whitespace set, matching over
  UTF-16 code units. Any other syntax raises `UnsupportedSyntax` rather than guess;
- `text.slice(0, n)`: the first `n` UTF-16 code units.

Tests compare it with Node (where Node is installed) and with the corpus verdicts recorded from Node.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: ECMA-262 WhiteSpace and LineTerminator: what `\s` matches.
JS_SPACES = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WORD = "A-Za-z0-9_"
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class UnsupportedSyntax(ValueError):
    """A regex construct this small implementation does not translate."""


def units(text: str) -> str:
    """`text` as JavaScript sees it: one Python character per UTF-16 code unit (astral characters as pairs)."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(raw[i : i + 2], "little")) for i in range(0, len(raw), 2))


def _high(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDBFF


def _low(ch: str) -> bool:
    return 0xDC00 <= ord(ch) <= 0xDFFF


#: What `_quote` changes: a quote, a backslash, a control character, a surrogate (lone, or half of a pair).
_NEEDS_QUOTING = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def _quote(text: str) -> str:
    if _NEEDS_QUOTING.search(text) is None:  # nothing to escape: the common command
        return f'"{text}"'
    seq = units(text)
    out = ['"']
    i = 0
    while i < len(seq):
        ch = seq[i]
        if _high(ch) and i + 1 < len(seq) and _low(seq[i + 1]):
            out.append(ch + seq[i + 1])  # a well-formed pair is kept as it is
            i += 2
            continue
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or _high(ch) or _low(ch):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    out.append('"')
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def json_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for strings, numbers, booleans, null, arrays and objects (keys in insertion order)."""
    if isinstance(value, str):
        return _quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value) if value == value and abs(value) != float("inf") else "null"
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_quote(str(k))}:{json_stringify(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_slice(text: str, start: int, end: int) -> str:
    """`text.slice(start, end)` for non-negative bounds: UTF-16 code units, so it may cut a surrogate pair."""
    kept = units(text)[start:end]
    return kept.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _class_escape(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-[" else ch


_JS_SPACE_CLASS = "".join(_class_escape(ch) for ch in JS_SPACES)
_SHORTHAND = {"s": _JS_SPACE_CLASS, "w": _WORD, "d": "0-9"}
_CONTROL = {"n": "\\n", "t": "\\t", "r": "\\r", "f": "\\f", "v": "\\v"}


def translate(source: str) -> str:
    """The JavaScript regex `source` (no flags) as a Python `re` pattern with the same matches on UTF-16 units."""
    out: list[str] = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            nxt = source[i + 1 : i + 2]
            if nxt == "b":
                out.append(f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))")
            elif nxt in _SHORTHAND:
                out.append(f"[{_SHORTHAND[nxt]}]")
            elif nxt in _CONTROL:
                out.append(_CONTROL[nxt])
            elif nxt and not nxt.isalnum():
                out.append(re.escape(nxt))
            else:
                raise UnsupportedSyntax(f"\\{nxt} in /{source}/")
            i += 2
        elif ch == "[":
            j = i + 1
            body = ["^"] if source[j : j + 1] == "^" else []
            j += len(body)
            while j < len(source) and source[j] != "]":
                if source[j] == "\\":
                    esc = source[j + 1 : j + 2]
                    body.append(_SHORTHAND.get(esc) or _CONTROL.get(esc) or re.escape(esc))
                    j += 2
                else:
                    body.append("\\-" if source[j] == "-" and (j == i + 1 or source[j + 1] == "]") else source[j])
                    j += 1
            if j >= len(source):
                raise UnsupportedSyntax(f"unclosed class in /{source}/")
            out.append("[" + "".join(body) + "]")
            i = j + 1
        elif ch == "(":
            if source.startswith("(?:", i):
                out.append("(?:")
                i += 3
            elif source[i + 1 : i + 2] == "?":
                raise UnsupportedSyntax(f"group {source[i : i + 3]} in /{source}/")
            else:
                out.append("(")
                i += 1
        elif ch == ".":
            out.append("[^\\n\\r\u2028\u2029]")
            i += 1
        elif ch in "^$":
            out.append("\\A" if ch == "^" else "\\Z")
            i += 1
        else:
            out.append(ch if ch in ")|*+?{},0123456789" or ch.isalnum() else re.escape(ch))
            i += 1
    return "".join(out)


def regex_test(source: str, flags: str, subject: str) -> bool:
    """`new RegExp(source, flags).test(subject)` for flagless regexes of the supported syntax."""
    if flags:
        raise UnsupportedSyntax(f"flags {flags!r} on /{source}/")
    return re.search(translate(source), units(subject)) is not None


def guard_hit(patterns: list[tuple[str, str]], tool_input: Any) -> str | None:
    """The book's handler on a bash input: the source of the first pattern that matches
    `JSON.stringify(event.input)`, or None (`BLOCKED.find((re) => re.test(raw))?.source`)."""
    raw = json_stringify(tool_input)
    return next((source for source, flags in patterns if regex_test(source, flags, raw)), None)


__all__ = ["UnsupportedSyntax", "guard_hit", "js_slice", "json_stringify", "regex_test", "translate", "units"]
