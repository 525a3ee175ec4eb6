"""Run one scenario on a chosen backend and get its trace lines: the same call for the stand-in and real Pi.

The stand-in runs in a worker thread, so a notebook (whose event loop is already running) can `await` it while
the stand-in drives its own loop. Real Pi runs through the reference bridge (Node), also off the event loop.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pinb.backends import Backend


def _parse(scenario: Mapping[str, Any]) -> Any:
    from pinb.scenario.model import parse_scenario

    return parse_scenario(dict(scenario), source=str(scenario.get("id", "scenario")))


def run_standin_sync(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    from pinb.scenario.standin import run_on_standin

    return [dict(line) for line in run_on_standin(_parse(scenario))]


def run_pi_sync(scenario: Mapping[str, Any], pi_version: str) -> list[dict[str, Any]]:
    from pinb.scenario import reference
    from pinb.scenario.trace import loads_jsonl

    _parse(scenario)  # a malformed scenario is reported here, not as a Node error
    with tempfile.TemporaryDirectory(prefix="pinb-scenario-") as folder:
        path = Path(folder) / f"{scenario.get('id', 'scenario')}.json"
        path.write_text(json.dumps(dict(scenario), ensure_ascii=False), encoding="utf-8")
        return loads_jsonl(reference.run_on_pi(path, pi_version))


async def run_scenario(
    scenario: Mapping[str, Any], backend: str = "standin", pi_version: str | None = None
) -> list[dict[str, Any]]:
    """Run `scenario` (a dict in the scenario format) on `standin` or `pi` (with `pi_version`); its trace lines."""
    Backend(backend, pi_version)  # type: ignore[arg-type]  # an unknown backend or a pi without version: UsageError
    if backend == "standin":
        return await asyncio.to_thread(run_standin_sync, scenario)
    assert pi_version is not None
    return await asyncio.to_thread(run_pi_sync, scenario, pi_version)


__all__ = ["run_pi_sync", "run_scenario", "run_standin_sync"]
