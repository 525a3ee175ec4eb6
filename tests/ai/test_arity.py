"""`positional_arity` reads a plain function's or bound method's code object; it answers as `inspect.signature`
does for every kind of callable a listener or a scripted reply can be."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from pinb.ai.arity import by_signature, positional_arity


class _Listener:
    def method(self, event: Any, signal: Any = None, *, extra: Any = None) -> None: ...

    def many(self, *events: Any) -> None: ...

    @staticmethod
    def static(event: Any) -> None: ...

    @classmethod
    def klass(cls, event: Any, signal: Any) -> None: ...

    def __call__(self, event: Any) -> None: ...


def _plain(a: Any, /, b: Any, c: Any = 2, *, d: Any) -> None: ...


def _varargs(*args: Any) -> None: ...


def _none() -> None: ...


@functools.wraps(_plain)
def _wrapped(*args: Any, **kwargs: Any) -> None: ...


async def _coroutine(event: Any, signal: Any) -> None: ...


def _with_signature(*args: Any) -> None: ...


_with_signature.__signature__ = inspect.signature(_none)  # type: ignore[attr-defined]

CALLABLES = [
    _plain,
    _varargs,
    _none,
    _wrapped,
    _coroutine,
    _with_signature,
    _Listener().method,
    _Listener().many,
    _Listener.static,
    _Listener.klass,
    _Listener(),
    _Listener.method,
    functools.partial(_plain, 1),
    lambda event, signal=None: None,
    lambda *events: None,
    print,
    len,
]


@pytest.mark.parametrize("fn", CALLABLES, ids=repr)
def test_positional_arity_answers_as_inspect_signature(fn: Callable[..., Any]) -> None:
    assert positional_arity(fn) == by_signature(fn)
