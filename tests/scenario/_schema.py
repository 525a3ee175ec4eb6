"""The contract's scenario schema with pinb's extensions merged in: the layer-agent ``hooks`` field, the
layer-app recovery fields (``model``, ``settings.compaction``, ``settings.retry``) and the application-layer fields
and action kinds (``project``, ``steps``, ``observe``, eight more ``action.kind`` values).

The shared contract is read-only; pinb documents its extensions in scenarios/README.md and keeps their schemas in
reference/scenario-hooks.schema.json, reference/scenario-recovery.schema.json and reference/scenario-app.schema.json.
A scenario without them must pass
the contract's schema alone.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED_SCHEMA = ROOT / ".." / "shared" / "scenario.schema.json"
HOOKS_SCHEMA = ROOT / "reference" / "scenario-hooks.schema.json"
RECOVERY_SCHEMA = ROOT / "reference" / "scenario-recovery.schema.json"
APP_SCHEMA = ROOT / "reference" / "scenario-app.schema.json"
APP_FIELDS = ("project", "steps", "observe")
#: The top-level fields pinb adds to the contract (a scenario without them is a plain contract scenario).
EXTENSION_FIELDS = ("hooks", "model")


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
    recovery = json.loads(RECOVERY_SCHEMA.read_text(encoding="utf-8"))
    assert "model" not in schema["properties"], "the contract now defines model itself: drop pinb's extension"
    schema["properties"]["model"] = recovery["properties"]["model"]
    settings = schema["$defs"]["settings"]["properties"]
    assert not set(recovery["settings"]) & set(settings), "the contract now defines these settings itself"
    settings.update(recovery["settings"])
    schema["allOf"].append(
        {
            "description": "model, settings.compaction and settings.retry need layer app (pinb's extension).",
            "if": {
                "anyOf": [
                    {"required": ["model"]},
                    {
                        "properties": {"settings": {"anyOf": [{"required": ["compaction"]}, {"required": ["retry"]}]}},
                        "required": ["settings"],
                    },
                ]
            },
            "then": {"properties": {"layer": {"const": "app"}}, "required": ["layer"]},
        }
    )
    return schema


def contract_part(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without pinb's extension fields: what the contract's schema alone must accept."""
    plain = {key: value for key, value in data.items() if key not in EXTENSION_FIELDS}
    settings = plain.get("settings")
    if isinstance(settings, dict):
        plain["settings"] = {key: value for key, value in settings.items() if key not in ("compaction", "retry")}
    return plain


def _fragment(path: Path, prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A fragment schema with its definitions renamed ``<prefix>_<name>`` and its references following them."""
    fragment = json.loads(path.read_text(encoding="utf-8"))
    fragment.pop("$schema", None)
    fragment.pop("$id", None)
    defs = fragment.pop("$defs", {})
    fragment = json.loads(json.dumps(fragment).replace('"#/$defs/', f'"#/$defs/{prefix}_'))
    defs = json.loads(json.dumps(defs).replace('"#/$defs/', f'"#/$defs/{prefix}_'))
    return fragment, {f"{prefix}_{name}": value for name, value in defs.items()}


def app_action_kinds() -> list[str]:
    _, defs = _fragment(APP_SCHEMA, "app")
    return [item["properties"]["kind"]["const"] for item in defs["app_action"]["oneOf"]]


def uses_app_extension(doc: dict[str, Any]) -> bool:
    kinds = set(app_action_kinds())
    actions = [h.get("action", {}).get("kind") for e in doc.get("extensions", ()) for h in e.get("handlers", ())]
    return any(name in doc for name in APP_FIELDS) or any(kind in kinds for kind in actions)


def app_extended_schema() -> dict[str, Any]:
    """``extended_schema()`` plus the application-layer fields (layer app only) and action kinds."""
    schema = extended_schema()
    fragment, defs = _fragment(APP_SCHEMA, "app")
    schema["$defs"].update(defs)
    for name, value in fragment["properties"].items():
        assert name not in schema["properties"], f"the contract now defines {name} itself: drop pinb's extension"
        schema["properties"][name] = value
    schema["allOf"].append(
        {
            "description": "steps need layer app (pinb's extension).",
            "if": {"required": ["steps"]},
            "then": {"properties": {"layer": {"const": "app"}}, "required": ["layer"]},
        }
    )
    schema["allOf"].append(
        {
            "description": "project and observe need layer app or agent; project.trust needs layer app.",
            "if": {"anyOf": [{"required": ["project"]}, {"required": ["observe"]}]},
            "then": {
                "properties": {"layer": {"enum": ["app", "agent"]}},
                "required": ["layer"],
                "if": {"properties": {"project": {"required": ["trust"]}}, "required": ["project"]},
                "then": {"properties": {"layer": {"const": "app"}}},
            },
        }
    )
    action = schema["$defs"]["action"]
    kinds = app_action_kinds()
    action["properties"]["kind"]["enum"] = [*action["properties"]["kind"]["enum"], *kinds]
    action["oneOf"] = [*action["oneOf"], *defs["app_action"]["oneOf"]]
    for kind, events in defs["app_action_events"]["const"].items():
        schema["$defs"]["handler"]["allOf"].append(
            {
                "if": {"properties": {"action": {"properties": {"kind": {"const": kind}}}}},
                "then": {"properties": {"event": {"enum": events}}},
            }
        )
    return schema
