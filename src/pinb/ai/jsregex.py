"""JavaScript regular expressions in Python: ``new RegExp(source, flags)`` with JavaScript's syntax and matching.

``js_regex(source, flags="")`` translates the source of a JavaScript regular expression to a pattern of the
``regex`` package that matches the same strings at the same places: ASCII ``\\b \\w \\d``, JavaScript's ``\\s``
set, ``.`` excluding line terminators, ``$`` only at the very end, Annex B's leniencies without the ``u`` flag
(a lone ``{`` is literal, ``\\8`` is ``8``, ``\\1`` with no group is an octal escape) and the ``u`` flag's
strictness, ``\\u{...}`` and ``\\p{...}`` with it. A source JavaScript rejects raises ``JsRegexError`` whose
message is V8's (``Invalid regular expression: /(unclosed/: Unterminated group``), because Pi shows that text.
Without ``u`` the pattern and the subject are UTF-16 code units, as in JavaScript (a character outside the BMP is two
units that ``.`` matches one at a time); with ``u`` they are code points.

Matching is bounded: inside ``pinb.ai.timers.time_limit`` a search that backtracks past the limit stops with
``TimeLimitExceeded`` naming the pattern, where JavaScript (and Python's ``re``) would run for minutes.
"""

from __future__ import annotations

import functools
import re
import signal
import threading
import time
from typing import Any, Final

import regex

from pinb.ai.timers import current_limit
from pinb.errors import UsageError

__all__ = ["JS_LINE_TERMINATORS", "JS_WHITESPACE", "JsPattern", "JsRegexError", "js_regex", "schema_regex"]


class JsRegexError(UsageError):
    """JavaScript rejects the source (``SyntaxError``); the message is V8's."""


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


_WORD: Final = "[A-Za-z0-9_]"
# JavaScript's \b and \B: ASCII word characters (the u flag without i does not change them).
_WORD_BOUNDARY: Final = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_WORD_BOUNDARY: Final = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"
_SYNTAX_CHARACTERS: Final = r"^$\.*+?()[]{}|/"
_GROUP_NAME: Final = re.compile(r"[A-Za-z_$][\w$]*", re.ASCII)
_LOOKAROUND: Final = {"(?=": "lookahead", "(?!": "lookahead", "(?<=": "lookbehind", "(?<!": "lookbehind"}
# What may follow: "atom" takes a quantifier; "none" (start, "(", "|", an assertion, a quantifier) gives
# "Nothing to repeat"; "lookahead" is quantifiable without u (Annex B); "lookbehind" never is.
_Repeat = str


def _prescan(source: str) -> tuple[int, list[str]]:
    """Capturing groups and group names of a source, in order (escapes and classes skipped)."""
    count = 0
    names: list[str] = []
    i = 0
    in_class = False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            if not source.startswith("(?", i):
                count += 1
            elif source.startswith("(?<", i) and source[i + 3 : i + 4] not in ("=", "!"):
                count += 1
                end = source.find(">", i)
                names.append(source[i + 3 : end] if end > 0 else "")
        i += 1
    return count, names


class _Translator:
    """A single pass over a JavaScript pattern, emitting the ``regex`` package's syntax."""

    def __init__(self, source: str, flags: str = "") -> None:
        self.src = source
        self.flags = flags
        self.unicode = "u" in flags
        self.i = 0
        self.out: list[str] = []
        self.group_count, self.all_names = _prescan(source)
        self.group_names: list[str] = []
        self.groups: list[str] = []  # kinds of the open groups
        self.repeat: _Repeat = "none"

    def error(self, what: str) -> JsRegexError:
        return JsRegexError(f"Invalid regular expression: /{self.src}/{self.flags}: {what}")

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
                self.repeat = "atom"
            elif ch == ".":
                self.out.append(r"[\s\S]" if "s" in self.flags else "[^" + _LINE_TERMINATOR_CLASS + "]")
                self.i += 1
                self.repeat = "atom"
            elif ch == "$":
                # End of input only (Python's $ also matches before a final \n); with m, before any line terminator.
                end = r"(?![\s\S])"
                self.out.append(f"(?=[{_LINE_TERMINATOR_CLASS}]|{end})" if "m" in self.flags else end)
                self.i += 1
                self.repeat = "none"
            elif ch == "^":
                start = r"(?<![\s\S])"
                self.out.append(f"(?:(?<=[{_LINE_TERMINATOR_CLASS}])|{start})" if "m" in self.flags else start)
                self.i += 1
                self.repeat = "none"
            elif ch == "(":
                self.out.append(self.group_open())
                self.repeat = "none"
            elif ch == ")":
                if not self.groups:
                    raise self.error("Unmatched ')'")
                kind = self.groups.pop()
                self.i += 1
                if kind == "lookahead":
                    # A quantified lookahead (Annex B) is wrapped so the quantifier applies to a group.
                    self.out.append("))")
                    self.repeat = "invalid" if self.unicode else "atom"
                else:
                    self.out.append(")")
                    self.repeat = "invalid" if kind == "lookbehind" else "atom"
            elif ch == "|":
                self.out.append("|")
                self.i += 1
                self.repeat = "none"
            elif ch in "*+?":
                self.quantifier(ch, 1)
            elif ch == "{":
                match = _QUANTIFIER.match(self.src, self.i)
                if match:
                    low, high = int(match.group(1)), match.group(3)
                    if match.group(2) and high and int(high) < low:
                        self.check_repeat()
                        raise self.error("numbers out of order in {} quantifier")
                    self.quantifier(match.group(0), len(match.group(0)))
                elif self.unicode:
                    raise self.error("Incomplete quantifier" if self.repeat == "atom" else "Lone quantifier brackets")
                else:  # Annex B: a brace that does not start a quantifier is literal
                    self.out.append(r"\{")
                    self.i += 1
                    self.repeat = "atom"
            elif ch in "}]" and self.unicode:
                raise self.error("Lone quantifier brackets")
            else:
                self.out.append(self.literal(ch))
                self.i += 1
                self.repeat = "atom"
        if self.groups:
            raise self.error("Unterminated group")
        return "".join(self.out)

    def check_repeat(self) -> None:
        if self.repeat == "none":
            raise self.error("Nothing to repeat")
        if self.repeat == "invalid":
            raise self.error("Invalid quantifier")

    def quantifier(self, text: str, length: int) -> None:
        self.check_repeat()
        self.i += length
        if self.peek() == "?":
            text += "?"
            self.i += 1
        self.out.append(text)
        self.repeat = "none"

    def group_open(self) -> str:
        rest = self.src[self.i :]
        if rest.startswith("(?:"):
            self.i += 3
            self.groups.append("group")
            return "(?:"
        for js, kind in _LOOKAROUND.items():
            if rest.startswith(js):
                self.i += len(js)
                self.groups.append(kind)
                return "(?:" + js if kind == "lookahead" else js
        if rest.startswith("(?<"):
            end = rest.find(">")
            name = rest[3:end] if end > 0 else ""
            if not _GROUP_NAME.fullmatch(name):
                raise self.error("Invalid capture group name")
            if name in self.group_names:
                raise self.error("Duplicate capture group name")
            self.i += end + 1
            self.group_names.append(name)
            self.groups.append("capture")
            return f"(?P<{name}>"
        if rest.startswith("(?"):
            raise self.error("Invalid group")
        self.i += 1
        self.groups.append("capture")
        return "("

    def escape_outside(self) -> str:
        ch = self.peek(1)
        if not ch:
            raise self.error("\\ at end of pattern")
        self.i += 2
        self.repeat = "atom"
        if ch in "dws":
            return "[" + _SHORTHAND[ch] + "]"
        if ch in "DWS":
            return "[^" + _SHORTHAND[ch.lower()] + "]"
        if ch in "bB":
            self.repeat = "none"
            return _WORD_BOUNDARY if ch == "b" else _NOT_WORD_BOUNDARY
        if ch == "k" and (self.unicode or self.all_names):
            end = self.src.find(">", self.i) if self.peek() == "<" else -1
            if end < 0:
                raise self.error("Invalid named reference")
            name = self.src[self.i + 1 : end]
            if name not in self.all_names:
                raise self.error("Invalid named capture referenced")
            self.i = end + 1
            return f"(?({name})(?P={name})|)"  # a group that did not participate matches empty in JavaScript
        if ch.isdigit() and ch != "0":
            digits = ch
            while self.peek().isdigit():
                digits += self.peek()
                self.i += 1
            if int(digits) <= self.group_count:
                if "i" in self.flags:
                    raise UsageError(f"/{self.src}/{self.flags}: backreferences with the i flag are not supported")
                return f"(?({int(digits)})\\{int(digits)}|)"
            if self.unicode:
                raise self.error("Invalid escape")
            self.i -= len(digits) - 1
            return self.literal(self.legacy_octal(ch))
        if ch in "pP" and self.unicode:
            return self.property_escape(ch)
        if ch == "c" and not (self.peek().isascii() and self.peek().isalpha()):
            if self.unicode:
                raise self.error("Invalid Unicode escape")
            self.i -= 1  # Annex B: a literal backslash; the c that follows is the next atom
            return re.escape("\\")
        return self.literal(self.atom_escape(ch, in_class=False))

    def legacy_octal(self, first: str) -> str:
        """Annex B: ``\\1`` ... ``\\377`` beyond the group count are octal; ``\\8`` and ``\\9`` stand for the digit."""
        if first in "89":
            return first
        digits = first
        while len(digits) < 3 and self.peek() in tuple("01234567") and int(digits + self.peek(), 8) <= 0o377:
            digits += self.peek()
            self.i += 1
        return chr(int(digits, 8))

    def property_escape(self, ch: str) -> str:
        end = self.src.find("}", self.i) if self.peek() == "{" else -1
        name = self.src[self.i + 1 : end] if end > 0 else ""
        if not re.fullmatch(r"[A-Za-z_]+(=[A-Za-z0-9_]+)?", name):
            raise self.error("Invalid property name")
        text = f"\\{ch}{{{name}}}"
        try:
            regex.compile(text)
        except regex.error:
            raise self.error("Invalid property name") from None
        self.i = end + 1
        return text

    def literal(self, ch: str) -> str:
        """One pattern character; with ``i``, the class of every character JavaScript folds to the same one."""
        if "i" in self.flags:
            spans = _fold_closure([(ord(ch), ord(ch))])
            if spans != [(ord(ch), ord(ch))]:
                return "[" + _render_spans(spans) + "]"
        return ch if ch.isascii() and ch.isalnum() else _class_escape(ch)

    def atom_escape(self, ch: str, *, in_class: bool) -> str:
        """The single character a JavaScript escape (other than class shorthands) stands for."""
        if ch == "0" and not self.peek().isdigit():
            return "\0"
        if ch in _CONTROL_ESCAPES and ch != "0":
            return _CONTROL_ESCAPES[ch]
        if ch == "0":  # \0 followed by a digit
            if self.unicode:
                raise self.error("Invalid class escape" if in_class else "Invalid decimal escape")
            return self.legacy_octal("0")
        if ch == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", self.src[self.i : self.i + 2]):
            self.i += 2
            return chr(int(self.src[self.i - 2 : self.i], 16))
        if ch == "u":
            return self.unicode_escape()
        if ch == "c" and self.peek().isascii() and self.peek().isalpha():
            self.i += 1
            return chr(ord(self.src[self.i - 1]) % 32)
        if self.unicode and ch not in _SYNTAX_CHARACTERS and not (in_class and ch == "-"):
            raise self.error("Invalid escape")
        return ch  # Annex B identity escape: \e, \-, \/ ... stand for the character itself

    def unicode_escape(self) -> str:
        if self.unicode and self.peek() == "{":
            match = re.match(r"\{([0-9A-Fa-f]+)\}", self.src[self.i :])
            if not match or int(match.group(1), 16) > 0x10FFFF:
                raise self.error("Invalid Unicode escape")
            self.i += match.end()
            return chr(int(match.group(1), 16))
        if not re.fullmatch(r"[0-9A-Fa-f]{4}", self.src[self.i : self.i + 4]):
            if self.unicode:
                raise self.error("Invalid Unicode escape")
            return "u"
        code = int(self.src[self.i : self.i + 4], 16)
        self.i += 4
        low = self.src[self.i : self.i + 6]
        if self.unicode and 0xD800 <= code <= 0xDBFF and re.fullmatch(r"\\u[dD][c-fC-F][0-9A-Fa-f]{2}", low):
            self.i += 6
            return chr(0x10000 + ((code - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00))
        return chr(code)

    def char_class(self) -> str:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        spans: list[tuple[int, int]] = []  # explicit characters and ranges
        shorthands: list[str] = []  # \d \w \s \p{..} bodies (closed under JavaScript's case folding)
        negated_shorthands: list[str] = []  # \D \W \S: Python classes cannot nest them
        while True:
            if self.i >= len(self.src):
                raise self.error("Unterminated character class")
            if self.src[self.i] == "]":
                self.i += 1
                break
            low, is_set = self.class_atom()
            if is_set is not None:
                if self.unicode and self.peek() == "-" and self.peek(1) not in ("]", ""):
                    raise self.error("Invalid character class")
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
                if self.unicode:
                    raise self.error("Invalid character class")
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
        if esc in "pP" and self.unicode:
            return self.property_escape(esc), "pos"
        if esc == "b":
            return "\b", None
        if esc.isdigit() and esc != "0":
            if self.unicode:
                raise self.error("Invalid class escape")
            return self.legacy_octal(esc), None
        if esc == "c" and not (self.peek().isascii() and self.peek().isalpha()):
            if not self.unicode and (self.peek().isdigit() or self.peek() == "_"):
                self.i += 1
                return chr(ord(self.src[self.i - 1]) % 32), None  # Annex B: ClassControlLetter
            if self.unicode:
                raise self.error("Invalid class escape")
            self.i -= 1  # a literal backslash; the c is the next atom
            return "\\", None
        if esc == "k" and self.unicode:
            raise self.error("Invalid escape")
        return self.atom_escape(esc, in_class=True), None


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


def utf16_units(text: str) -> str:
    """``text`` with each character outside the BMP split into its two surrogates, as JavaScript strings hold it."""
    if not text or max(text) < "\U00010000":
        return text
    out = []
    for ch in text:
        code = ord(ch) - 0x10000
        out.append(ch if code < 0 else chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


class _WallClockAlarm(Exception):
    """Raised by the SIGALRM handler to stop a search (the regex package checks for signals while matching)."""


def _bounded_search(compiled: Any, subject: str, pos: int, seconds: float) -> Any:
    """``compiled.search`` stopped after ``seconds``: of wall-clock time where a real-time timer can be set (the
    main thread on POSIX), and of CPU time in any case (the regex package's own ``timeout``, which on a busy machine
    alone would let a search run several times longer than the limit in wall-clock time)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return compiled.search(subject, pos, timeout=seconds)
    armed = [True]

    def alarm(_signum: int, _frame: Any) -> None:
        if armed[0]:
            raise _WallClockAlarm

    previous_handler = signal.signal(signal.SIGALRM, alarm)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        return compiled.search(subject, pos, timeout=seconds)
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay > 0:  # someone else's timer: give it back what is left of it
            left = max(previous_delay - (time.monotonic() - started), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)


class JsPattern:
    """A compiled JavaScript regular expression: ``search`` is ``exec`` (a match or None), ``test`` is ``test``."""

    __slots__ = ("compiled", "flags", "source")

    def __init__(self, source: str, flags: str, compiled: Any) -> None:
        self.source = source
        self.flags = flags
        self.compiled = compiled

    def __repr__(self) -> str:
        return f"JsPattern(/{self.source}/{self.flags})"

    def search(self, subject: str, pos: int = 0) -> Any:
        """The first match at or after ``pos`` (a ``regex`` match object), bounded by the current time limit.

        Without ``u`` the subject is matched as JavaScript sees it, in UTF-16 code units: positions count units and
        a character outside the BMP is two (surrogate) characters of the match's string."""
        if "u" not in self.flags:
            subject = utf16_units(subject)
        limit = current_limit()
        if limit is None:
            return self.compiled.search(subject, pos)
        left = limit.remaining()
        if left > 0:
            try:
                return _bounded_search(self.compiled, subject, pos, left)
            except (TimeoutError, _WallClockAlarm):
                pass
        raise limit.exceeded(
            f"the regular expression /{self.source}/{self.flags} did not finish on a {len(subject)}-character "
            f"subject within the {limit.seconds:g} s time limit (catastrophic backtracking)"
        )

    def test(self, subject: str) -> bool:
        return self.search(subject) is not None


_CACHE: dict[tuple[str, str], JsPattern] = {}


def js_regex(source: str, flags: str = "") -> JsPattern:
    """Compile the source of ``/source/flags`` to a pattern with JavaScript matching semantics.

    ``re.test(s)`` in JavaScript is ``js_regex(source).search(s) is not None`` in Python. Flags: ``m`` (``^``/``$``
    at line terminators), ``s`` (``.`` matches them too), ``i`` (JavaScript's non-unicode case folding, computed
    from Python's Unicode tables: ``ſ``, ``ı`` or the Kelvin sign do not match ASCII letters, as in JavaScript) and
    ``u`` (strict syntax, ``\\u{...}``, ``\\p{...}``; not together with ``i``). Raises ``JsRegexError`` with V8's
    message for a source JavaScript rejects, and ``UsageError`` for other flags or a backreference under ``i``.
    """
    if set(flags) - set("imsu") or len(set(flags)) != len(flags):
        raise UsageError(f"js_regex supports the flags i, m, s and u (each once), not {flags!r}")
    if "i" in flags and "u" in flags:
        raise UsageError("js_regex does not support the flags i and u together")
    key = (source, flags)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    python_source = _Translator(source if "u" in flags else utf16_units(source), flags).translate()
    try:
        # Case folding is spelled out as character classes, so the pattern itself is case-sensitive.
        compiled = regex.compile(python_source, regex.VERSION0)
    except (regex.error, OverflowError) as exc:
        raise UsageError(f"Invalid or unsupported regular expression: /{source}/{flags}: {exc}") from None
    pattern = JsPattern(source, flags, compiled)
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[key] = pattern
    return pattern


@functools.lru_cache(maxsize=512)
def schema_regex(source: str) -> JsPattern:
    """A JSON Schema ``pattern`` as pi-schema compiles it: with the ``u`` flag, or without it when ``u`` rejects
    the source (some older schemas escape characters ``u`` rejects). Raises ``JsRegexError`` (the message of the
    flagless attempt, as JavaScript's) when both reject it."""
    try:
        return js_regex(source, "u")
    except JsRegexError:
        return js_regex(source)
