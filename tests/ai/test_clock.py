"""The stand-in's clock: `now_ms` is JavaScript's `Date.now()`, and a stamp from `stamp_later_than_now` is what a
JavaScript program gets by waiting out the current millisecond: strictly later than everything read before it, and
never passed back by a later read."""

from __future__ import annotations

import itertools
import threading
import time

from pinb.ai.types import now_ms, stamp_later_than_now


def test_a_stamp_is_strictly_after_every_earlier_read_and_no_later_read_is_before_it() -> None:
    for _ in range(200):
        before = now_ms()
        stamp = stamp_later_than_now()
        after = now_ms()
        assert before < stamp <= after


def test_stamps_in_one_millisecond_are_distinct_and_increasing() -> None:
    stamps = [stamp_later_than_now() for _ in range(500)]
    assert all(later > earlier for earlier, later in itertools.pairwise(stamps))


def test_the_clock_is_the_wall_clock_again_once_the_wall_clock_passes_the_last_stamp() -> None:
    stamp = stamp_later_than_now()
    time.sleep(max(0, stamp - time.time_ns() // 1_000_000) / 1000 + 0.01)
    assert abs(now_ms() - time.time_ns() // 1_000_000) <= 1


def test_stamps_from_threads_at_once_are_distinct_and_each_thread_reads_no_earlier_time_after_its_stamp() -> None:
    stamps: list[int] = []
    broken: list[str] = []
    lock = threading.Lock()

    def stamp_many() -> None:
        for _ in range(300):
            stamp = stamp_later_than_now()
            if now_ms() < stamp:
                broken.append(f"read before its own stamp {stamp}")
            with lock:
                stamps.append(stamp)

    threads = [threading.Thread(target=stamp_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert broken == []
    assert len(set(stamps)) == len(stamps) == 1200
