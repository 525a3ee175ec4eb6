"""Reading notebooks before a run, and reading claim outcomes back out of executed ones."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from pinb.errors import KitError
from pinb.kit.claims import CLAIM_MIME
from pinb.kit.execute import collect_outcomes
from pinb.kit.notebook import check_parameters, inspect_notebook

from .conftest import NOTEBOOKS


def test_parameters_are_read_from_the_tagged_cell() -> None:
    info = inspect_notebook(NOTEBOOKS / "holds.ipynb")
    assert info.parameter_names == ("backend", "pi_version")
    check_parameters(NOTEBOOKS / "holds.ipynb", info, {"backend": "pi", "pi_version": "1.0.3"})
    with pytest.raises(KitError, match=r"^holds.ipynb has no parameter 'seed' \(its parameters cell declares: "):
        check_parameters(NOTEBOOKS / "holds.ipynb", info, {"seed": 1})


def test_annotated_parameters(tmp_path: Path) -> None:
    cell = new_code_cell("backend: str = 'standin'\nlimit: int = 3  # how many\nif False:\n    hidden = 1")
    cell.metadata["tags"] = ["parameters"]
    nbformat.write(new_notebook(cells=[cell]), tmp_path / "a.ipynb")
    assert inspect_notebook(tmp_path / "a.ipynb").parameter_names == ("backend", "limit")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read notebook"),
        ("{ nope", "is not a readable notebook"),
        ('{"cells": 3, "nbformat": 4}', "is not a readable notebook"),
        ("[1, 2]", "is not a readable notebook"),
    ],
)
def test_unusable_notebooks_are_one_line_errors(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "bad.ipynb"
    if content is not None:
        path.write_text(content)
    with pytest.raises(KitError, match=message) as caught:
        inspect_notebook(path)
    assert "\n" not in str(caught.value)


def test_no_parameters_cell() -> None:
    with pytest.raises(KitError, match=r"noparams\.ipynb has no cell tagged 'parameters'"):
        inspect_notebook(NOTEBOOKS / "noparams.ipynb")


def _display(data: dict) -> dict:
    return new_output("display_data", data={CLAIM_MIME: data, "text/plain": "x"})


def test_outcomes_are_collected_in_order_with_problems_named(tmp_path: Path) -> None:
    cells = [
        new_code_cell("a", outputs=[_display({"claim_id": "kt-01.math.adds", "outcome": "holds", "evidence": "2"})]),
        new_code_cell(
            "b",
            outputs=[
                new_output("stream", name="stdout", text="hi"),
                _display({"claim_id": "kt-01.math.adds", "outcome": "maybe", "evidence": "?"}),
                _display({"claim_id": "kt-09.other.claim", "outcome": "holds", "evidence": "e", "backend": "standin"}),
                _display(
                    {"claim_id": "kt-01.math.multiplies", "outcome": "holds", "evidence": "42", "backend": "pi@1.6.0"}
                ),
            ],
        ),
    ]
    path = tmp_path / "executed.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    outcomes, warnings = collect_outcomes(path, "standin", frozenset({"kt-01.math.adds", "kt-01.math.multiplies"}))
    assert [(o.claim_id, o.outcome, o.backend) for o in outcomes] == [
        ("kt-01.math.adds", "holds", "standin"),
        ("kt-09.other.claim", "holds", "standin"),
        ("kt-01.math.multiplies", "error", "standin"),
    ]
    assert outcomes[2].evidence == "the notebook reported backend pi@1.6.0 but ran with standin"
    assert warnings[0].startswith("cell 1: malformed claim output ignored")
    assert warnings[1] == "cell 1: claim kt-09.other.claim is not registered for this chapter"


def test_an_unreadable_executed_notebook_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "executed.ipynb"
    path.write_text(json.dumps({"cells": "broken"}))
    outcomes, warnings = collect_outcomes(path, "standin", frozenset())
    assert outcomes == ()
    assert warnings[0].startswith("cannot read the executed notebook")
