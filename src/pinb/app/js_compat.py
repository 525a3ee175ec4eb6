"""JavaScript semantics that Pi's extensions rely on, in Python (both pieces checked against real Node).

- ``json_stringify(value)`` is ``JSON.stringify(value)``: no spaces, insertion order (with JavaScript's
  array-index keys first), non-ASCII kept, control characters escaped the way JavaScript escapes them,
  numbers printed the way JavaScript prints them. It lives in ``pinb.ai.jsjson`` (``pinb.ai`` writes Pi's
  texts with it too).
- ``js_regex(source, flags="")`` is ``new RegExp(source, flags)``: JavaScript's syntax, errors and matching. It
  lives in ``pinb.ai.jsregex`` (``pinb.ai`` checks schema ``pattern`` keywords with it too).

A guard that matches ``JSON.stringify(event.input)`` against a regex sees a tab as the two characters ``\\t``;
getting that wrong in either direction would change what the guard blocks.
"""

from __future__ import annotations

from pinb.ai.jsjson import UNDEFINED, js_number_to_string, json_stringify
from pinb.ai.jsregex import JS_LINE_TERMINATORS, JS_WHITESPACE, JsPattern, JsRegexError, js_regex

__all__ = [
    "JS_LINE_TERMINATORS",
    "JS_WHITESPACE",
    "UNDEFINED",
    "JsPattern",
    "JsRegexError",
    "js_number_to_string",
    "js_regex",
    "json_stringify",
]
