"""Bad scenario inputs end in one line on stderr with exit 2, never a traceback.

Before: a 5000-digit integer (also through ``scenario conform --corpus``) raised Python's int-conversion
ValueError, JSON nested ~1000 deep a RecursionError, ``-o`` naming an existing folder an IsADirectoryError, and
``NaN``/``Infinity`` (which JSON and the reference runner reject) were read as numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinb.cli import main

GOOD = {"id": "bad", "layer": "agent", "prompt": "hi", "responses": [{"content": [{"type": "text", "text": "x"}]}]}
TEXT = json.dumps(GOOD)
BIG_INT = TEXT[:-1] + ', "settings": {"stream": {"token_size": ' + "9" * 5000 + "}}}"
DEEP = (
    TEXT[:-1]
    + ', "tools": [{"name": "x", "behavior": {"kind": "return", "details": '
    + "[" * 1000
    + "]" * 1000
    + "}}]}"
)
INFINITY = TEXT[:-1] + ', "settings": {"stream": {"tokens_per_second": Infinity}}}'

BAD = [
    (BIG_INT, "an integer has more than"),
    (DEEP, "nested too deeply"),
    (INFINITY, "Infinity is not a JSON value"),
    (TEXT.replace('"hi"', '"\\ud800"'), "bad.json"),
]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("text", "fragment"), BAD, ids=["5000-digit-int", "nested-1000", "infinity", "surrogate"])
def test_scenario_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    assert main(["scenario", "run", str(path), "--backend", "standin"]) == 2
    assert fragment in _one_line(capsys)


@pytest.mark.parametrize(("text", "fragment"), BAD[:3], ids=["5000-digit-int", "nested-1000", "infinity"])
def test_scenario_conform_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragment: str) -> None:
    (tmp_path / "traces" / "pi-1.6.0").mkdir(parents=True)
    (tmp_path / "bad.json").write_text(text, encoding="utf-8")
    assert main(["scenario", "conform", "--corpus", str(tmp_path)]) == 2
    assert fragment in _one_line(capsys)


def test_output_naming_an_existing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.json"
    path.write_text(TEXT, encoding="utf-8")
    assert main(["scenario", "run", str(path), "--backend", "standin", "-o", str(tmp_path)]) == 2
    assert "it is a folder" in _one_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.json"]


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "1e400"])
def test_timeout_must_be_a_positive_finite_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = tmp_path / "good.json"
    path.write_text(TEXT, encoding="utf-8")
    assert main(["scenario", "run", str(path), "--backend", "standin", "--timeout", value]) == 2
    assert "time limit must be a positive number" in _one_line(capsys)
