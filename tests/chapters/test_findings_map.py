"""The map at the top of a notebook: the claims some backend's recorded run contradicts, or the backends disagree
on, each with its verdict per backend and observation; then one line counting the rest."""

from __future__ import annotations

from pinb.chapters import registry
from pinb.chapters.findings import backend_verdicts, findings_map, map_rows, rest_line


def _entry(backend: str, status: str, evidence: str = "seen") -> dict[str, str]:
    return {"backend": backend, "status": status, "evidence": evidence, "run_id": "r", "date": "2026-12-01"}


def test_releases_that_agree_share_a_line_oldest_first_and_a_change_splits_them() -> None:
    entries = [
        _entry("standin", "OBSERVED"),
        _entry("pi@1.6.0", "CONTRADICTED"),
        _entry("pi@1.10.0", "CONTRADICTED"),
        _entry("pi@1.5.0", "CONTRADICTED"),
        _entry("pi@1.4.0", "OBSERVED"),
        _entry("pi@1.3.0", "STALE (recorded OBSERVED)"),
        _entry("pi@1.0.3", "OBSERVED"),
    ]
    assert backend_verdicts(entries) == (
        "standin OBSERVED",
        "pi@1.0.3 OBSERVED",
        "pi@1.3.0 OBSERVED (stale)",
        "pi@1.4.0 OBSERVED",
        "pi@1.5.0–1.10.0 CONTRADICTED",
    )


def test_findings_first_with_every_backends_verdict_then_the_rest_counted() -> None:
    claims = registry.folder("pi-01-chapter").ledger.claims
    runnable = [spec for spec in claims if spec.kind == "runnable"]
    agreed, contradicted, disagreed = runnable[:3]
    recorded = {
        agreed.id: [_entry("standin", "OBSERVED"), _entry("pi@1.6.0", "OBSERVED")],
        contradicted.id: [
            _entry("standin", "OBSERVED", "the port ran"),
            _entry("pi@1.6.0", "STALE (recorded CONTRADICTED)", "fails  at\nimport"),
        ],
        disagreed.id: [_entry("standin", "OBSERVED"), _entry("pi@1.6.0", "ERROR", "raised")],
    }
    rows = map_rows(claims, recorded)
    assert [(r.claim_id, r.verdicts, r.observation) for r in rows] == [
        (contradicted.id, ("standin OBSERVED", "pi@1.6.0 CONTRADICTED (stale)"), "pi@1.6.0: fails at import"),
        (disagreed.id, ("standin OBSERVED", "pi@1.6.0 ERROR"), "pi@1.6.0: raised"),
    ]
    reported = sum(1 for spec in claims if spec.kind == "reported")
    line = rest_line(claims, recorded, 2)
    head = f"The other {len(claims) - 2} of the {len(claims)} claims (2 listed above): "
    assert line.startswith(head) and line.endswith(".")
    parts = dict(reversed(part.split(" ", 1)) for part in line.removeprefix(head).removesuffix(".").split(", "))
    assert parts == {
        "observed on every backend that decided them": "1",
        "reported (the book reports them; nothing here can run them)": str(reported),
        "not decided by any recorded run": str(len(claims) - reported - 3),
    }
    assert sum(int(n) for n in parts.values()) == len(claims) - 2


def test_the_map_says_when_nothing_is_recorded() -> None:
    claims = registry.folder("pi-16-chapter").ledger.claims
    shown = findings_map(claims, {})
    assert shown.text == "No recorded runs are available to this notebook: run it to see what it finds."
