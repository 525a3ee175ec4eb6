"""A run's temporary folder was named `.tmp-<run-id>-<pid>` and hidden from every listing while any process had
that pid, so the leftover of a killed run was hidden for good once its pid was reused. The name now carries the
writer's start time too: a folder is hidden only while the very process that made it runs; leftovers are reported
with the command that removes them, and the next run of the chapter removes them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pinb.kit.store import RunStore, writer_token

RUN = "20261130T195500Z-0a1b2c"


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_a_live_pid_that_did_not_write_the_folder_does_not_hide_it(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs")
    chapter = store.chapter_dir("kt-01-chapter")
    chapter.mkdir(parents=True)
    pid = os.getpid()  # alive, and it made none of these folders
    reused = chapter / f".tmp-{RUN}-{pid}-1"  # the pid now names a process started later
    older = chapter / f".tmp-{RUN}-{pid}"  # named by an older pinb: a pid alone proves nothing
    dead = chapter / f".tmp-{RUN}-{_dead_pid()}-5"
    writing = chapter / f".tmp-{RUN}-{writer_token(pid)}"  # this very process, writing now
    for folder in (reused, older, dead, writing):
        folder.mkdir()

    problems = {problem.path.name: problem.problem for problem in store.list().problems}
    assert sorted(problems) == sorted([reused.name, older.name, dead.name])
    assert f"rm -r {older}" in problems[older.name]
    assert "pinb runs prune" not in problems[older.name]  # prune leaves it: the message names what removes it
    assert "`pinb runs prune` removes it" in problems[dead.name]

    pending = store.begin("kt-01-chapter")  # the next writer removes what certainly has no writer left
    assert not reused.exists() and not dead.exists()
    assert older.exists() and writing.exists()  # a live pid: maybe an older pinb still writing; only reported
    pending.abandon()
