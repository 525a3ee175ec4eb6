"""docs/scenario-format.md documents the whole format: every top-level field, tool behaviour, handler action, step,
hook kind, trace source and projection the models and the trace writer know, and its JSON examples are valid."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from pinb.scenario import model
from pinb.scenario.model import parse_scenario
from pinb.scenario.trace import PROJECTIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md").read_text(encoding="utf-8")


def _kinds(union: object, field: str) -> list[str]:
    members = typing.get_args(typing.get_args(union)[0])
    return [typing.get_args(member.model_fields[field].annotation)[0] for member in members]


NAMES = {
    "top-level field": [info.alias or name for name, info in model.Scenario.model_fields.items()],
    "behaviour": _kinds(model.Behavior, "kind"),
    "action": _kinds(model.Action, "kind"),
    "step": _kinds(model.Step, "do"),
    "settings field": list(model.Settings.model_fields),
    "model field": list(model.ModelSpec.model_fields),
    "projection": list(PROJECTIONS),
}


@pytest.mark.parametrize(
    ("what", "name"), [(what, name) for what, names in NAMES.items() for name in names], ids=lambda v: str(v)
)
def test_every_name_the_models_know_is_documented(what: str, name: str) -> None:
    assert f"`{name}`" in DOC or f"do: {name}" in DOC or re.search(rf"\b{re.escape(name)}\??\s", DOC), (
        f"{what} {name} is not documented"
    )


def test_every_trace_source_is_documented() -> None:
    for source in ("meta", "agent", "session", "ext", "model", "request", "tree", "driver", "error"):
        assert f"| `{source}` |" in DOC


def test_the_json_examples_are_valid_scenarios() -> None:
    examples = re.findall(r"```json\n(.*?)```", DOC, re.S)
    assert len(examples) >= 2
    for text in examples:
        parse_scenario(json.loads(text))


def test_the_doc_points_at_the_committed_schema_and_its_command() -> None:
    assert "src/pinb/scenario/scenario.schema.json" in DOC and "pinb scenario schema --write" in DOC
