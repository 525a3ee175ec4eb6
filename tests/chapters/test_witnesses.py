"""Generated witnesses: seeded draws that reproduce, NOT EXERCISED counted, and a contradicted witness shrunk to a
minimal counterexample, on the stand-in with the sample property."""

from __future__ import annotations

from pinb.chapters.backends import run_standin_sync
from pinb.chapters.witnesses import explore, seed_for

from .sample_property import LAST_FIRST, LOAD_ORDER


def _shapes(explored) -> list[list[int]]:
    return [
        [len(extension["handlers"]) for extension in witness.scenarios["order"]["extensions"]]
        for witness in explored.witnesses
    ]


def test_the_same_seed_draws_the_same_witnesses_and_another_seed_others() -> None:
    seen: list[dict] = []

    def run(scenario):
        seen.append(scenario)
        return run_standin_sync(scenario)

    first = explore(LOAD_ORDER, {}, 12, seed_for("pi-90.handlers.load-order"), run)
    again = explore(LOAD_ORDER, {}, 12, seed_for("pi-90.handlers.load-order"), run_standin_sync)
    other = explore(LOAD_ORDER, {}, 12, seed_for("pi-90.handlers.other"), run_standin_sync)
    assert _shapes(first) == _shapes(again)
    assert _shapes(first) != _shapes(other)
    assert len(first.verdicts) == 12 and len(seen) == 12
    assert first.counterexample is None and first.note == ""


def test_a_true_property_holds_on_every_exercised_witness_and_one_extension_is_not_exercised() -> None:
    explored = explore(LOAD_ORDER, {}, 30, 7, run_standin_sync)
    statuses = {verdict.status for verdict in explored.verdicts}
    assert statuses <= {"OBSERVED", "NOT EXERCISED"} and "OBSERVED" in statuses
    assert explored.status == "OBSERVED"
    for verdict, shape in zip(explored.verdicts, _shapes(explored), strict=True):
        assert (verdict.status == "NOT EXERCISED") == (len(shape) == 1)
        if verdict.status == "OBSERVED":
            assert verdict.expected == verdict.observed


def test_a_false_property_is_contradicted_and_shrinks_to_a_minimal_counterexample() -> None:
    explored = explore(LAST_FIRST, {}, 30, 3, run_standin_sync)
    assert explored.status == "CONTRADICTED"
    assert explored.verdicts[-1].status == "CONTRADICTED"  # the draws stop at the first disagreement
    assert _shapes(explored)[-1] == [3, 2, 2]  # seed 3's first contradicted witness, shrunk below
    assert explored.counterexample is not None and explored.counterexample_verdict is not None
    minimal = [len(e["handlers"]) for e in explored.counterexample.scenarios["order"]["extensions"]]
    assert minimal == [1, 1]  # two extensions of one handler each: nothing smaller exercises the sentence
    assert explored.counterexample_verdict.status == "CONTRADICTED"
    assert explored.counterexample_verdict.evidence == "expected e2h1 → e1h1; observed e1h1 → e2h1"
    assert explored.shrink_runs > 0


def test_a_shrink_stops_at_its_budget_with_the_smallest_found() -> None:
    explored = explore(LAST_FIRST, {}, 30, 3, run_standin_sync, shrink_budget=0)
    assert explored.shrink_runs == 0
    assert explored.counterexample is not None
    assert explored.counterexample.traces == explored.witnesses[-1].traces


def test_a_witness_that_cannot_run_is_an_error_not_a_verdict_of_pi() -> None:
    def broken(scenario):
        raise RuntimeError("the bridge is down")

    explored = explore(LOAD_ORDER, {}, 3, 1, broken)
    assert [verdict.status for verdict in explored.verdicts] == ["ERROR"] * 3
    assert explored.verdicts[0].error == "RuntimeError: the bridge is down"
    assert explored.status == "ERROR"


def test_draw_gives_the_witnesses_explore_runs_without_running_them() -> None:
    from pinb.chapters.witnesses import draw

    drawn = draw(LOAD_ORDER, {}, 12, seed_for("pi-90.handlers.load-order"))
    explored = explore(LOAD_ORDER, {}, 12, seed_for("pi-90.handlers.load-order"), run_standin_sync)
    assert drawn == [witness.scenarios for witness in explored.witnesses]


def _kept_in(tmp_path, monkeypatch) -> None:
    from pinb.chapters import witnesses

    monkeypatch.setenv("PINB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(witnesses, "_drawn", {})


def test_kept_draws_run_the_witnesses_hypothesis_draws_and_are_not_drawn_again(tmp_path, monkeypatch) -> None:
    from pinb.chapters import witnesses

    _kept_in(tmp_path, monkeypatch)
    seed = seed_for("pi-90.handlers.load-order")
    key = witnesses.draw_key("code", "text", "pi-90.handlers.load-order", params={}, count=12, seed=seed)
    assert key is not None
    drawn = explore(LOAD_ORDER, {}, 12, seed, run_standin_sync)
    kept = explore(LOAD_ORDER, {}, 12, seed, run_standin_sync, draws_key=key)
    assert [w.scenarios for w in kept.witnesses] == [w.scenarios for w in drawn.witnesses]
    assert [(v.name, v.status, v.expected) for v in kept.verdicts] == [
        (v.name, v.status, v.expected) for v in drawn.verdicts
    ]
    assert (tmp_path / witnesses.DRAWS_DIR / f"{key}.json").is_file()

    def no_drawing(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr(witnesses, "_drawn", {})  # another process: the draws are read from the cache folder
    monkeypatch.setattr(witnesses, "draw", no_drawing)
    again = explore(LOAD_ORDER, {}, 12, seed, run_standin_sync, draws_key=key)
    assert [w.scenarios for w in again.witnesses] == [w.scenarios for w in drawn.witnesses]
    other = witnesses.draw_key("code", "text", "pi-90.handlers.load-order", params={"k": 1}, count=12, seed=seed)
    assert other != key and witnesses.draw_key("code", params={"run": object()}, count=1, seed=1) is None


def test_a_contradiction_among_kept_draws_is_shrunk_as_hypothesis_shrinks_it(tmp_path, monkeypatch) -> None:
    from pinb.chapters import witnesses

    _kept_in(tmp_path, monkeypatch)
    key = witnesses.draw_key("code", "text", "pi-90.handlers.last-first", params={}, count=30, seed=3)
    drawn = explore(LAST_FIRST, {}, 30, 3, run_standin_sync)
    kept = explore(LAST_FIRST, {}, 30, 3, run_standin_sync, draws_key=key)
    assert kept.status == drawn.status == "CONTRADICTED"
    assert _shapes(kept) == _shapes(drawn)
    assert kept.counterexample is not None and drawn.counterexample is not None
    assert kept.counterexample.scenarios == drawn.counterexample.scenarios


def test_draws_that_json_would_read_back_otherwise_are_not_kept(tmp_path, monkeypatch) -> None:
    from pinb.chapters import witnesses

    _kept_in(tmp_path, monkeypatch)
    monkeypatch.setattr(witnesses, "draw", lambda *args: [{"order": {"handlers": (1, 2)}}])
    assert witnesses.planned_draws(LOAD_ORDER, {}, 1, 1, "k") is None
    assert not (tmp_path / witnesses.DRAWS_DIR).exists()


def test_the_stand_in_runs_a_scenario_once_per_process_and_again_under_a_fault(monkeypatch) -> None:
    from pinb.chapters import backends
    from pinb.scenario import standin
    from pinb.testing import faults

    ran: list[str] = []
    run = standin.run_on_standin

    def counted(scenario, **kwargs):
        ran.append(scenario.id)
        return run(scenario, **kwargs)

    monkeypatch.setattr(standin, "run_on_standin", counted)
    monkeypatch.setattr(backends, "_standin_traces", {})
    (scenario,) = LOAD_ORDER.hand({}).values()
    first = run_standin_sync(scenario)
    first[0]["edited"] = True  # a caller's edit never reaches the kept trace
    again = run_standin_sync(scenario)
    assert len(ran) == 1 and "edited" not in again[0]
    assert [line.get("type") for line in again] == [line.get("type") for line in first]
    with faults.injected(sorted(faults.FAULTS)[0]):
        run_standin_sync(scenario)
    assert len(ran) == 2


def test_the_kept_draws_are_trimmed_to_the_ones_used_last(tmp_path, monkeypatch) -> None:
    import os

    from pinb.chapters import witnesses

    _kept_in(tmp_path, monkeypatch)
    monkeypatch.setattr(witnesses, "DRAWS_KEPT", 3)
    folder = tmp_path / witnesses.DRAWS_DIR
    for n in range(4):
        assert witnesses.planned_draws(LOAD_ORDER, {}, 2, n, f"key-{n}") is not None
        os.utime(folder / f"key-{n}.json", ns=(n * 10**9, n * 10**9))  # written one second apart
    monkeypatch.setattr(witnesses, "_drawn", {})  # another process reads key-1: it is used now
    assert witnesses.planned_draws(LOAD_ORDER, {}, 2, 1, "key-1") is not None
    assert witnesses.planned_draws(LOAD_ORDER, {}, 2, 9, "key-9") is not None
    assert sorted(path.stem for path in folder.iterdir()) == ["key-1", "key-3", "key-9"]


def test_the_kept_text_of_a_stand_in_run_is_its_lines_written_and_belongs_to_the_faults_it_ran_under(
    monkeypatch,
) -> None:
    from pinb.chapters import backends
    from pinb.scenario.trace import dumps_jsonl
    from pinb.testing import faults

    monkeypatch.setattr(backends, "_standin_traces", {})
    (scenario,) = LOAD_ORDER.hand({}).values()
    assert backends.kept_text(scenario, "standin") is None
    lines = run_standin_sync(scenario)
    assert backends.kept_text(scenario, "standin") == dumps_jsonl(lines)
    with faults.injected(sorted(faults.FAULTS)[0]):
        assert backends.kept_text(scenario, "standin") is None  # never the text of a run without the fault
    assert backends.kept_text({**scenario, "id": "other"}, "standin") is None
    assert backends.kept_text(scenario, "pi") is None


def test_a_witness_artefact_is_the_text_its_lines_were_read_from(tmp_path) -> None:
    import asyncio

    from pinb.chapters.experiments import ChapterRun
    from pinb.chapters.registry import claim
    from pinb.scenario.trace import dumps_jsonl, loads_jsonl

    run = ChapterRun("pi-01-chapter", "standin", knobs={}, artifacts_dir=tmp_path, witnesses=2)
    asyncio.run(run.observe(claim("pi-01.loop.turn-shape")))
    saved = sorted(tmp_path.glob("*.jsonl"))
    assert len(saved) >= 3  # the hand-written witness and two generated ones
    for path in saved:
        text = path.read_text(encoding="utf-8")
        assert dumps_jsonl(loads_jsonl(text)) == text
