"""The contract's scenario schema with pinb's one extension, the layer-agent ``hooks`` field, merged in.

The shared contract is read-only; pinb documents its extension in scenarios/README.md and keeps the extension's
schema in reference/scenario-hooks.schema.json. A scenario without ``hooks`` must pass the contract's schema alone.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED_SCHEMA = ROOT / ".." / "shared" / "scenario.schema.json"
HOOKS_SCHEMA = ROOT / "reference" / "scenario-hooks.schema.json"


def contract_schema() -> dict[str, Any]:
    return json.loads(SHARED_SCHEMA.read_text(encoding="utf-8"))


def extended_schema() -> dict[str, Any]:
    """The contract's schema plus ``hooks`` (an optional property, allowed on layer agent only)."""
    schema = copy.deepcopy(contract_schema())
    hooks = json.loads(HOOKS_SCHEMA.read_text(encoding="utf-8"))
    hooks.pop("$schema", None)
    hooks.pop("$id", None)
    # The fragment's own definitions move into the root's, prefixed, and its references follow them.
    defs = hooks.pop("$defs", {})
    hooks = json.loads(json.dumps(hooks).replace('"#/$defs/', '"#/$defs/hooks_'))
    schema["$defs"].update({f"hooks_{name}": value for name, value in defs.items()})
    assert "hooks" not in schema["properties"], "the contract now defines hooks itself: drop pinb's extension"
    schema["properties"]["hooks"] = hooks
    schema["allOf"].append(
        {
            "description": "hooks need layer agent (pinb's extension).",
            "if": {"required": ["hooks"]},
            "then": {"properties": {"layer": {"const": "agent"}}, "required": ["layer"]},
        }
    )
    return schema
