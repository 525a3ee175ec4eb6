"""The scenario format's JSON Schema, generated from the models in :mod:`pinb.scenario.model`.

The committed copy, ``scenario.schema.json`` next to this module, is what people and other tools read; a test fails
when it and the models drift apart. Regenerate it with ``pinb scenario schema --write`` (``--check`` exits 1 when
the committed copy is stale).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pinb.scenario.model import Scenario

SCHEMA_PATH = Path(__file__).with_name("scenario.schema.json")


def generate_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario document, as the models accept it (on-disk field names)."""
    body = Scenario.model_json_schema(by_alias=True, mode="validation")
    header = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Generated from pinb.scenario.model by `pinb scenario schema --write`; do not edit by hand. "
        "The format is explained in docs/scenario-format.md.",
        "title": "pinb scenario",
    }
    body.pop("title", None)
    return _json_schema_keywords({**header, **body})


#: pydantic writes a constraint it cannot attach to a validated type (``Int``, an int with a before-validator) under
#: its own name; these are the JSON Schema keywords it means.
_CONSTRAINTS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _json_schema_keywords(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema_keywords(item) for item in node]
    if not isinstance(node, dict):
        return node
    numeric = node.get("type") in ("integer", "number")
    return {
        (_CONSTRAINTS.get(key, key) if numeric else key): _json_schema_keywords(value) for key, value in node.items()
    }


def schema_text() -> str:
    return json.dumps(generate_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def committed_schema() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return result


def is_current() -> bool:
    return SCHEMA_PATH.is_file() and SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()
