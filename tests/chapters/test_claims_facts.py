"""`pinb claims facts`: each chapter's package facts written per installed release (offline: the recorder is a
fake); unknown chapters and releases, and releases not installed, are one line and exit 2 before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters.registry import folders
from pinb.cli import main
from pinb.scenario import reference


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Pi 1.3.0 and 1.6.0 'installed'; chapter 01's recorder notes the releases it was asked for."""
    asked: list[str] = []
    module = folders()["pi-01-chapter"].module("experiments")

    def fake(version: str) -> Path:
        asked.append(version)
        return Path(f"pi-{version}.json")

    monkeypatch.setattr(module, "record_facts", fake)
    monkeypatch.setattr(reference, "is_installed", lambda version: version in ("1.3.0", "1.6.0"))
    return asked


def test_every_installed_release_oldest_first(recorded: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "facts", "--pi-version", "all"]) == 0
    assert recorded == ["1.3.0", "1.6.0"]
    assert capsys.readouterr().out.splitlines() == [
        "pi-01-chapter on Pi 1.3.0: wrote pi-1.3.0.json",
        "pi-01-chapter on Pi 1.6.0: wrote pi-1.6.0.json",
    ]


def test_one_release(recorded: list[str]) -> None:
    assert main(["claims", "facts", "pi-01-chapter", "--pi-version", "1.3.0"]) == 0
    assert recorded == ["1.3.0"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pi-version", "9.9.9"], "pinb: error: unknown Pi version '9.9.9': supported are "),
        (["--pi-version", "1.4.0"], "pinb: error: Pi 1.4.0 is not installed: run `pinb reference install"),
        (["nope"], "pinb: error: unknown chapter 'nope' (known: "),
        (["pi-16-chapter"], "pinb: error: no chapter asked for records package facts"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    recorded: list[str], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["claims", "facts", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert recorded == []
