"""Chapter 16's claims as properties, on the stand-in: the hand witness and ≥ 50 generated witnesses per claim are
OBSERVED, fewer than 20 % of draws miss the premise, a reader's edit that keeps the premise keeps the verdict and one
that removes it says NOT EXERCISED, and each of the chapter's faults turns its claim CONTRADICTED."""

from __future__ import annotations

import copy
import functools
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinb.chapters.backends import run_standin_sync
from pinb.chapters.ch16 import faults as ch16_faults
from pinb.chapters.ch16 import jsguard
from pinb.chapters.ch16.guard import EVASION_CORPUS, book_patterns
from pinb.chapters.ch16.properties import PROPERTIES
from pinb.chapters.ch16.props_guard import commands
from pinb.chapters.properties import Property, Witness, WitnessVerdict, judge_witness
from pinb.chapters.registry import claims
from pinb.testing import faults

#: Generated witnesses per property in the suite (seeded); `pinb claims check-properties` checks 50 by default,
#: and PINB_SUITE_WITNESSES=50 runs the suite at that depth.
GENERATED = int(os.environ.get("PINB_SUITE_WITNESSES", "12"))
CLAIMS = sorted(PROPERTIES)
Scenarios = dict[str, dict[str, Any]]


def run(prop: Property, scenarios: Scenarios, name: str = "hand") -> WitnessVerdict:
    witness = Witness(name, scenarios, {key: run_standin_sync(s) for key, s in scenarios.items()})
    return judge_witness(prop, witness)


def draws(prop: Property, n: int = GENERATED) -> list[Scenarios]:
    """The family's first `n` witnesses, reproducibly (hypothesis derandomized, no database)."""
    assert prop.family is not None
    found: list[Scenarios] = []
    seen: set[str] = set()

    @settings(
        max_examples=n * 2,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(prop.family({}))
    def collect(scenarios: Scenarios) -> None:
        key = json.dumps(scenarios, sort_keys=True)
        if len(found) < n and key not in seen:
            seen.add(key)
            found.append(copy.deepcopy(scenarios))

    collect()
    return found


@functools.cache
def generated(claim: str) -> tuple[WitnessVerdict, ...]:
    prop = PROPERTIES[claim]
    return tuple(run(prop, s, f"gen-{i}") for i, s in enumerate(draws(prop)))


def test_every_runnable_claim_has_a_property() -> None:
    experiments = {spec.experiment_name for spec in claims("pi-16-chapter") if spec.kind == "runnable"}
    assert experiments == set(PROPERTIES)
    assert all(PROPERTIES[name].family is not None for name in PROPERTIES)


@pytest.mark.parametrize("claim", CLAIMS)
def test_the_hand_witness_is_observed(claim: str) -> None:
    prop = PROPERTIES[claim]
    verdict = run(prop, prop.hand({}))
    assert verdict.status == "OBSERVED", verdict


@pytest.mark.parametrize("claim", CLAIMS)
def test_generated_witnesses_are_observed_and_mostly_exercised(claim: str) -> None:
    verdicts = generated(claim)
    assert len(verdicts) >= GENERATED
    wrong = [v for v in verdicts if v.status not in ("OBSERVED", "NOT EXERCISED")]
    assert not wrong, wrong[0]
    missed = sum(v.status == "NOT EXERCISED" for v in verdicts)
    assert missed / len(verdicts) < 0.2, f"{missed} of {len(verdicts)} draws miss the premise"


def test_generated_witnesses_validate_against_the_scenario_model() -> None:
    from pinb.scenario.model import parse_scenario

    for claim in ("dispatch.registration-order", "guard.confirm-with-ui", "settle.turn-end-actionable"):
        for scenarios in draws(PROPERTIES[claim], 10):
            for name, scenario in scenarios.items():
                parse_scenario(scenario, source=name)


# --- reader's edits -----------------------------------------------------------------------------------------------


def _reverse_extensions(scenarios: Scenarios) -> Scenarios:
    out = copy.deepcopy(scenarios)
    for s in out.values():
        s["extensions"] = list(reversed(s.get("extensions", [])))
    return out


def _keep_first_extension(scenarios: Scenarios) -> Scenarios:
    out = copy.deepcopy(scenarios)
    for s in out.values():
        s["extensions"] = s["extensions"][:1]
    return out


def _actions_to_record(*kinds: str) -> Callable[[Scenarios], Scenarios]:
    def edit(scenarios: Scenarios) -> Scenarios:
        out = copy.deepcopy(scenarios)
        for s in out.values():
            for ext in s.get("extensions", []):
                for h in ext["handlers"]:
                    if h["action"]["kind"] in kinds:
                        h["action"] = {"kind": "record"}
        return out

    return edit


def _commands(new: list[str]) -> Callable[[Scenarios], Scenarios]:
    def edit(scenarios: Scenarios) -> Scenarios:
        out = copy.deepcopy(scenarios)
        blocks = out["patterns"]["responses"][0]["content"]
        out["patterns"]["responses"][0]["content"] = [
            {**blocks[0], "arguments": {"command": command}} for command in new
        ]
        return out

    return edit


def _reverse_calls(scenarios: Scenarios) -> Scenarios:
    out = copy.deepcopy(scenarios)
    for s in out.values():
        s["responses"][0]["content"].reverse()
    return out


def _ui(has_ui: bool | None = None, flip: bool = False) -> Callable[[Scenarios], Scenarios]:
    def edit(scenarios: Scenarios) -> Scenarios:
        out = copy.deepcopy(scenarios)
        for s in out.values():
            ui = s.setdefault("ui", {"has_ui": False, "confirm": False})
            if has_ui is not None:
                ui["has_ui"] = has_ui
            if flip:
                ui["confirm"] = not ui["confirm"]
        return out

    return edit


def _entry_text(text: str) -> Callable[[Scenarios], Scenarios]:
    def edit(scenarios: Scenarios) -> Scenarios:
        out = copy.deepcopy(scenarios)
        for s in out.values():
            for ext in s["extensions"]:
                for h in ext["handlers"]:
                    if h["action"].get("entry"):
                        h["action"]["entry"]["content"] = text
        return out

    return edit


def _trust(answers: list[str]) -> Callable[[Scenarios], Scenarios]:
    def edit(scenarios: Scenarios) -> Scenarios:
        out = copy.deepcopy(scenarios)
        for ext, answer in zip(out["trust"]["extensions"], answers, strict=True):
            ext["handlers"][0]["action"]["trusted"] = answer
        return out

    return edit


EDITS: list[tuple[str, str, Callable[[Scenarios], Scenarios], str]] = [
    ("dispatch.registration-order", "reversed load order", _reverse_extensions, "OBSERVED"),
    ("dispatch.registration-order", "one extension left", _keep_first_extension, "NOT EXERCISED"),
    ("dispatch.handlers-awaited", "reversed load order", _reverse_extensions, "OBSERVED"),
    ("dispatch.handlers-awaited", "no handler sleeps", _actions_to_record("sleep"), "NOT EXERCISED"),
    ("dispatch.declared-result-type", "reversed load order", _reverse_extensions, "OBSERVED"),
    ("dispatch.declared-result-type", "nothing returned", _actions_to_record("return_value"), "NOT EXERCISED"),
    ("dispatch.unsubscribe-not-in-progress", "target loaded first", _reverse_extensions, "NOT EXERCISED"),
    ("guard.patterns", "calls in reverse order", _reverse_calls, "OBSERVED"),
    ("guard.patterns", "the reader's own force push", _commands(["git  push  -f", "ls"]), "OBSERVED"),
    (
        "guard.patterns",
        "only harmless commands",
        _commands(["ls", "git status", "git push origin +main"]),
        "NOT EXERCISED",
    ),
    ("guard.confirm-with-ui", "the UI answers the other way", _ui(flip=True), "OBSERVED"),
    ("guard.confirm-with-ui", "no UI anywhere", _ui(has_ui=False), "NOT EXERCISED"),
    ("settle.before-settle-actionable", "another entry text", _entry_text("Zweiter Blick 🚀"), "OBSERVED"),
    ("settle.before-settle-actionable", "no continuation", _actions_to_record("continue_once"), "NOT EXERCISED"),
    ("events.turn-end", "no continuation", _actions_to_record("continue_once", "continue_times"), "NOT EXERCISED"),
    ("events.project-trust", "answers reordered", _trust(["no", "undecided", "yes"]), "OBSERVED"),
    ("events.project-trust", "nobody decides", _trust(["undecided"] * 3), "NOT EXERCISED"),
]


@pytest.mark.parametrize(("claim", "edit", "change", "status"), EDITS, ids=[f"{c}:{e}" for c, e, _f, _s in EDITS])
def test_a_readers_edit(claim: str, edit: str, change: Callable[[Scenarios], Scenarios], status: str) -> None:
    prop = PROPERTIES[claim]
    verdict = run(prop, change(prop.hand({})), "edited")
    assert verdict.status == status, verdict


# --- the chapter's faults -------------------------------------------------------------------------------------------

#: Each chapter fault and the claims it must contradict.
FLIPS: dict[str, tuple[str, ...]] = {
    "handlers-sorted-by-extension-name": ("dispatch.registration-order",),
    "notify-handlers-not-awaited": ("dispatch.handlers-awaited",),
    "execution-start-block-honoured": ("dispatch.declared-result-type",),
    "js-slice-by-code-point": ("guard.confirm-with-ui",),
    "js-regex-python-semantics": ("guard.patterns",),
    "turn-end-entries-dropped-after-tools": ("events.turn-end", "settle.turn-end-actionable"),
    "auto-retry-once": ("run.agent-end-not-the-end",),
}


def test_every_chapter_fault_is_checked() -> None:
    assert set(FLIPS) == set(ch16_faults.FAULTS)


def first_contradiction(prop: Property, n: int = GENERATED) -> WitnessVerdict | None:
    hand = run(prop, prop.hand({}))
    if hand.status == "CONTRADICTED":
        return hand
    return next((v for v in (run(prop, s) for s in draws(prop, n)) if v.status == "CONTRADICTED"), None)


@pytest.mark.parametrize(
    ("fault", "claim"), [(f, c) for f, claims in FLIPS.items() for c in claims], ids=lambda x: str(x)
)
def test_a_chapter_fault_flips_its_claim(fault: str, claim: str) -> None:
    with faults.injected(fault):
        assert first_contradiction(PROPERTIES[claim]) is not None


# --- the guard's JavaScript, independently ---------------------------------------------------------------------------


def test_jsguard_agrees_with_the_verdicts_recorded_from_node() -> None:
    patterns = book_patterns()
    for case in (c for c in EVASION_CORPUS if c.tool_name == "bash"):
        assert (jsguard.guard_hit(patterns, case.input) is not None) == case.js_blocked, case.command


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_jsguard_json_of_a_string_without_surrogates_is_pythons_unescaped_json(text: str) -> None:
    # JSON.stringify and json.dumps(ensure_ascii=False) escape the same characters alike; surrogates aside
    assert jsguard.json_stringify({"command": text}) == json.dumps(
        {"command": text}, ensure_ascii=False, separators=(",", ":")
    )


def test_jsguard_json_and_slice_follow_javascript() -> None:
    assert jsguard.json_stringify({"command": 'a\tb\u0001"\\é'}) == '{"command":"a\\tb\\u0001\\"\\\\é"}'
    assert jsguard.json_stringify("\ud800x") == '"\\ud800x"'
    assert jsguard.js_slice("🚀🚀", 0, 3) == "🚀\ud83d"
    assert jsguard.js_slice("a🚀", 0, 3) == "a🚀"
    with pytest.raises(jsguard.UnsupportedSyntax):
        jsguard.translate("(?<=x)y")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to compare with")
def test_jsguard_agrees_with_node_on_generated_commands() -> None:
    patterns = book_patterns()
    found: list[str] = []

    @settings(max_examples=300, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(commands())
    def collect(command: str) -> None:
        found.append(command)

    collect()
    literals = ",".join(f"/{source}/{flags}" for source, flags in patterns)
    program = (
        f"const B=[{literals}];const xs=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        "console.log(JSON.stringify(xs.map(x=>{const raw=JSON.stringify({command:x});"
        "const h=B.find(r=>r.test(raw));return [raw,h?h.source:null,raw.slice(0,20)]})))"
    )
    out = subprocess.run(["node", "-e", program], input=json.dumps(found), capture_output=True, text=True, check=True)
    for command, (raw, hit, head) in zip(found, json.loads(out.stdout), strict=True):
        mine = jsguard.json_stringify({"command": command})
        assert (mine, jsguard.guard_hit(patterns, {"command": command}), jsguard.js_slice(mine, 0, 20)) == (
            raw,
            hit,
            head,
        ), command
