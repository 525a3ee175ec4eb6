"""`pinb status --matrix`: one row per claim across the releases, from the runs and the committed scope facts."""

from __future__ import annotations

from pinb.cli import main
from pinb.kit.matrix import matrix_rows, releases
from pinb.kit.status import BackendVerdict, ClaimStatus
from pinb.scopes.facts import load_all
from pinb.scopes.matrix import describe, spans


def _status(claim: str, *verdicts: tuple[str, str, str]) -> ClaimStatus:
    return ClaimStatus(
        claim_id=claim,
        chapter="pi-16-chapter",
        kind="runnable",
        status="OBSERVED",
        run_id="r",
        backend="pi@1.6.0",
        reason="",
        backends=tuple(
            BackendVerdict(backend=b, status=s, run_id="r", evidence=e, current=b == "pi@1.6.0")  # type: ignore[arg-type]
            for b, s, e in verdicts
        ),
    )


def test_the_matrix_has_every_release_from_1_0_3() -> None:
    assert releases() == ["1.0.3", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0"]


def test_agreeing_releases_are_one_span_and_reasons_keep_unrun_apart() -> None:
    cells = [("1.0.3", "UNRUN", "no app layer"), ("1.3.0", "UNRUN", "no run"), ("1.4.0", "UNRUN", "no run")]
    cells += [("1.5.0", "OBSERVED", "a"), ("1.6.0", "OBSERVED", "b")]
    assert describe(spans(cells), evidence_for=("UNRUN",)) == (
        "UNRUN on 1.0.3: no app layer; UNRUN on 1.3.0–1.4.0: no run; OBSERVED on 1.5.0–1.6.0"
    )


def test_a_row_joins_behaviour_and_scopes_and_drift_names_the_change() -> None:
    status = _status(
        "pi-16.events.before-agent-start",
        ("pi@1.3.0", "CONTRADICTED", "no prompt"),
        ("pi@1.6.0", "OBSERVED", "injected"),
    )
    (row,) = matrix_rows([status], load_all(), {"pi-16.events.before-agent-start": ("app", "runnable")})
    line = row.line()
    assert line.startswith("pi-16.events.before-agent-start  behaviour: UNRUN on 1.0.3: the pi@1.0.3 reference set")
    assert "CONTRADICTED on 1.3.0: no prompt" in line and "OBSERVED on 1.6.0" in line
    assert "declarations:BeforeAgentStartEvent: holds on 1.0.3; differs on 1.3.0–1.6.0" in line
    drift = row.drift("1.0.3", "1.3.0")
    assert len(drift) == 2 and drift[1].startswith(
        "declarations:BeforeAgentStartEvent: holds on 1.0.3 → differs on 1.3.0"
    )
    assert row.drift("1.5.0", "1.5.2") == []


def test_the_command_checks_its_options(capsys) -> None:
    assert main(["status", "pi-16-chapter", "--matrix"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("releases: 1.0.3, 1.3.0, 1.4.0, 1.5.0, 1.5.2, 1.6.0\n")
    assert "pi-16.events.tool-result  behaviour:" in out
    assert main(["status", "--matrix", "--from", "1.0.3"]) == 2
    assert main(["status", "--matrix", "--from", "0.1.0", "--to", "1.6.0"]) == 2
    assert main(["status", "--matrix", "--from", "1.0.3", "--to", "1.6.0"]) == 0
    assert "claim(s) changed between 1.0.3 and 1.6.0" in capsys.readouterr().out
