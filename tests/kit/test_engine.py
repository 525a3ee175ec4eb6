"""The book's `parameters` cells read the same to papermill as to pinb, without a warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from papermill.inspection import _infer_parameters
from papermill.iorw import load_notebook_node

from pinb.kit.notebook import inspect_notebook

BOOK_NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda path: path.name)
def test_papermill_reads_every_parameter_pinb_does(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """papermill skips a line with a second `=` (`x = 1  # for backend = "pi"`), warns `Unable to parse line`,
    then warns `Passed unknown parameter` for the very parameter pinb injects."""
    with caplog.at_level(logging.DEBUG, logger="papermill"):
        names = [parameter.name for parameter in _infer_parameters(load_notebook_node(str(path)))]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
    assert tuple(names) == inspect_notebook(path).parameter_names
