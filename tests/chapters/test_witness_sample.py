"""The seeded sample `pinb claims check-properties` and `pinb verify` draw: reproducible across processes (whatever
PYTHONHASHSEED is), and drawn from families that exercise their sentence at least 80 % of the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pinb.chapters.backends import run_standin_sync
from pinb.chapters.registry import claim as claim_by_id
from pinb.chapters.witnesses import explore, seed_for
from pinb.testing.properties import MAX_NOT_EXERCISED

#: Print every property claim's first `count` seeded witnesses, as `check-properties` draws them (none is run).
DRAWS = """\
import json, sys
from pinb.chapters.witnesses import draw, seed_for
from pinb.chapters.registry import claim as claim_by_id
from pinb.testing.properties import property_claims

count = int(sys.argv[1])
for claim in property_claims([]):  # in drawn order, dicts too: a witness's scenarios run in their order
    print(claim, json.dumps(draw(claim_by_id(claim).property, {}, count, seed_for(claim))))
"""


def _draws(hash_seed: str, count: int) -> dict[str, str]:
    env = os.environ | {"PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", DRAWS, str(count)], env=env, capture_output=True, text=True, check=True, timeout=300
    )
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def test_the_same_seed_draws_the_same_witnesses_whatever_the_hash_seed() -> None:
    first, second = _draws("1", 6), _draws("2", 6)  # 1 and 2 iterate {"agent", "app"} in opposite orders
    assert first.keys() == second.keys() and len(first) > 50
    differ = [claim for claim in first if first[claim] != second[claim]]
    assert differ == [], f"witnesses that follow PYTHONHASHSEED: {differ}"


#: The families once over the line (issue 17: 24 % and 22 % of 50 seeded witnesses missed the premise).
TIGHTENED = ("pi-01.loop.continuation-test", "pi-16.guard.not-unconditional")


@pytest.mark.parametrize("claim", TIGHTENED)
def test_the_seeded_sample_mostly_exercises_the_sentence(claim: str) -> None:
    explored = explore(claim_by_id(claim).property, {}, 30, seed_for(claim), run_standin_sync)
    assert len(explored.verdicts) >= 20 and explored.status == "OBSERVED"
    missed = sum(v.status == "NOT EXERCISED" for v in explored.verdicts)
    assert missed / len(explored.verdicts) < MAX_NOT_EXERCISED, f"{missed} of {len(explored.verdicts)}"


def test_the_continuation_family_still_draws_runs_of_plain_replies() -> None:
    """Tightened, not narrowed: a run that calls no tool (the "no" branch alone) is still drawn, beside a queued
    follow-up or as the second prompt's run."""
    from pinb.chapters.ch01.turns import script
    from pinb.chapters.witnesses import draw

    claim = "pi-01.loop.continuation-test"
    drawn = [s["loop"] for s in draw(claim_by_id(claim).property, {}, 50, seed_for(claim))]
    plain_runs = [run for s in drawn for run in script(s) if not any(turn.calls for turn in run)]
    assert plain_runs, "no drawn witness has a run without tool calls"
    assert any(s.get("queue") for s in drawn) and any(not s.get("queue") for s in drawn)


@pytest.mark.parametrize("claim", [*TIGHTENED, "pi-01.run.agent-end-not-the-end", "pi-16.guard.reads-not-mutates"])
def test_explore_judges_as_many_distinct_witnesses_as_asked_and_draw_lists_them(claim: str) -> None:
    from pinb.chapters.witnesses import draw

    prop = claim_by_id(claim).property
    explored = explore(prop, {}, 12, seed_for(claim), run_standin_sync)
    judged = [dict(w.scenarios) for w in explored.witnesses]
    assert len(judged) == 12 and not explored.note
    assert len({json.dumps(s, sort_keys=True) for s in judged}) == 12
    assert draw(prop, {}, 12, seed_for(claim)) == judged


def test_a_family_with_fewer_points_than_asked_says_so() -> None:
    from hypothesis import strategies as st

    from pinb.chapters.properties import Premise, Property

    prop = Property(
        hand=lambda p: {},
        premise=lambda w: Premise(True, "always"),
        expected=lambda w: 1,
        observed=lambda w: 1,
        family=lambda p: st.sampled_from([{"a": {"n": 1}}, {"a": {"n": 2}}, {"a": {"n": 3}}]),
    )
    explored = explore(prop, {}, 10, 7, lambda scenario: [])
    assert len(explored.verdicts) == 3
    assert explored.note == "3 distinct witnesses drawn of 10 asked (the family has no more)"
