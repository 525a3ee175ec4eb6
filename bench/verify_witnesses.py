"""Benchmark `pinb verify --backend standin --force --jobs 2` now against the verify of before claims were properties.

    .venv/bin/python bench/verify_witnesses.py [--repeat 3] [--base a079fb5] [--current REV] [--jobs 2]

Makes two throw-away copies of the project: the current working tree (its tracked and untracked, not ignored,
files, so uncommitted edits count; with `--current REV`, that commit's tree instead) and the tree of commit
`--base` (`git archive`; default a079fb5, the verify of before claims became properties). Then runs, as whole
processes and alternating (base, current, no-sample, base, …), `python -m pinb.cli verify --backend standin
--force --jobs 2 --no-progress` in each copy, and in the current copy once more with `-p witnesses=0` (no-sample:
the same code and store without the recorded sample of generated witnesses, so what the sample itself costs).
Every run starts from its copy's run store as it was before the first (so each does the same work): the runs a
verify adds are removed, the ones before it stay in place, as an author's do. It prints
each figure (wall time, and the CPU time of the process and its kernels), the medians and their ratios (target:
current ≤ 1.5 × base), with the machine's load average before and after. On a shared machine the CPU time is
the steadier figure. Each copy runs its own source tree (`PYTHONPATH=<copy>/src`, ahead of the installed pinb)
with this interpreter's packages, and its own run store: the repository's `runs/` and `reports/` are never
touched. The book's texts are named to both (`PINB_BOOK`), as `[tool.pinb] book` names them to the repository.

A benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = "a079fb5"
TARGET_RATIO = 1.5
#: The current tree's verify without generated witnesses: what the recorded sample itself costs.
NO_SAMPLE = ("-p", "witnesses=0")


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def copy_current(target: Path) -> None:
    """The working tree's tracked and untracked (not ignored) files, as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode("utf-8").split("\0")):
        source = REPO / name
        if not source.is_file():  # deleted but not yet staged
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)


def copy_commit(commit: str, target: Path) -> None:
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


def book_dir() -> str | None:
    """The book directory the repository names (`PINB_BOOK`, else `[tool.pinb] book`), absolute."""
    sys.path.insert(0, str(REPO / "src"))
    try:
        from pinb.chapters.book import book_dir as named
    finally:
        sys.path.pop(0)
    found = named(REPO)
    return str(found) if found is not None and found.is_dir() else None


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def environment(copy: Path, book: str | None) -> dict[str, str]:
    env = os.environ | {"PINB_ROOT": str(copy), "PYTHONPATH": str(copy / "src")}
    if book is not None:
        env["PINB_BOOK"] = book
    return env


def keep_store(copy: Path, book: str | None) -> set[Path]:
    """The copy's runs as they are before any timed run, each verified once (`pinb status` writes the store's
    verification cache, as an author's earlier command would have), and its reports kept aside: each timed verify
    starts from this state (else each would list the runs before it). The runs are left in place, as an author's
    are, rather than copied back (a copy is a newer file to the store's checks)."""
    subprocess.run(
        [sys.executable, "-m", "pinb.cli", "status"], cwd=copy, env=environment(copy, book), capture_output=True
    )
    kept = copy.with_name(f"{copy.name}-kept")
    for name in ("reports", "README.md"):
        if (copy / name).is_dir():
            shutil.copytree(copy / name, kept / name)
        elif (copy / name).is_file():
            kept.mkdir(exist_ok=True)
            shutil.copy2(copy / name, kept / name)
    return set((copy / "runs").glob("*/*"))


def restore_store(copy: Path, runs: set[Path]) -> None:
    """Remove the runs a timed verify added; put its reports back."""
    for run in set((copy / "runs").glob("*/*")) - runs:
        if run.is_dir() and not run.name.startswith("."):
            shutil.rmtree(run)
    kept = copy.with_name(f"{copy.name}-kept")
    if (kept / "reports").is_dir():
        shutil.rmtree(copy / "reports", ignore_errors=True)
        shutil.copytree(kept / "reports", copy / "reports")
    if (kept / "README.md").is_file():
        shutil.copy2(kept / "README.md", copy / "README.md")


def verify(copy: Path, jobs: int, book: str | None, extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """Wall and CPU seconds of one `pinb verify --backend standin --force` process in `copy` (exit 0, or 1: a
    finding)."""
    env = environment(copy, book)
    argv = [sys.executable, "-m", "pinb.cli", "verify", "--backend", "standin", "--force", "--jobs", str(jobs), *extra]
    began, began_cpu = time.perf_counter(), cpu()
    done = subprocess.run([*argv, "--no-progress"], cwd=copy, env=env, capture_output=True, text=True, check=False)
    elapsed, used = time.perf_counter() - began, cpu() - began_cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify in {copy.name} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs, alternating (default 3)")
    parser.add_argument("--base", default=BASE, help=f"the commit to compare with (default {BASE})")
    parser.add_argument("--current", metavar="REV", help="time this commit instead of the working tree")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks verified at once (default 2)")
    args = parser.parse_args()

    print(f"load average before: {load()} ({os.cpu_count()} CPUs)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="pinb-bench-verify-"))
    try:
        base, current = root / "base", root / "current"
        copy_commit(args.base, base)
        if args.current:
            copy_commit(args.current, current)
        else:
            copy_current(current)
        book = book_dir()
        print(f"book texts: {book or 'not available (claims that need them stay UNRUN on both sides)'}")
        kept = {copy: keep_store(copy, book) for copy in (base, current)}
        for copy in (base, current):  # warm-up: byte-compiled sources, kernel spec caches
            verify(copy, args.jobs, book)
        series = (("base", base, ()), ("current", current, ()), ("no-sample", current, NO_SAMPLE))
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in series}
        for n in range(1, args.repeat + 1):
            for name, copy, extra in series:
                restore_store(copy, kept[copy])
                wall, used = verify(copy, args.jobs, book, extra)
                figures[name].append((wall, used))
                print(f"  {n}: {name:8} wall {wall:6.2f} s, CPU {used:6.2f} s  (load {load()})", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    wall = {name: statistics.median(w for w, _ in values) for name, values in figures.items()}
    used = {name: statistics.median(c for _, c in values) for name, values in figures.items()}
    command = f"pinb verify --backend standin --force --jobs {args.jobs}"
    print(f"{command}, median of {args.repeat}:")
    print(f"  {args.base:10} wall {wall['base']:6.2f} s, CPU {used['base']:6.2f} s")
    label = args.current or "current"
    print(f"  {label:10} wall {wall['current']:6.2f} s, CPU {used['current']:6.2f} s")
    for what, figure in (("wall", wall), ("CPU", used)):
        ratio = figure["current"] / figure["base"]
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(f"  {what} ratio {ratio:4.2f}x ({verdict} the {TARGET_RATIO}x target)")
    print(f"  the recorded sample's own cost (current / current with {' '.join(NO_SAMPLE)}, same code and store):")
    for what, figure in (("wall", wall), ("CPU", used)):
        ratio = figure["current"] / figure["no-sample"]
        print(f"    {what} {figure['no-sample']:6.2f} s → {figure['current']:6.2f} s: {ratio:4.2f}x")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
