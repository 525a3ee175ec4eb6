"""The run store: atomic, write-once run folders; bad entries reported by name and skipped; artefacts re-hashed."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pinb.errors import KitError
from pinb.kit.project import Project
from pinb.kit.record import RECORD_FILE, RUN_ID_RE
from pinb.kit.store import RunStore, new_run_id, validate_run_id, writer_token

from .conftest import RecordRun


def test_a_committed_run_is_complete_and_read_only(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    assert run.path == project.runs_dir / "kt-01-chapter" / run.record.run_id
    assert sorted(p.name for p in run.path.iterdir()) == ["executed.ipynb", RECORD_FILE]
    assert not [p for p in run.path.parent.iterdir() if p.name.startswith(".")]
    for item in run.path.iterdir():
        assert not item.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    listing = project.store.list()
    assert [r.record for r in listing.runs] == [run.record]
    assert listing.problems == []


def test_run_ids_sort_by_time_and_match_their_pattern() -> None:
    times = [datetime(2026, 12, 6, 19, 35, second, tzinfo=UTC) for second in (0, 1, 59)]
    ids = [new_run_id(when) for when in times]
    assert ids == sorted(ids)
    assert all(RUN_ID_RE.match(run_id) for run_id in [*ids, new_run_id()])


def test_a_reserved_run_id_is_never_handed_out_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ids are random within a second, so two may be equal: the store draws again past one already taken.
    drawn = iter(["20261206T193518Z-aaaaaa"] * 3 + ["20261206T193518Z-bbbbbb", "20261206T193518Z-cccccc"])
    monkeypatch.setattr("pinb.kit.store.new_run_id", lambda: next(drawn))
    store = RunStore(tmp_path / "runs")
    in_flight = store.begin("kt-01-chapter")
    second = store.begin("kt-01-chapter")
    assert [in_flight.run_id, second.run_id] == ["20261206T193518Z-aaaaaa", "20261206T193518Z-bbbbbb"]
    (store.chapter_dir("kt-01-chapter") / "20261206T193518Z-cccccc").mkdir()
    drawn = iter(["20261206T193518Z-cccccc", "20261206T193518Z-dddddd"])
    assert store.begin("kt-01-chapter").run_id == "20261206T193518Z-dddddd"


@pytest.mark.parametrize("bad", ["../x", "20261130T195500Z-3f9a1c/..", "", "20261130T195500Z-3F9A1C", "run"])
def test_path_like_run_ids_are_refused(bad: str) -> None:
    with pytest.raises(KitError, match="invalid run id"):
        validate_run_id(bad)


@pytest.mark.parametrize("bad", ["../escape", "a/b", ".hidden", "Upper"])
def test_path_like_chapter_ids_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(KitError):
        RunStore(tmp_path / "runs").begin(bad)
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []


def test_an_unwritable_store_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("not a folder")
    with pytest.raises(KitError, match="cannot write the run store"):
        RunStore(tmp_path / "runs").begin("kt-01-chapter")


def test_corrupt_and_foreign_entries_are_named_and_skipped(project: Project, record_run: RecordRun) -> None:
    good = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    bad = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    record = bad.path / RECORD_FILE
    record.chmod(0o644)
    record.write_text("{ not json")
    invalid = record_run("kt-02-chapter", [("kt-02.text.upper", "holds", "PI")])
    data = json.loads((invalid.path / RECORD_FILE).read_text())
    data["status"] = "great"
    (invalid.path / RECORD_FILE).chmod(0o644)
    (invalid.path / RECORD_FILE).write_text(json.dumps(data))
    runs = project.runs_dir
    (runs / "notes.txt").write_text("hello")
    (runs / "kt-01-chapter" / "scratch").mkdir()
    (runs / "kt-01-chapter" / "20261130T000000Z-aaaaaa").mkdir()
    (runs / "kt-01-chapter" / ".tmp-20261130T000000Z-bbbbbb-999999999").mkdir()  # its writer is long gone
    (runs / "kt-01-chapter" / f".tmp-20261130T000000Z-cccccc-{writer_token(os.getpid())}").mkdir()  # being written
    moved = record_run("kt-03-chapter", [])
    os.rename(moved.path, runs / "kt-03-chapter" / "20261130T000000Z-dddddd")

    listing = project.store.list()
    assert [run.record.run_id for run in listing.runs if run.verified] == [good.record.run_id]
    (copy,) = [run for run in listing.runs if not run.verified and not run.unreadable]
    assert copy.record.run_id == "20261130T000000Z-dddddd"
    assert copy.problem == (
        "record does not match its notebook: it is in folder 20261130T000000Z-dddddd but its record names run "
        f"{moved.record.run_id} (a copied run)"
    )
    problems = {problem.path.relative_to(runs).as_posix(): problem.problem for problem in listing.problems}
    assert problems.keys() == {
        "notes.txt",
        "kt-01-chapter/scratch",
        "kt-01-chapter/.tmp-20261130T000000Z-bbbbbb-999999999",
    }
    # an unreadable record is never skipped quietly: it is a run whose verdicts are ERROR, naming file and problem
    unreadable = {run.path.relative_to(runs).as_posix(): run for run in listing.unreadable}
    assert unreadable.keys() == {
        "kt-01-chapter/20261130T000000Z-aaaaaa",
        f"kt-01-chapter/{bad.record.run_id}",
        f"kt-02-chapter/{invalid.record.run_id}",
    }
    empty = unreadable["kt-01-chapter/20261130T000000Z-aaaaaa"]
    assert empty.problem == f"the run record {empty.path / RECORD_FILE} is unreadable: missing"
    assert empty.record.backend == ""
    assert unreadable[f"kt-01-chapter/{bad.record.run_id}"].problem.endswith(
        "corrupt: record: Invalid JSON: key must be a string at line 1 column 3"
    )
    assert unreadable[f"kt-01-chapter/{bad.record.run_id}"].record.backend == "standin"  # from its notebook
    assert "status" in unreadable[f"kt-02-chapter/{invalid.record.run_id}"].problem
    assert unreadable[f"kt-02-chapter/{invalid.record.run_id}"].record.backend == "standin"  # from its text
    assert project.store.get(good.record.run_id).record == good.record
    with pytest.raises(KitError, match="no readable run"):
        project.store.get(bad.record.run_id)


def test_check_rehashes_artefacts(project: Project, record_run: RecordRun) -> None:
    intact = record_run("kt-01-chapter", [])
    tampered = record_run("kt-01-chapter", [])
    missing = record_run("kt-02-chapter", [])
    target = tampered.path / "executed.ipynb"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes() + b" ")
    (missing.path / "executed.ipynb").unlink()
    runs, problems = project.store.check()
    assert len(runs) == 3
    messages = {problem.path.name: problem.problem for problem in problems}
    assert messages == {
        tampered.record.run_id: "record does not match its notebook: executed.ipynb was changed "
        "(its sha256 differs from the record's)",
        missing.record.run_id: "record does not match its notebook: executed.ipynb is missing",
    }
    assert intact.record.run_id not in messages


def test_two_processes_never_share_a_run_folder(project: Project, record_run: RecordRun) -> None:
    """Reservations are exclusive across processes (the full two-`pinb verify` case runs kernels; see test_execute)."""
    ctx = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue = ctx.Queue()
    workers = [ctx.Process(target=_reserve, args=(str(project.runs_dir), 40, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    reserved = [run_id for batch in results for run_id in batch]
    assert len(reserved) == 80 == len(set(reserved))
    assert project.store.list().problems == []


def _reserve(root: str, count: int, queue: multiprocessing.Queue) -> None:
    store = RunStore(Path(root))
    made = []
    for _ in range(count):
        pending = store.begin("kt-01-chapter")
        made.append(pending.run_id)
        (pending.path / "x").write_text("x")
        os.rename(pending.path, store.chapter_dir("kt-01-chapter") / f".done-{pending.run_id}")
    queue.put(made)


def test_a_store_held_unchanged_is_read_once_per_selection_and_afresh_after(
    project: Project, record_run: RecordRun, monkeypatch
) -> None:
    """The end of a verify (its runs written) reads the store once for its conclusion, ledger and findings."""
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    reads: list[str | None] = []
    read = RunStore._list
    monkeypatch.setattr(RunStore, "_list", lambda self, chapter: reads.append(chapter) or read(self, chapter))
    with project.store.unchanged():
        first = project.store.list()  # another RunStore of the same folder: held all the same
        assert project.store.list() is first
        assert len(project.store.list("kt-01-chapter").runs) == 1
        with project.store.unchanged():  # an inner block keeps the outer one's listings
            assert project.store.list() is first
        assert project.store.list() is first
    assert reads == [None, "kt-01-chapter"]
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    assert len(project.store.list().runs) == 2 and reads[-1] is None
