"""The committed JSON Schema is the one the models generate (regenerate: ``pinb scenario schema --write``)."""

from __future__ import annotations

import json

import jsonschema

from pinb.scenario.schema import SCHEMA_PATH, committed_schema, generate_schema, is_current, schema_text


def test_the_committed_schema_is_the_one_the_models_generate() -> None:
    assert committed_schema() == generate_schema(), "stale: run `pinb scenario schema --write`"
    assert is_current()


def test_the_committed_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(committed_schema())
    assert committed_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_text_is_stable_json_ending_in_a_newline() -> None:
    text = schema_text()
    assert text.endswith("}\n") and json.loads(text) == generate_schema()
    assert SCHEMA_PATH.name == "scenario.schema.json"
