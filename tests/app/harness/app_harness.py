"""Helpers for app-layer tests: load factories into a runner, collect reported errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinb.app.extensions import ExtensionErrorRecord, ExtensionRunner, load_extensions


async def make_runner(
    *factories: tuple[str, Any], ui: Any = None
) -> tuple[ExtensionRunner, list[ExtensionErrorRecord]]:
    """A runner over ``(name, factory)`` pairs in load order, and the list its reported errors land in."""
    loaded = await load_extensions(list(factories))
    assert not loaded.errors, loaded.errors
    runner = ExtensionRunner(loaded.extensions, loaded.runtime)
    runner.set_ui(ui)
    errors: list[ExtensionErrorRecord] = []
    runner.on_error(errors.append)
    return runner, errors


def error_summary(errors: Sequence[ExtensionErrorRecord]) -> list[tuple[str, str, str]]:
    return [(e.extension_path, e.event, e.error) for e in errors]
