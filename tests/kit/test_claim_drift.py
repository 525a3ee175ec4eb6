"""`pinb drift --claims [CHAPTER] --from A --to B [--json]`: the claims whose recorded verdict changed between two
releases, from the same rows as `pinb status --matrix`; a release unknown or without a current run is one line and
exit 2 (synthetic runs; no kernel is started here)."""

from __future__ import annotations

import json

import pytest

from .conftest import RecordRun


@pytest.fixture
def two_releases(record_run: RecordRun) -> None:
    """kt-01 recorded on pi@1.3.0 (multiplies contradicted) and pi@1.6.0 (both hold)."""
    record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "holds", "2 + 2 = 4"), ("kt-01.math.multiplies", "contradicted", "2 * 3 = 5")],
        backend="pi@1.3.0",
    )
    record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "holds", "2 + 2 = 4"), ("kt-01.math.multiplies", "holds", "2 * 3 = 6")],
        backend="pi@1.6.0",
    )


def test_only_the_claims_that_changed_with_what_changed(pinb, two_releases: None) -> None:
    code, out, err = pinb("drift", "--claims", "kt-01-chapter", "--from", "1.3.0", "--to", "1.6.0")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "kt-01.math.multiplies  behaviour: CONTRADICTED on 1.3.0 → OBSERVED on 1.6.0: 2 * 3 = 6",
        "1 claim(s) changed between 1.3.0 and 1.6.0",
    ]


def test_json_names_each_change(pinb, two_releases: None) -> None:
    code, out, _ = pinb("drift", "--claims", "--from", "1.3.0", "--to", "1.6.0", "--json")
    data = json.loads(out)
    assert code == 1
    assert (data["from"], data["to"]) == ("1.3.0", "1.6.0")
    assert "kt-01-chapter" in data["chapters"]
    assert data["changed"] == [
        {
            "claim": "kt-01.math.multiplies",
            "changes": [{"what": "behaviour", "from": "CONTRADICTED", "to": "OBSERVED", "evidence": "2 * 3 = 6"}],
        }
    ]


def test_the_same_release_twice_changes_nothing(pinb, two_releases: None) -> None:
    code, out, _ = pinb("drift", "--claims", "kt-01-chapter", "--from", "1.6.0", "--to", "1.6.0")
    assert (code, out) == (0, "0 claim(s) changed between 1.6.0 and 1.6.0\n")


def test_status_matrix_from_to_says_the_same(pinb, two_releases: None) -> None:
    code, out, _ = pinb("status", "kt-01-chapter", "--matrix", "--from", "1.3.0", "--to", "1.6.0")
    assert code == 0
    assert out.splitlines()[0] == (
        "kt-01.math.multiplies  behaviour: CONTRADICTED on 1.3.0 → OBSERVED on 1.6.0: 2 * 3 = 6"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "0.9.0", "--to", "1.6.0"], "pinb: error: unknown release '0.9.0': the matrix has 1.0.3, "),
        (
            ["--from", "1.0.3", "--to", "1.6.0"],
            "pinb: error: no current run of kt-01-chapter on pi@1.0.3 (none is recorded there): record one with "
            "`pinb verify kt-01-chapter --backend pi --pi-version 1.0.3`; current runs are on pi@1.3.0, pi@1.6.0",
        ),
    ],
)
def test_a_release_unknown_or_unrecorded_is_one_line(pinb, two_releases: None, argv: list[str], message: str) -> None:
    code, out, err = pinb("drift", "--claims", "kt-01-chapter", *argv)
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_a_stale_release_says_so(pinb, record_run: RecordRun, two_releases: None) -> None:
    record_run(
        "kt-01-chapter",
        [("kt-01.math.adds", "holds", "2 + 2 = 4")],
        backend="pi@1.4.0",
        inputs_update={"notebook_sha256": "0" * 64},
    )
    code, _, err = pinb("drift", "--claims", "kt-01-chapter", "--from", "1.4.0", "--to", "1.6.0")
    assert code == 2
    assert "no current run of kt-01-chapter on pi@1.4.0 (its runs there are STALE: their inputs changed)" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["drift", "--claims", "--recorded"], "pinb: error: --recorded and --corpus are the corpus drift's"),
        (["drift", "--json", "--recorded"], "pinb: error: --json goes with --claims"),
        (["drift", "--claims", "kt-99-chapter"], "pinb: error: unknown chapter 'kt-99-chapter'"),
    ],
)
def test_options_of_the_other_drift_are_refused(pinb, argv: list[str], message: str) -> None:
    code, _, err = pinb(*argv)
    assert code == 2 and err.startswith(message) and err.count("\n") == 1


@pytest.mark.parametrize("command", [("drift",), ("claims", "facts"), ("verify",)])
def test_every_option_is_described_in_help(command: tuple[str, ...]) -> None:
    import argparse

    from pinb.cli import build_parser

    parser: argparse.ArgumentParser = build_parser([*command])
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, (command, action.option_strings)


def test_every_argument_of_every_command_is_described_in_help() -> None:
    import argparse

    from pinb.cli import build_parser

    undescribed: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif action.dest != "help" and not action.help:
                undescribed.append(" ".join([*path, *(action.option_strings or [action.dest])]))

    walk(build_parser(), ["pinb"])
    assert undescribed == []
