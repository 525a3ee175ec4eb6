"""`pinb scenario run -o TRACE` wrote the trace with mode 0600 (tempfile.mkstemp's), unreadable to anyone else."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pinb.scenario.cli import write_atomically


def test_a_written_trace_has_the_mode_an_ordinary_file_gets(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        target = tmp_path / "trace.jsonl"
        write_atomically(target, "{}\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
    finally:
        os.umask(previous)
