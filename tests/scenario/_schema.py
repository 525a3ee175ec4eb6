"""The scenario schemas the tests check documents against.

``pinb_schema()`` is the project's own schema, committed next to ``pinb.scenario.model`` (which generates it): every
test that validates a document uses it, so a checkout alone runs them all. ``contract_schema()`` is the original
shared contract, the compatibility floor: a document it accepts, pinb's schema and models accept too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PINB_SCHEMA = ROOT / "src" / "pinb" / "scenario" / "scenario.schema.json"
SHARED = ROOT / ".." / "shared"
SHARED_SCHEMA = SHARED / "scenario.schema.json"


def pinb_schema() -> dict[str, Any]:
    """The committed JSON Schema of the scenario format (docs/scenario-format.md explains it)."""
    result: dict[str, Any] = json.loads(PINB_SCHEMA.read_text(encoding="utf-8"))
    return result


def contract_schema() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(SHARED_SCHEMA.read_text(encoding="utf-8"))
    return result


def app_document(scenario_id: str, **fields: Any) -> dict[str, Any]:
    """A small valid layer-app scenario (one prompt, one scripted reply) with ``fields`` set over it."""
    base: dict[str, Any] = {
        "id": scenario_id,
        "layer": "app",
        "prompt": "Hello.",
        "responses": [{"content": [{"type": "text", "text": "Hi."}]}],
    }
    return {**base, **fields}


def schema_errors(document: dict[str, Any]) -> list[str]:
    """What the committed schema says is wrong with ``document`` (nothing: it validates)."""
    import jsonschema

    return [error.message for error in jsonschema.Draft202012Validator(pinb_schema()).iter_errors(document)]
