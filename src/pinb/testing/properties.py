"""The claims-as-properties commands: check every property on many witnesses, write a claim's witness scenarios,
check a claim on the reader's own scenarios, list the faults.

Everything runs in memory through the one path the notebook uses (`pinb.chapters.witnesses.assess`); nothing is
recorded (`pinb verify` records). Bad input is a `UsageError` (one line, exit 2).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pinb.backends import PI_MODELLED_VERSION
from pinb.claims import Claim
from pinb.errors import PinbError, UsageError

#: Generated witnesses per claim when `--witnesses` is not given.
DEFAULT_WITNESSES: dict[str, int] = {"standin": 50, "pi": 5}
#: Below this share of exercised generated witnesses a claim's family is too loose (issue: NOT EXERCISED < 20 %).
MAX_NOT_EXERCISED = 0.2
#: `pinb claims check` exit codes by the claim's status.
EXIT: dict[str, int] = {"OBSERVED": 0, "CONTRADICTED": 1, "NOT EXERCISED": 3, "ERROR": 4}


def _claim(claim_id: str) -> Claim:
    from pinb.chapters.registry import claim

    try:
        found = claim(claim_id)
    except KeyError:
        raise UsageError(f"unknown claim {claim_id!r}: `pinb status` lists the claims") from None
    if found.kind != "runnable":
        raise UsageError(f"claim {claim_id} is reported, not runnable: {found.reason}")
    return found


def _property(claim: Claim) -> Any:
    """The claim's property (`Claim.property`); a one-line error for a claim without one."""
    found = claim.property
    if found is None:
        raise UsageError(f"claim {claim.id} is not checked as a property yet (its experiment has no witnesses)")
    return found


@dataclass(frozen=True)
class PropertyCheck:
    """One claim's property on its witnesses, as `check-properties` and `check` report it."""

    claim_id: str
    chapter: str
    status: str
    evidence: str
    backend: str
    result: Any = None
    """The `PropertyResult` (None when UNRUN)."""
    baseline: str = ""
    """Real Pi's recorded verdict for the claim, where one is recorded."""

    @property
    def not_exercised(self) -> float:
        """The share of generated witnesses that did not exercise the sentence."""
        generated = self.result.explored.verdicts if self.result is not None else ()
        if not generated:
            return 0.0
        return sum(v.status == "NOT EXERCISED" for v in generated) / len(generated)

    def problem(self) -> str | None:
        """Why this claim fails the property check (None: OBSERVED, UNRUN, or a finding real Pi recorded too)."""
        if self.status in ("OBSERVED", "UNRUN") and self.not_exercised < MAX_NOT_EXERCISED:
            return None
        if self.status == "CONTRADICTED" and self.baseline == "CONTRADICTED":
            return None  # a finding: the sentence is false on real Pi too
        if self.status == "OBSERVED":
            return f"{self.claim_id}: {self.not_exercised:.0%} of its generated witnesses do not exercise the sentence"
        return f"{self.claim_id}: {self.status}: {self.evidence}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "claim_id": self.claim_id,
            "chapter": self.chapter,
            "backend": self.backend,
            "status": self.status,
            "evidence": self.evidence,
        }
        if self.result is not None:
            data |= self.result.structure()
            data["witnesses"] = [w.model_dump(mode="json") for w in data["witnesses"]]
            data["not_exercised"] = round(self.not_exercised, 3)
        if self.baseline:
            data["recorded_on_pi"] = self.baseline
        return data


async def check_property(
    claim_id: str,
    backend: str = "standin",
    pi_version: str | None = PI_MODELLED_VERSION,
    witnesses: int = 0,
    scenarios: Mapping[str, dict[str, Any]] | None = None,
    name: str = "hand",
) -> PropertyCheck:
    """The claim's property on its hand-written witness (or `scenarios`, a witness called `name`) and `witnesses`
    generated ones, through the notebook's own path (`ChapterRun.observe`), recording nothing."""
    from pinb.chapters.experiment_view import ExperimentView
    from pinb.chapters.experiments import ChapterRun

    claim = _claim(claim_id)
    _property(claim)
    run = ChapterRun(claim.chapter, backend, pi_version, witnesses=witnesses, notebook=False)
    view = None
    if scenarios is not None:
        view = ExperimentView(claim.id, "scenarios", dict(scenarios), dict(scenarios), witness=name)
    observation = await run.observe(claim, view)
    if observation.unrun is not None:
        return PropertyCheck(claim_id, claim.chapter, "UNRUN", observation.unrun, run.label)
    if observation.error is not None:
        if isinstance(observation.error, PinbError):  # e.g. real Pi is not installed: `check_properties` says so
            raise observation.error
        error = f"the check raised {type(observation.error).__name__}: {observation.error}"
        return PropertyCheck(claim_id, claim.chapter, "ERROR", error, run.label)
    result = observation.result
    assert result is not None
    return PropertyCheck(claim_id, claim.chapter, result.status, result.evidence, run.label, result)


def witness_count(text: str) -> int:
    """`--witnesses N`: a whole number from 1 to `MAX_WITNESSES`."""
    from pinb.chapters.witnesses import MAX_WITNESSES

    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--witnesses takes a whole number from 1 to {MAX_WITNESSES}, not {text!r}") from None
    if not 1 <= value <= MAX_WITNESSES:
        raise UsageError(f"--witnesses takes a whole number from 1 to {MAX_WITNESSES}, not {value}")
    return value


def property_claims(chapter_ids: Sequence[str]) -> list[str]:
    """The runnable claims of the chapters (default: every chapter) whose experiment is a property."""
    from pinb.chapters.registry import claims, folders

    known = folders()
    for chapter_id in chapter_ids:
        if chapter_id not in known:
            raise UsageError(f"unknown chapter {chapter_id!r}; known: {', '.join(known)}")
    return [
        spec.id
        for chapter_id in (chapter_ids or list(known))
        for spec in claims(chapter_id)
        if spec.kind == "runnable" and spec.property is not None
    ]


async def check_properties(
    chapter_ids: Sequence[str], backend: str, pi_version: str | None, witnesses: int, progress: bool = True
) -> list[PropertyCheck]:
    from pinb.chapters.registry import claim
    from pinb.testing.check_judges import pi_baselines

    claims = property_claims(chapter_ids)
    baselines = pi_baselines(sorted({claim(claim_id).chapter for claim_id in claims}))
    checks = []
    for n, claim_id in enumerate(claims, 1):
        try:
            check = await check_property(claim_id, backend, pi_version, witnesses)
        except PinbError as exc:  # e.g. real Pi is not installed: that claim is an ERROR, the others still run
            check = PropertyCheck(claim_id, claim(claim_id).chapter, "ERROR", str(exc), backend)
        recorded = baselines.get(claim_id)
        if recorded is not None:
            check = replace(check, baseline=recorded[0])
        checks.append(check)
        if progress:
            print(f"[{n}/{len(claims)}] {check.status} {claim_id}", file=sys.stderr, flush=True)
    return checks


def render_checks(checks: Sequence[PropertyCheck]) -> str:
    lines = []
    for check in checks:
        counts = ""
        if check.result is not None and len(check.result.verdicts) > 1:
            seen: dict[str, int] = {}
            for verdict in check.result.verdicts:
                seen[verdict.status] = seen.get(verdict.status, 0) + 1
            counts = " [" + ", ".join(f"{k} {v}" for k, v in seen.items()) + "]"
        finding = " (a finding: real Pi recorded it too)" if check.baseline == check.status == "CONTRADICTED" else ""
        lines.append(f"{check.status}{finding} {check.claim_id}{counts}: {check.evidence}")
    problems = [p for p in (check.problem() for check in checks) if p]
    statuses: dict[str, int] = {}
    for check in checks:
        statuses[check.status] = statuses.get(check.status, 0) + 1
    lines.append(f"{len(checks)} property claims: " + ", ".join(f"{v} {k}" for k, v in statuses.items()))
    lines += [f"problem: {problem}" for problem in problems]
    return "\n".join(lines)


def load_witness(claim_id: str, files: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The reader's scenario files as the claim's witness: each file's stem names the scenario it stands for."""
    from pinb.scenario.model import parse_scenario

    hand = _property(_claim(claim_id)).hand({})
    found: dict[str, dict[str, Any]] = {}
    for file in files:
        path = Path(file)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"{file}: cannot read: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise UsageError(f"{file}: not JSON: {exc}") from None
        parse_scenario(data, source=file)  # a ScenarioError is one line naming the file
        name = path.stem
        if name not in hand:
            raise UsageError(
                f"{file}: claim {claim_id}'s witness has the scenario(s) {', '.join(hand)}; name the file after one"
            )
        if data.get("layer") != hand[name].get("layer"):
            raise UsageError(
                f"{file}: a witness for the {data.get('layer')} layer; claim {claim_id}'s {name!r} scenario runs on "
                f"the {hand[name].get('layer')} layer"
            )
        if name in found:
            raise UsageError(f"{file}: scenario {name!r} is given twice")
        found[name] = data
    missing = [name for name in hand if name not in found]
    if missing:
        raise UsageError(f"claim {claim_id}'s witness also needs the scenario(s) {', '.join(missing)}")
    return found


def write_experiment(claim_id: str, out: Path, witnesses: int = 0) -> list[Path]:
    """Write the claim's hand-written witness (`OUT/<scenario>.json`) and `witnesses` generated ones
    (`OUT/gen-N/<scenario>.json`), the files `pinb claims check --scenario` takes."""
    from pinb.chapters.witnesses import draw, seed_for

    prop = _property(_claim(claim_id))
    sets = [("", prop.hand({}))]
    sets += [(f"gen-{n}", scenarios) for n, scenarios in enumerate(draw(prop, {}, witnesses, seed_for(claim_id)), 1)]
    written = []
    for folder, scenarios in sets:
        target = out / folder if folder else out
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name, scenario in scenarios.items():
                path = target / f"{name}.json"
                path.write_text(json.dumps(scenario, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
                written.append(path)
        except OSError as exc:
            raise UsageError(f"cannot write into {target}: {exc.strerror or exc}") from None
    return written


def fault_rows() -> list[dict[str, str]]:
    """Every named fault (pinb's and the chapters' own) with its one-line deviation and the claims naming it."""
    from pinb.chapters.registry import folders
    from pinb.testing import faults

    faults.load_chapter_faults()
    named: dict[str, list[str]] = {}
    for found in folders().values():
        for spec in found.ledger.claims:
            for name in spec.faults:
                named.setdefault(name, []).append(spec.id)
    return [
        {
            "fault": name,
            "declared_by": faults.FAULT_CHAPTER.get(name, "pinb.testing.faults"),
            "deviation": faults.FAULTS[name].deviation,
            "claims": ", ".join(named.get(name, [])),
        }
        for name in sorted(faults.FAULTS)
    ]


__all__ = [
    "DEFAULT_WITNESSES",
    "EXIT",
    "PropertyCheck",
    "check_properties",
    "check_property",
    "fault_rows",
    "load_witness",
    "property_claims",
    "render_checks",
    "witness_count",
    "write_experiment",
]
