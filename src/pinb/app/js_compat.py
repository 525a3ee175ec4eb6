"""JavaScript semantics that Pi's extensions rely on, in Python.

Two pieces, both checked against real Node:

- ``json_stringify(value)`` is ``JSON.stringify(value)``: no spaces, insertion order (with JavaScript's
  array-index keys first), non-ASCII kept, control characters escaped the way JavaScript escapes them,
  numbers printed the way JavaScript prints them. It lives in ``pinb.ai.jsjson`` (``pinb.ai`` writes Pi's
  texts with it too) and is re-exported here.
- ``js_regex(source, flags="")`` compiles the source of a JavaScript regular expression literal (flags ``i``,
  ``m``, ``s``; no ``u``) to a Python pattern that matches the same strings at the same places: ASCII
  ``\\b \\w \\d``, JavaScript's ``\\s`` set, ``.`` excluding line terminators, ``$`` only at the very end.
  Positions are code points: subjects with characters outside the BMP (two UTF-16 units in JavaScript) can differ.

A guard that matches ``JSON.stringify(event.input)`` against a regex sees a tab as the two characters ``\\t``;
getting that wrong in either direction would change what the guard blocks.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pinb.ai.jsjson import UNDEFINED, js_number_to_string, json_stringify
from pinb.errors import UsageError

__all__ = ["JS_LINE_TERMINATORS", "JS_WHITESPACE", "UNDEFINED", "js_number_to_string", "js_regex", "json_stringify"]


# ECMAScript WhiteSpace + LineTerminator: what ``\s`` matches in JavaScript (and what String.prototype.trim strips).
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"

# --------------------------------------------------------------------------------------------------------------
# JavaScript regular expressions
# --------------------------------------------------------------------------------------------------------------


def _class_escape(ch: str) -> str:
    """One character, escaped for use inside a Python character class."""
    code = ord(ch)
    if ch.isalnum() and ch.isascii():
        return ch
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


_JS_SPACE_CLASS: Final = "".join(_class_escape(ch) for ch in JS_WHITESPACE)
# Positive members of the shorthand classes, as Python class contents (compiled with re.ASCII).
_SHORTHAND: Final = {"d": "0-9", "w": "A-Za-z0-9_", "s": _JS_SPACE_CLASS}
_LINE_TERMINATOR_CLASS: Final = "".join(_class_escape(ch) for ch in JS_LINE_TERMINATORS)
_CONTROL_ESCAPES: Final = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", "0": "\0"}
_QUANTIFIER: Final = re.compile(r"\{(\d+)(,(\d*))?\}")


class _Translator:
    """A single pass over a JavaScript pattern (non-unicode, Annex B syntax), emitting Python syntax."""

    def __init__(self, source: str, flags: str = "") -> None:
        self.src = source
        self.flags = flags
        self.i = 0
        self.out: list[str] = []
        self.group_names: list[str] = []

    def error(self, what: str) -> UsageError:
        return UsageError(f"Invalid regular expression: /{self.src}/: {what}")

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.src[j] if j < len(self.src) else ""

    def translate(self) -> str:
        while self.i < len(self.src):
            ch = self.src[self.i]
            if ch == "\\":
                self.out.append(self.escape_outside())
            elif ch == "[":
                self.out.append(self.char_class())
            elif ch == ".":
                self.out.append(r"[\s\S]" if "s" in self.flags else "[^" + _LINE_TERMINATOR_CLASS + "]")
                self.i += 1
            elif ch == "$":
                # End of input only (Python's $ also matches before a final \n); with m, before any line terminator.
                end = r"(?![\s\S])"
                self.out.append(f"(?=[{_LINE_TERMINATOR_CLASS}]|{end})" if "m" in self.flags else end)
                self.i += 1
            elif ch == "^":
                start = r"(?<![\s\S])"
                self.out.append(f"(?:(?<=[{_LINE_TERMINATOR_CLASS}])|{start})" if "m" in self.flags else start)
                self.i += 1
            elif ch == "(":
                self.out.append(self.group_open())
            elif ch == "{":
                match = _QUANTIFIER.match(self.src, self.i)
                if match:
                    self.out.append(match.group(0))
                    self.i = match.end()
                else:  # Annex B: a brace that does not start a quantifier is literal
                    self.out.append(r"\{")
                    self.i += 1
            elif ch == "}":
                self.out.append(r"\}")
                self.i += 1
            else:
                self.out.append(ch if ch in "|)*+?" else self.literal(ch))
                self.i += 1
        return "".join(self.out)

    def group_open(self) -> str:
        rest = self.src[self.i :]
        for js, py in (("(?:", "(?:"), ("(?=", "(?="), ("(?!", "(?!"), ("(?<=", "(?<="), ("(?<!", "(?<!")):
            if rest.startswith(js):
                self.i += len(js)
                return py
        named = re.match(r"\(\?<([A-Za-z_$][\w$]*)>", rest)
        if named:
            self.i += named.end()
            self.group_names.append(named.group(1))
            return f"(?P<{named.group(1)}>"
        if rest.startswith("(?"):
            raise self.error("Invalid group")
        self.i += 1
        return "("

    def escape_outside(self) -> str:
        ch = self.peek(1)
        if not ch:
            raise self.error("\\ at end of pattern")
        self.i += 2
        if ch in "dws":
            return "[" + _SHORTHAND[ch] + "]"
        if ch in "DWS":
            return "[^" + _SHORTHAND[ch.lower()] + "]"
        if ch in "bB":
            return "\\" + ch  # ASCII word boundary under re.ASCII, as in JavaScript without the u flag
        if ch == "k" and self.peek() == "<":
            end = self.src.find(">", self.i)
            if end < 0:
                raise self.error("Invalid named reference")
            name = self.src[self.i + 1 : end]
            self.i = end + 1
            return f"(?P={name})"
        if ch.isdigit() and ch != "0":
            if "i" in self.flags:
                raise self.error("backreferences with the i flag are not supported by pinb")
            digits = ch
            while self.peek().isdigit():
                digits += self.peek()
                self.i += 1
            return f"(?:\\{digits})"
        return self.literal(self.atom_escape(ch))

    def literal(self, ch: str) -> str:
        """One pattern character; with ``i``, the class of every character JavaScript folds to the same one."""
        if "i" in self.flags:
            spans = _fold_closure([(ord(ch), ord(ch))])
            if spans != [(ord(ch), ord(ch))]:
                return "[" + _render_spans(spans) + "]"
        return ch if ch.isascii() and ch.isalnum() else re.escape(ch)

    def atom_escape(self, ch: str) -> str:
        """The single character a JavaScript escape (other than class shorthands) stands for."""
        if ch in _CONTROL_ESCAPES and not (ch == "0" and self.peek().isdigit()):
            return _CONTROL_ESCAPES[ch]
        if ch == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", self.src[self.i : self.i + 2]):
            self.i += 2
            return chr(int(self.src[self.i - 2 : self.i], 16))
        if ch == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", self.src[self.i : self.i + 4]):
            self.i += 4
            return chr(int(self.src[self.i - 4 : self.i], 16))
        if ch == "c" and self.peek().isascii() and self.peek().isalpha():
            self.i += 1
            return chr(ord(self.src[self.i - 1]) % 32)
        return ch  # Annex B identity escape: \e, \-, \/ ... stand for the character itself

    def char_class(self) -> str:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        spans: list[tuple[int, int]] = []  # explicit characters and ranges
        shorthands: list[str] = []  # \d \w \s bodies (closed under JavaScript's case folding)
        negated_shorthands: list[str] = []  # \D \W \S: Python classes cannot nest them
        while True:
            if self.i >= len(self.src):
                raise self.error("Unterminated character class")
            if self.src[self.i] == "]":
                self.i += 1
                break
            low, is_set = self.class_atom()
            if is_set is not None:
                (negated_shorthands if is_set == "neg" else shorthands).append(low)
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                save = self.i
                self.i += 1
                high, high_set = self.class_atom()
                if high_set is None:
                    if ord(high) < ord(low):
                        raise self.error("Range out of order in character class")
                    spans.append((ord(low), ord(high)))
                    continue
                # Annex B: a range with a class escape at one end is the three atoms themselves.
                self.i = save
            spans.append((ord(low), ord(low)))
        if "i" in self.flags and spans:
            spans = _fold_closure(spans)
        members = _render_spans(spans) + "".join(shorthands)
        positive = "[" + members + "]" if members else ""
        alternatives = [positive] if positive else []
        alternatives += ["[^" + body + "]" for body in negated_shorthands]
        if not alternatives:
            return r"[\s\S]" if negated else "(?!)"
        union = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        if not negated:
            return union
        if not negated_shorthands:
            return "[^" + members + "]"
        return "(?:(?!" + union + r")[\s\S])"

    def class_atom(self) -> tuple[str, str | None]:
        """Next class atom: (character, None) or (class body, "pos"|"neg") for a shorthand."""
        ch = self.src[self.i]
        if ch != "\\":
            self.i += 1
            return ch, None
        esc = self.peek(1)
        if not esc:
            raise self.error("\\ at end of pattern")
        self.i += 2
        if esc in "dws":
            return _SHORTHAND[esc], "pos"
        if esc in "DWS":
            return _SHORTHAND[esc.lower()], "neg"
        if esc == "b":
            return "\b", None
        if esc == "B":
            raise self.error("Invalid class escape")
        if esc.isdigit() and esc != "0":  # Annex B: octal-ish escapes in classes; keep it simple and strict
            raise self.error("Unsupported escape in character class")
        return self.atom_escape(esc), None


def _render_spans(spans: list[tuple[int, int]]) -> str:
    return "".join(_class_escape(chr(lo)) + ("" if lo == hi else "-" + _class_escape(chr(hi))) for lo, hi in spans)


@functools.cache
def _fold_groups() -> tuple[dict[int, int], dict[int, tuple[int, ...]]]:
    """JavaScript's non-unicode ``/i`` Canonicalize over the BMP: code point → canonical, canonical → members."""
    canon: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    for cp in range(0x10000):
        upper = chr(cp).upper()
        # toUpperCase; a multi-character result or a non-ASCII character mapping into ASCII keeps the character.
        target = cp if len(upper) != 1 or (cp >= 128 and ord(upper) < 128) else ord(upper)
        if target != cp:
            canon[cp] = target
            groups.setdefault(target, [target]).append(cp)
    return canon, {key: tuple(sorted(set(members))) for key, members in groups.items()}


def _fold_closure(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every character whose canonical form is that of a character in ``spans``, as sorted ranges."""
    canon, groups = _fold_groups()
    points: set[int] = set()
    for lo, hi in spans:
        for cp in range(lo, hi + 1):
            points.add(cp)
            target = canon.get(cp, cp)
            points.update(groups.get(target, (target,)))
    ordered = sorted(points)
    merged: list[tuple[int, int]] = []
    for cp in ordered:
        if merged and cp == merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], cp)
        else:
            merged.append((cp, cp))
    return merged


_CACHE: dict[tuple[str, str], re.Pattern[str]] = {}


def js_regex(source: str, flags: str = "") -> re.Pattern[str]:
    """Compile the source of ``/source/flags`` to a Python pattern with JavaScript matching semantics.

    ``re.test(s)`` in JavaScript is ``js_regex(source).search(s) is not None`` in Python. Flags: ``m`` (``^``/``$``
    at line terminators), ``s`` (``.`` matches them too) and ``i`` (JavaScript's non-unicode case folding, computed
    from Python's Unicode tables: ``ſ``, ``ı`` or the Kelvin sign do not match ASCII letters, as in JavaScript).
    Raises ``UsageError`` for syntax JavaScript rejects, other flags, a backreference under ``i``, and a lookbehind
    Python cannot express.
    """
    if set(flags) - set("ims") or len(set(flags)) != len(flags):
        raise UsageError(f"js_regex supports the flags i, m and s (each once), not {flags!r}")
    key = (source, "".join(sorted(flags)))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    python_source = _Translator(source, flags).translate()
    try:
        # Case folding is spelled out as character classes, so the pattern itself is case-sensitive.
        pattern = re.compile(python_source, re.ASCII)
    except re.error as exc:
        raise UsageError(f"Invalid or unsupported regular expression: /{source}/: {exc}") from exc
    _CACHE[key] = pattern
    return pattern
