"""Run one scenario on a chosen backend and get its trace lines: the same call for the stand-in and real Pi.

The stand-in runs in a worker thread, so a notebook (whose event loop is already running) can `await` it while
the stand-in drives its own loop. Real Pi runs through the reference bridge (Node), also off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pinb.backends import Backend


def _parse(scenario: Mapping[str, Any]) -> Any:
    from pinb.scenario.model import parse_scenario

    return parse_scenario(dict(scenario), source=str(scenario.get("id", "scenario")))


#: The stand-in's traces in this process, by the faults switched on and the scenario's exact text: a generated
#: witness that two claims draw alike runs once. At most `_STANDIN_KEPT` are kept (the oldest go first).
_standin_traces: dict[tuple[frozenset[str], str], str] = {}
_standin_traces_lock = threading.Lock()
_STANDIN_KEPT = 4096


def _standin_key(scenario: Mapping[str, Any]) -> tuple[frozenset[str], str]:
    from pinb import _faults

    return _faults.ACTIVE, json.dumps(dict(scenario), ensure_ascii=False)


def run_standin_sync(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    from pinb.scenario.standin import run_on_standin
    from pinb.scenario.trace import dumps_jsonl, loads_jsonl

    key = _standin_key(scenario)
    with _standin_traces_lock:
        trace = _standin_traces.get(key)
    if trace is None:
        trace = dumps_jsonl(run_on_standin(_parse(scenario)))  # as the trace file has it, like real Pi's
        with _standin_traces_lock:
            _standin_traces[key] = trace
            while len(_standin_traces) > _STANDIN_KEPT:
                del _standin_traces[next(iter(_standin_traces))]
    return loads_jsonl(trace)  # parsed afresh: a caller that edits its lines never edits the kept trace


#: Real Pi's traces in this process, by release, trust and the scenario's exact text: a scenario that two claims
#: (or a hand-written and a generated witness) share runs once. Only completed runs are kept.
_pi_traces: dict[tuple[str, bool, str], str] = {}
_pi_traces_lock = threading.Lock()


def _pi_key(scenario: Mapping[str, Any], pi_version: str) -> tuple[tuple[str, bool, str], str]:
    from pinb.scenario import reference

    text = json.dumps(dict(scenario), ensure_ascii=False)
    return (pi_version, reference.extension_code_trusted(), hashlib.sha256(text.encode("utf-8")).hexdigest()), text


def run_pi_sync(scenario: Mapping[str, Any], pi_version: str) -> list[dict[str, Any]]:
    from pinb.scenario import reference
    from pinb.scenario.trace import loads_jsonl

    _parse(scenario)  # a malformed scenario is reported here, not as a Node error
    key, text = _pi_key(scenario, pi_version)
    with _pi_traces_lock:
        trace = _pi_traces.get(key)
    if trace is None:
        with tempfile.TemporaryDirectory(prefix="pinb-scenario-") as folder:
            path = Path(folder) / f"{scenario.get('id', 'scenario')}.json"
            path.write_text(text, encoding="utf-8")
            trace = reference.run_on_pi(path, pi_version)
        with _pi_traces_lock:
            _pi_traces[key] = trace
    return loads_jsonl(trace)  # parsed afresh: a caller that edits its lines never edits the kept trace


def kept_text(scenario: Mapping[str, Any], backend: str, pi_version: str | None = None) -> str | None:
    """The trace file text this process kept for `scenario` on the backend (what its trace lines were read from),
    or None when it has none: a run's artefact is written from it instead of from the lines again."""
    if backend == "standin":
        with _standin_traces_lock:
            return _standin_traces.get(_standin_key(scenario))
    if pi_version is None:
        return None
    with _pi_traces_lock:
        return _pi_traces.get(_pi_key(scenario, pi_version)[0])


async def run_scenario(
    scenario: Mapping[str, Any], backend: str = "standin", pi_version: str | None = None
) -> list[dict[str, Any]]:
    """Run `scenario` (a dict in the scenario format) on `standin` or `pi` (with `pi_version`); its trace lines."""
    Backend(backend, pi_version)  # type: ignore[arg-type]  # an unknown backend or a pi without version: UsageError
    if backend == "standin":
        return await asyncio.to_thread(run_standin_sync, scenario)
    assert pi_version is not None
    return await asyncio.to_thread(run_pi_sync, scenario, pi_version)


__all__ = ["kept_text", "run_pi_sync", "run_scenario", "run_standin_sync"]
