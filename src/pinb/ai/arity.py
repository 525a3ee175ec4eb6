"""How many positional arguments a callback takes, so it can be called the way JavaScript calls it.

JavaScript ignores extra arguments: Pi calls a listener written as ``(event)`` with ``(event, signal)`` and a faux
response factory written as ``(context)`` with ``(context, options, state, model)``. Python callbacks get only as
many positional arguments as they declare.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any


def positional_arity(fn: Callable[..., Any]) -> int | None:
    """The number of positional parameters of ``fn``; ``None`` when it takes ``*args`` or has no signature."""
    # A plain function or bound method is read off its code object (`inspect.signature` builds a whole Signature,
    # once per scripted reply and per listener); anything `inspect.signature` would read otherwise goes to it.
    function, bound = (fn.__func__, 1) if type(fn) is types.MethodType else (fn, 0)
    if type(function) is types.FunctionType and not hasattr(fn, "__wrapped__") and not hasattr(fn, "__signature__"):
        code = function.__code__
        return None if code.co_flags & inspect.CO_VARARGS else max(code.co_argcount - bound, 0)
    return by_signature(fn)


def by_signature(fn: Callable[..., Any]) -> int | None:
    """`positional_arity` as `inspect.signature` reads it (what the code-object path must agree with)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return None
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
