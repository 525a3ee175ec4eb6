"""A run counts only while its record matches its evidence (synthetic runs; the real-kernel cases are in
tests/regressions/test_tampered_runs_are_not_counted.py)."""

from __future__ import annotations

import json
import os
import stat

from pinb.kit.project import Project
from pinb.kit.status import chapter_statuses

from .conftest import RecordRun


def _edit(path, change) -> None:
    path.chmod(path.stat().st_mode | stat.S_IWUSR)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_synthetic_runs_verify(project: Project, record_run: RecordRun) -> None:
    record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    record_run("kt-01-chapter", [], status="failed", failure="cell 2 raised KeyError")
    assert [run.problem for run in project.store.list().runs] == [None, None]


def test_a_failed_run_edited_to_completed(project: Project, record_run: RecordRun) -> None:
    record_run("kt-01-chapter", [("kt-01.math.adds", "contradicted", "3")])
    failed = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], status="failed", failure="cell 3 raised")
    _edit(failed.path / "run.json", lambda data: data.update(status="completed", failure=None))
    (run,) = [run for run in project.store.list().runs if run.record.run_id == failed.record.run_id]
    assert (
        run.problem
        == "record does not match its notebook: the notebook records an exception, yet the record says completed"
    )
    statuses = chapter_statuses(project, project.chapter("kt-01-chapter"), project.store.list().runs)
    assert (statuses[0].status, statuses[0].run_id) == ("ERROR", failed.record.run_id)


def test_edited_inputs_or_parameters(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")], backend="pi@1.0.3")
    _edit(run.path / "run.json", lambda data: data.update(backend="pi@1.6.0"))
    (found,) = project.store.list().runs
    assert found.problem == "record does not match its notebook: its inputs name backend pi@1.0.3, its record pi@1.6.0"
    _edit(run.path / "run.json", lambda data: data["inputs"].update(backend="pi@1.6.0"))
    (found,) = project.store.list().runs
    assert found.problem.startswith("record does not match its notebook: ")


def test_a_record_that_lists_an_artefact_outside_its_run(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    outside = {"path": "../../notebooks/holds.ipynb", "sha256": "0" * 64, "kind": "file"}
    _edit(run.path / "run.json", lambda data: data["artifacts"].append(outside))
    (found,) = project.store.list().runs
    assert found.problem == (
        "record does not match its notebook: artefact path '../../notebooks/holds.ipynb' is not a plain path inside "
        "the run"
    )


def test_the_verification_cache_never_outlives_an_edit(project: Project, record_run: RecordRun) -> None:
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    assert project.store.list().runs[0].problem is None
    cached = json.loads((project.runs_dir / ".verified.json").read_text())["runs"]
    assert list(cached) == [f"kt-01-chapter/{run.record.run_id}"]
    # the same size, the same modification time: the bytes differ, and so does the digest the cache is keyed by
    notebook = run.path / "executed.ipynb"
    info = notebook.stat()
    notebook.chmod(0o644)
    notebook.write_bytes(notebook.read_bytes().replace(b'"2"', b'"3"'))
    os.utime(notebook, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert notebook.stat().st_size == info.st_size
    assert project.store.list().runs[0].problem == (
        "record does not match its notebook: executed.ipynb was changed (its sha256 differs from the record's)"
    )
    (project.runs_dir / ".verified.json").write_text("{not json")
    assert project.store.list().runs[0].problem is not None


def test_a_settled_run_is_not_read_again_until_a_file_of_it_changes(
    project: Project, record_run: RecordRun, monkeypatch
) -> None:
    """Once a run's newest change is seconds old, the cache keeps its files' sizes and times; while they hold, the
    bytes are not read again. An edit changes a file's change time even where size and modification time are put
    back, and a run changed within the last seconds is read every time."""
    import time

    from pinb.kit import integrity

    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    digests: list[str] = []
    digest = integrity._digest
    monkeypatch.setattr(
        integrity, "_digest", lambda folder, hashes=None: digests.append(folder.name) or digest(folder, hashes)
    )
    assert project.store.list().runs[0].problem is None
    assert project.store.list().runs[0].problem is None
    assert len(digests) == 2  # just written: its times do not vouch for its bytes yet
    later = time.time_ns() + 10 * integrity._SETTLED_NS
    monkeypatch.setattr(integrity.time, "time_ns", lambda: later)
    assert project.store.list().runs[0].problem is None
    assert len(digests) == 3  # read once more, now settled: its signature is kept
    assert project.store.list().runs[0].problem is None
    assert len(digests) == 3
    time.sleep(0.05)  # past the clock tick of the files' last change
    notebook = run.path / "executed.ipynb"
    info = notebook.stat()
    notebook.chmod(info.st_mode | stat.S_IWUSR)
    notebook.write_bytes(notebook.read_bytes().replace(b'"2"', b'"3"'))
    os.utime(notebook, ns=(info.st_atime_ns, info.st_mtime_ns))
    notebook.chmod(info.st_mode)
    assert (notebook.stat().st_size, notebook.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)
    assert project.store.list().runs[0].problem == (
        "record does not match its notebook: executed.ipynb was changed (its sha256 differs from the record's)"
    )
    assert len(digests) == 4


def test_an_environment_edited_to_look_like_this_machine(project: Project, record_run: RecordRun) -> None:
    """The kernel's own report of its Python version is evidence: a record claiming another one is not counted."""
    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    notebook = run.path / "executed.ipynb"
    notebook.chmod(0o644)
    data = json.loads(notebook.read_text())
    data["metadata"]["language_info"] = {"name": "python", "version": "3.11.7"}
    notebook.write_text(json.dumps(data))
    _edit(run.path / "run.json", lambda record: record["artifacts"][0].update(sha256=_sha256(notebook)))
    assert project.store.list().runs[0].problem is None
    _edit(run.path / "run.json", lambda record: record["inputs"].update(environment={"python": "3.12.1"}))
    assert project.store.list().runs[0].problem == (
        "record does not match its notebook: the notebook ran on Python 3.11.7, the record says 3.11.7 and 3.12.1"
    )


def _sha256(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_runs_that_could_not_start_share_the_source_notebook(project: Project, record_run: RecordRun) -> None:
    """The kit keeps the source notebook when no kernel starts; two such attempts are not copies of each other."""
    runs = [record_run("kt-01-chapter", [], status="error", failure="NoSuchKernel: no kernel") for _ in range(2)]
    source = (project.root / "notebooks" / "holds.ipynb").read_bytes()
    for run in runs:
        notebook = run.path / "executed.ipynb"
        notebook.chmod(0o644)
        notebook.write_bytes(source)
        digest = _sha256(notebook)
        _edit(run.path / "run.json", lambda record, digest=digest: record["artifacts"][0].update(sha256=digest))
    assert [run.problem for run in project.store.list().runs] == [None, None]


def test_a_run_read_afresh_has_each_file_read_once_and_a_changed_artefact_is_still_caught(
    project: Project, record_run: RecordRun, monkeypatch
) -> None:
    """A run the cache cannot answer for is hashed once: the record's artefact hashes are compared with the hashes
    the digest just took, so every file is read once, and a changed artefact is still a mismatch."""
    from pinb.kit import fingerprint, integrity

    run = record_run("kt-01-chapter", [("kt-01.math.adds", "holds", "2")])
    read: list[str] = []
    sha256_file = fingerprint.sha256_file

    def counted(path):
        read.append(os.fspath(path))
        return sha256_file(path)

    monkeypatch.setattr(integrity, "sha256_file", counted)
    assert project.store.list().runs[0].problem is None
    assert read and len(read) == len(set(read))
    notebook = run.path / "executed.ipynb"
    notebook.chmod(notebook.stat().st_mode | stat.S_IWUSR)
    notebook.write_bytes(notebook.read_bytes().replace(b'"2"', b'"3"'))
    problem = project.store.list().runs[0].problem
    assert problem is not None and "executed.ipynb was changed" in problem
