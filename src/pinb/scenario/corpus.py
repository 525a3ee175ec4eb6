"""The scenario corpus on disk: scenario files, recorded real-Pi traces and the known, justified differences.

Layout (repository root): ``scenarios/<id>.json``, ``scenarios/traces/pi-<version>/<id>.jsonl`` and
``scenarios/KNOWN_DIFFERENCES.json`` = ``{"<version>": {"<scenario id>": "<why the stand-in differs>"}}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pinb.backends import PI_MODELLED_VERSION
from pinb.errors import ScenarioError
from pinb.scenario.model import ID_PATTERN, Scenario, decode_json, load_scenario
from pinb.scenario.trace import loads_jsonl

DEFAULT_PI_VERSION = PI_MODELLED_VERSION
KNOWN_DIFFERENCES = "KNOWN_DIFFERENCES.json"


def corpus_dir(start: Path | None = None) -> Path:
    """The ``scenarios/`` folder: ``$PINB_SCENARIOS``, else the nearest one above ``start`` (the working directory),
    else the one of the source checkout this package runs from."""
    override = os.environ.get("PINB_SCENARIOS")
    if override:
        return Path(override)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "scenarios").is_dir() and (folder / "reference").is_dir():
            return folder / "scenarios"
    checkout = Path(__file__).resolve().parents[3] / "scenarios"
    if checkout.is_dir():
        return checkout
    raise ScenarioError("no scenarios/ folder found: run from the pinb repository or set PINB_SCENARIOS")


def scenario_paths(folder: Path | None = None) -> list[Path]:
    """Scenario files: ``<id>.json`` where ``<id>`` is a slug (so ``KNOWN_DIFFERENCES.json`` is not one)."""
    folder = folder or corpus_dir()
    return sorted(p for p in folder.glob("*.json") if ID_PATTERN.fullmatch(p.stem))


def load_corpus(folder: Path | None = None, *, layer: str | None = None) -> list[tuple[Path, Scenario]]:
    """Every corpus scenario (validated), optionally only one layer's."""
    loaded = [(path, load_scenario(path)) for path in scenario_paths(folder)]
    return [(p, s) for p, s in loaded if layer is None or s.layer == layer]


def recorded_trace_path(scenario_id: str, version: str, folder: Path | None = None) -> Path:
    return (folder or corpus_dir()) / "traces" / f"pi-{version}" / f"{scenario_id}.jsonl"


def read_recorded(scenario_id: str, version: str, folder: Path | None = None) -> list[dict[str, Any]] | None:
    """The recorded real-Pi trace of one scenario, or ``None`` when none was recorded for that version."""
    path = recorded_trace_path(scenario_id, version, folder)
    if not path.is_file():
        return None
    try:
        return loads_jsonl(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path}: not a JSONL trace: {exc}") from None


def known_differences(version: str, folder: Path | None = None) -> dict[str, str]:
    """Scenario id → the written justification of its known difference from Pi ``version``."""
    path = (folder or corpus_dir()) / KNOWN_DIFFERENCES
    if not path.is_file():
        return {}
    data = decode_json(path.read_text(encoding="utf-8"), str(path))
    entries = data.get(version, {}) if isinstance(data, dict) else {}
    if not isinstance(entries, dict) or not all(isinstance(v, str) and v.strip() for v in entries.values()):
        raise ScenarioError(f"{path}: expected {{version: {{scenario id: reason}}}} with a non-empty reason")
    return dict(entries)


@dataclass(frozen=True)
class Comparison:
    """The outcome for one scenario: ``conforms``, ``differs``, ``known`` (differs, justified), ``unrecorded``."""

    scenario_id: str
    layer: str
    status: str
    detail: str = ""
