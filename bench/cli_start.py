"""Whole-process time of the everyday commands: ``pinb status``, ``pinb report``, ``pinb scenario run``.

Each command runs ``--repeat`` times after one warm-up, as a separate process from the repository root (status and
report read the committed runs); a bare ``python -c pass`` is timed the same way for scale. Prints the median and
range of wall and CPU seconds (goal: ``pinb status`` <= 0.5 s wall). Which modules a command may import is checked
by tests/test_fast_start.py; this only times them.

    python bench/cli_start.py [--repeat 9]

A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pinb() -> list[str]:
    script = Path(sys.executable).with_name("pinb")
    return (
        [str(script)]
        if script.is_file()
        else [sys.executable, "-c", "import sys; from pinb.cli import main; sys.exit(main())"]
    )


def timed(command: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    trace = Path(os.devnull)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "pinb status": [*pinb(), "status"],
        "pinb report pi-16-chapter": [*pinb(), "report", "pi-16-chapter"],
        "pinb scenario run ch01-word-count": [
            *pinb(), "scenario", "run", "scenarios/ch01-word-count.json", "--backend", "standin", "-o", str(trace),
        ],
    }  # fmt: skip
    print(f"load average (1, 5, 15 min) at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; {args.repeat} runs each after one warm-up, in turn")  # fmt: skip
    for command in commands.values():
        timed(command)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            runs[name].append(timed(command))
    print(f"{'command':<36} {'wall s (median)':>15} {'wall min..max':>14} {'cpu s (median)':>15}")
    for name, times in runs.items():
        walls = sorted(t[0] for t in times)
        cpu = statistics.median(t[1] for t in times)
        print(f"{name:<36} {statistics.median(walls):>15.3f} {f'{walls[0]:.2f}..{walls[-1]:.2f}':>14} {cpu:>15.3f}")
    status = statistics.median(t[0] for t in runs["pinb status"])
    print(f"goal: pinb status <= 0.5 s wall: {status:.3f} s")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
