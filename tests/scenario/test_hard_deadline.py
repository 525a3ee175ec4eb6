"""The stand-in's hard deadline: one watchdog thread for every run of a process, each deadline ending only its own
work, and a deadline armed after many finished runs still firing on time."""

from __future__ import annotations

import threading
import time

import pytest

from pinb.ai.timers import DeadlineExceeded, hard_deadline


def test_finished_runs_leave_one_watchdog_and_no_pending_exception() -> None:
    for _ in range(200):
        with hard_deadline(30):
            sum(range(100))
    watchdogs = [t for t in threading.enumerate() if t.name == "pinb-hard-deadline"]
    assert len(watchdogs) == 1
    time.sleep(0.05)  # nothing was fired at this thread: a pending exception would land here


def test_a_short_deadline_after_long_ones_still_fires() -> None:
    with hard_deadline(60):  # a long deadline armed first, still pending while the short one runs
        began = time.monotonic()
        with pytest.raises(DeadlineExceeded), hard_deadline(0.3):
            while True:  # never yields, never asks how much time is left
                pass
    assert time.monotonic() - began < 3
