"""Benchmark `pinb verify` against bare papermill on the same notebooks, in one invocation.

    .venv/bin/python bench/verify.py [--notebooks N] [--repeat R] [--book]

Builds a throw-away project of N small chapter notebooks (a parameters cell, the claims import, a few checks), or
with `--book` of copies of the book's registered chapter notebooks, then times, each as its own process the way
a user runs it:

1. bare papermill, sequentially, one process (the baseline), and again with the import shortcut pinb takes
   (`pinb.kit._imports`: jsonschema's unused IRI grammars are not compiled), for a like-for-like overhead;
2. `pinb verify` cold (empty run store) with `--jobs 1`;
3. `pinb verify` cold with `--jobs 2`;
4. `pinb verify` warm (nothing changed since 3; every notebook is answered from the run store).

Goals: (2) ≤ 1.10 × (1); (3) ≤ 0.65 × (1); (4) ≤ 0.05 × (2). With R > 1 the median of R repeats is reported.
A benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_ROOT_ENV = "PINB_BENCH_ROOT"
KERNEL_METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}
PARAMETERS = 'backend = "standin"\npi_version = "1.6.0"'
SETUP = "from pinb.kit.claims import check, checking, use_backend\n\nuse_backend(backend, pi_version)"
CELLS = (
    'check("bn-{n:02d}.math.adds", 1 + 1 == 2, f"1 + 1 evaluated to {{1 + 1}}")',
    "total = sum(i * i for i in range(200_000))\n"
    'check("bn-{n:02d}.math.sums", total == 2666646666700000, f"the sum of squares was {{total}}")',
    'with checking("bn-{n:02d}.text.upper") as c:\n    c.check("pi".upper() == "PI", "upper() gave PI")',
)


def chapters() -> dict[str, object]:
    """The registry the `pinb verify` processes load (`PINB_REGISTRY=verify:chapters`)."""
    from pinb.kit.claims import Chapter, Claim

    root = Path(os.environ[BENCH_ROOT_ENV])
    found = {}
    for path in sorted((root / "notebooks").glob("bench-*.ipynb")):
        n = int(path.stem.split("-")[1])
        chapter_id = f"bn-{n:02d}-chapter"
        claims = tuple(
            Claim(id=f"bn-{n:02d}.{slug}", chapter=chapter_id, quote=f"Claim {slug}.", location="¶1")
            for slug in ("math.adds", "math.sums", "text.upper")
        )
        found[chapter_id] = Chapter(
            id=chapter_id,
            number=f"{n:02d}",
            title=f"Bench {n}",
            notebook=f"notebooks/{path.name}",
            text_fingerprint="0" * 64,
            claims=claims,
        )
    return found


def make_project(root: Path, count: int) -> list[Path]:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    (root / "notebooks").mkdir(parents=True)
    paths = []
    for n in range(1, count + 1):
        params = new_code_cell(PARAMETERS)
        params.metadata["tags"] = ["parameters"]
        cells = [params, new_code_cell(SETUP), *(new_code_cell(src.format(n=n)) for src in CELLS)]
        notebook = new_notebook(cells=cells, metadata=KERNEL_METADATA)
        path = root / "notebooks" / f"bench-{n:02d}.ipynb"
        nbformat.write(notebook, path)
        paths.append(path)
    return paths


def timed(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed


def bare_papermill(paths: list[Path], out: Path, shortcut: bool = False) -> list[str]:
    script = (
        ("import sys; sys.modules['rfc3987_syntax'] = None\n" if shortcut else "") + "import sys, papermill\n"
        "for i, nb in enumerate(sys.argv[2:]):\n"
        "    papermill.execute_notebook(nb, f'{sys.argv[1]}/out-{i}.ipynb', parameters={'backend': 'standin'},"
        " kernel_name='python3', progress_bar=False)\n"
    )
    return [sys.executable, "-c", script, str(out), *map(str, paths)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--book", action="store_true", help="the book's registered chapter notebooks instead")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="pinb-bench-"))
    try:
        env = os.environ | {"PINB_ROOT": str(root)}
        if args.book:  # copies of the chapter notebooks, so the repository's own run store is left alone
            from pinb.chapters.registry import chapters as book_chapters

            repo = Path(__file__).resolve().parents[1]
            paths = []
            for chapter in book_chapters().values():
                target = root / chapter.notebook
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(repo / chapter.notebook, target)
                paths.append(target)
        else:
            paths = make_project(root, args.notebooks)
            env |= {
                BENCH_ROOT_ENV: str(root),
                "PINB_REGISTRY": "verify:chapters",
                "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")]),
            }
        pinb = [sys.executable, "-m", "pinb.cli", "verify", "--no-progress"]
        figures: dict[str, list[float]] = {"papermill": [], "papermill_fast": [], "cold1": [], "cold2": [], "warm": []}
        for _ in range(args.repeat):
            scratch = root / "papermill-out"
            scratch.mkdir(exist_ok=True)
            figures["papermill"].append(timed(bare_papermill(paths, scratch), env))
            figures["papermill_fast"].append(timed(bare_papermill(paths, scratch, shortcut=True), env))
            shutil.rmtree(root / "runs", ignore_errors=True)
            figures["cold1"].append(timed([*pinb, "--jobs", "1"], env))
            shutil.rmtree(root / "runs", ignore_errors=True)
            figures["cold2"].append(timed([*pinb, "--jobs", "2"], env))
            figures["warm"].append(timed([*pinb, "--jobs", "2"], env))
        median = {name: statistics.median(values) for name, values in figures.items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)

    base, fast, cold1, cold2, warm = (median[n] for n in ("papermill", "papermill_fast", "cold1", "cold2", "warm"))
    what = "the book's chapter notebooks" if args.book else "small generated notebooks"
    print(f"{len(paths)} notebooks ({what}), median of {args.repeat}, {os.cpu_count()} CPUs")
    print(f"  bare papermill, sequential     {base:7.2f} s")
    print(f"  ... with pinb's import shortcut {fast:6.2f} s  (like for like: the rfc3987_syntax grammars skipped)")
    print(
        f"  pinb verify cold --jobs 1      {cold1:7.2f} s  {cold1 / base:5.2f}x papermill  (goal <= 1.10x);"
        f" {cold1 / fast:5.2f}x like for like"
    )
    print(
        f"  pinb verify cold --jobs 2      {cold2:7.2f} s  {cold2 / base:5.2f}x papermill  (goal <= 0.65x);"
        f" {cold2 / fast:5.2f}x like for like"
    )
    print(f"  pinb verify warm (unchanged)   {warm:7.2f} s  {warm / cold1:6.1%} of cold --jobs 1  (goal <= 5 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
