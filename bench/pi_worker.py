"""Real Pi through the warm Node worker against a Node process per scenario and against the stand-in, in one run.

    .venv/bin/python bench/pi_worker.py [--part all|corpus|verify|matrix] [--cold-sample N] [--chapters ...]

1. ``corpus``: every corpus scenario on Pi 1.6.0, run three ways in this process: cold (``run_on_pi(warm=False)``: a
   Node process per scenario, the way every run went before the worker), warm (``run_on_pi``: one worker), and on
   the stand-in (``run_on_standin``). Prints seconds per scenario of each and the ratios, and whether every warm
   trace equals the cold one after the meta line. ``--cold-sample N`` times only the first N scenarios cold.
   Target: warm <= 0.3 s per scenario.
2. ``verify``: per chapter, ``pinb verify CH --backend pi --force`` against ``pinb verify CH --backend standin
   --force``, whole processes, in a throw-away copy of the project (the repository's run store is not touched).
   Target: pi <= 2 x standin.
3. ``matrix``: the chapters on every installed release, one whole ``pinb verify --backend pi --pi-version all
   --jobs 2`` process (every release planned into one pool of two workers; a chapter that cannot run on a release
   is left UNRUN there); the total. Target: six releases <= 5 minutes.

A benchmark, not a test: it prints figures and exits 0 whatever they are. The load average is printed before and
after: on a shared machine, quote ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = ("pi-01-chapter", "pi-16-chapter")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def corpus(cold_sample: int | None) -> None:
    from pinb.scenario import reference, worker
    from pinb.scenario.model import load_scenario
    from pinb.scenario.standin import run_on_standin

    paths = reference.corpus_scenarios()
    sample = paths if cold_sample is None else paths[:cold_sample]
    started = time.perf_counter()
    cold = {path.stem: reference.run_on_pi(path, "1.6.0", warm=False) for path in sample}
    cold_s = time.perf_counter() - started

    started = time.perf_counter()
    reference.run_on_pi(paths[0], "1.6.0")  # the worker's start: paid once per release and process
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    warm = {path.stem: reference.run_on_pi(path, "1.6.0") for path in paths}
    warm_s = time.perf_counter() - started
    restarts = sum(w.started for w in worker.pool().workers()) - 1

    scenarios = [load_scenario(path) for path in paths]
    started = time.perf_counter()
    for scenario in scenarios:
        run_on_standin(scenario)
    standin_s = time.perf_counter() - started

    same = all(reference._compared(cold[name]) == reference._compared(warm[name]) for name in cold)
    n, k = len(paths), len(sample)
    print(f"corpus on Pi 1.6.0: {n} scenarios (cold: {k})")
    print(f"  cold    {cold_s / k:7.3f} s/scenario  ({cold_s:.1f} s for {k})")
    print(f"  warm    {warm_s / n:7.3f} s/scenario  ({warm_s:.1f} s; the worker's start {first_s:.2f} s once; "
          f"{restarts} restarts)")  # fmt: skip
    print(f"  standin {standin_s / n:7.3f} s/scenario  ({standin_s:.1f} s)")
    print(f"  cold / warm {cold_s / k / (warm_s / n):.1f}x   warm / standin {warm_s / standin_s:.2f}x   "
          f"target warm <= 0.3 s/scenario: {'met' if warm_s / n <= 0.3 else 'NOT met'}")  # fmt: skip
    print(f"  every warm trace equals the cold one (after the meta line): {same}")
    worker.close_workers()


def _project_copy() -> Path:
    """A throw-away copy of the committed project (git archive of HEAD), so runs land outside the repository."""
    folder = Path(tempfile.mkdtemp(prefix="pinb-bench-pi-"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _book() -> dict[str, str]:
    """The book the repository names (`PINB_BOOK`, else `[tool.pinb] book`), so the copy's runs read the same
    chapter texts."""
    from pinb.chapters.book import book_dir

    folder = book_dir(REPO)
    return {"PINB_BOOK": str(folder)} if folder is not None and folder.is_dir() else {}


def _verify(root: Path, *args: str) -> float:
    pinb = Path(sys.executable).with_name("pinb")
    env = os.environ | {"PINB_ROOT": str(root)} | _book()
    started = time.perf_counter()
    out = subprocess.run([str(pinb), "verify", *args, "--force", "--no-progress"], env=env, capture_output=True,
                         text=True, cwd=root)  # fmt: skip
    took = time.perf_counter() - started
    if out.returncode not in (0, 1):
        print(f"  pinb verify {' '.join(args)}: exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}")
    return took


def verify(chapters: tuple[str, ...], repeat: int) -> None:
    root = _project_copy()
    print(f"pinb verify CH --force, whole processes, median of {repeat} (project copy in a temporary folder)")
    for chapter in chapters:
        pi, standin = [], []
        for _ in range(repeat):
            standin.append(_verify(root, chapter, "--backend", "standin"))
            pi.append(_verify(root, chapter, "--backend", "pi"))
        p, s = statistics.median(pi), statistics.median(standin)
        print(f"  {chapter}: pi {p:6.1f} s   standin {s:6.1f} s   pi / standin {p / s:.2f}x   "
              f"target <= 2x: {'met' if p / s <= 2 else 'NOT met'}")  # fmt: skip


def matrix(chapters: tuple[str, ...]) -> None:
    from pinb.scenario import reference

    root = _project_copy()
    versions = [v for v in reference.available_versions() if reference.is_installed(v)]
    print(f"{' + '.join(chapters)} on every installed release ({', '.join(versions)}): one `pinb verify --backend pi "
          f"--pi-version all --jobs 2` (one pool for every release; runs in {root})")  # fmt: skip
    took = _verify(root, *chapters, "--backend", "pi", "--pi-version", "all", "--jobs", "2")
    print(f"  total {took:.1f} s for {len(versions)} releases ({took / len(versions):.1f} s per release; "
          f"six releases: about {6 * took / len(versions) / 60:.1f} min, target <= 5 min)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("all", "corpus", "verify", "matrix"), default="all")
    parser.add_argument("--cold-sample", type=int, metavar="N", help="time only the first N scenarios cold")
    parser.add_argument("--chapters", nargs="+", default=list(CHAPTERS), metavar="CH")
    parser.add_argument("--repeat", type=int, default=1, metavar="R", help="pairs of verify runs per chapter")
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    if args.part in ("all", "corpus"):
        corpus(args.cold_sample)
    if args.part in ("all", "verify"):
        verify(tuple(args.chapters), args.repeat)
    if args.part in ("all", "matrix"):
        matrix(tuple(args.chapters))
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
