"""Benchmark `pinb verify` against bare nbclient executing and writing the same notebooks, whole processes.

    .venv/bin/python bench/verify.py [--notebooks N] [--repeat R]
    .venv/bin/python bench/verify.py --book-scale 44 [--repeat R] [--skip-per-chapter]

Builds a throw-away project — N small generated chapter notebooks (a parameters cell, the claims import, a few
checks), or with `--book-scale N` N copies of the book's registered chapter notebooks, each registered as a chapter
of its own — and times, each as its own process the way a user runs it:

1. bare nbclient: one process that, for each notebook in turn, injects the same parameters `pinb verify` injects
   (a cell after the `parameters` cell, `artifacts_dir` included where the notebook declares it), executes it
   with nbclient and writes it (the baseline); and again with pinb's one import shortcut (like for like);
2. `pinb verify` cold (empty run store) with `--jobs 1`;
3. `pinb verify` cold with `--jobs 2`;
4. `pinb verify` warm (nothing changed since 3: every notebook is answered from the run store);
5. with `--book-scale`, per book chapter: `pinb verify CHAPTER --force` against bare nbclient on that notebook
   alone, R pairs, the two alternating.

Targets: (2) ≤ 1.2 × (1); (3) ≤ 0.6 × (2); (4) ≤ 3 % of (2); (5) ≤ 1.2 × per chapter. With R > 1 the median of R
repeats is reported. The machine's load average is printed before and after: on a shared machine, quote ratios.
A benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_ROOT_ENV = "PINB_BENCH_ROOT"
BENCH_COPIES_ENV = "PINB_BENCH_COPIES"
REPO = Path(__file__).resolve().parents[1]
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

#: Executes and writes notebooks the way `pinb verify` does, with nbclient alone: argv = [--like-pinb] params-json,
#: out-dir, paths. `--like-pinb` takes pinb's one import shortcut (`pinb.kit._imports`: jsonschema's unused IRI
#: grammars are not compiled), for a like-for-like figure of what pinb adds.
BARE_NBCLIENT = """\
import json, os, sys
if sys.argv[1] == "--like-pinb":
    sys.modules["rfc3987_syntax"] = None
    del sys.argv[1]
import nbformat
from nbclient import NotebookClient

parameters, out = json.loads(sys.argv[1]), sys.argv[2]
for i, path in enumerate(sys.argv[3:]):
    nb = nbformat.read(path, as_version=4)
    at = next(n for n, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    injected = dict(parameters)
    if "artifacts_dir" in "".join(nb.cells[at].source):
        artifacts = os.path.join(out, f"artifacts-{i}")
        os.makedirs(artifacts, exist_ok=True)
        injected["artifacts_dir"] = os.path.relpath(artifacts, os.path.dirname(path))
    source = "\\n".join(f"{name} = {value!r}" for name, value in injected.items())
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    nbformat.write(nb, os.path.join(out, f"out-{i}.ipynb"))
"""


def chapters() -> dict[str, object]:
    """The registry the `pinb verify` processes load (`PINB_REGISTRY=verify:chapters`)."""
    root = Path(os.environ[BENCH_ROOT_ENV])
    if os.environ.get(BENCH_COPIES_ENV):
        return _book_copies(root, int(os.environ[BENCH_COPIES_ENV]))
    from pinb.claims import Claim
    from pinb.kit.claims import Chapter

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


def _book_copies(root: Path, count: int) -> dict[str, object]:
    """`count` chapters, the book's chapters in turn, each with a notebook of its own under `copies/`."""
    from pinb.chapters.registry import chapters as book_chapters

    book = list(book_chapters().values())
    found = {}
    for n in range(count):
        chapter = book[n % len(book)]
        copy_id = f"{chapter.id}-copy{n:02d}"
        notebook = f"copies/{n:02d}/{Path(chapter.notebook).name}"
        found[copy_id] = chapter.model_copy(update={"id": copy_id, "notebook": notebook})
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


def make_book_copies(root: Path, count: int) -> dict[str, Path]:
    """`{chapter id: notebook}` for `count` copies of the book's chapter notebooks."""
    os.environ[BENCH_ROOT_ENV] = str(root)
    copies = _book_copies(root, count)
    from pinb.chapters.registry import chapters as book_chapters

    sources = {chapter.id: REPO / chapter.notebook for chapter in book_chapters().values()}
    paths = {}
    for copy_id, chapter in copies.items():
        target = root / chapter.notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources[copy_id.rsplit("-copy", 1)[0]], target)
        paths[copy_id] = target
    return paths


def timed(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    """Wall seconds of one whole process, which must end with an exit code in `ok`."""
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(argv[:6])}… exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed


def bare_nbclient(paths: list[Path], out: Path, like_pinb: bool = False) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    flag = ["--like-pinb"] if like_pinb else []
    return [sys.executable, "-c", BARE_NBCLIENT, *flag, json.dumps({"backend": "standin"}), str(out), *map(str, paths)]


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=4, help="small generated notebooks (default mode)")
    parser.add_argument("--book-scale", type=int, metavar="N", help="N copies of the book's chapter notebooks")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-per-chapter", action="store_true", help="with --book-scale: whole-book figures only")
    args = parser.parse_args()

    print(f"load average before: {load()} ({os.cpu_count()} CPUs)", flush=True)
    root = Path(tempfile.mkdtemp(prefix="pinb-bench-"))
    try:
        env = os.environ | {
            "PINB_ROOT": str(root),
            BENCH_ROOT_ENV: str(root),
            "PINB_REGISTRY": "verify:chapters",
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")]),
        }
        if args.book_scale:
            env[BENCH_COPIES_ENV] = str(args.book_scale)
            by_chapter = make_book_copies(root, args.book_scale)
            paths = list(by_chapter.values())
        else:
            paths = make_project(root, args.notebooks)
            by_chapter = {}
        pinb = [sys.executable, "-m", "pinb.cli", "verify", "--no-progress"]
        verify_ok = (0, 1)  # 1: a finding, a normal end
        figures: dict[str, list[float]] = {"bare": [], "like": [], "cold1": [], "cold2": [], "warm": []}
        for _ in range(args.repeat):
            figures["bare"].append(timed(bare_nbclient(paths, root / "bare-out"), env))
            figures["like"].append(timed(bare_nbclient(paths, root / "bare-out", like_pinb=True), env))
            shutil.rmtree(root / "runs", ignore_errors=True)
            figures["cold1"].append(timed([*pinb, "--jobs", "1"], env, verify_ok))
            shutil.rmtree(root / "runs", ignore_errors=True)
            figures["cold2"].append(timed([*pinb, "--jobs", "2"], env, verify_ok))
            figures["warm"].append(timed([*pinb, "--jobs", "2"], env, verify_ok))
        median = {name: statistics.median(values) for name, values in figures.items()}
        per_chapter: list[tuple[str, float, float, float]] = []
        if args.book_scale and not args.skip_per_chapter:
            originals: dict[str, str] = {}
            for copy_id in by_chapter:
                originals.setdefault(copy_id.rsplit("-copy", 1)[0], copy_id)
            for original, copy_id in originals.items():
                bare, like, verify = [], [], []
                for _ in range(max(args.repeat, 3)):
                    bare.append(timed(bare_nbclient([by_chapter[copy_id]], root / "bare-one"), env))
                    like.append(timed(bare_nbclient([by_chapter[copy_id]], root / "bare-one", like_pinb=True), env))
                    verify.append(timed([*pinb, copy_id, "--force"], env, verify_ok))
                per_chapter.append((original, *(statistics.median(v) for v in (bare, like, verify))))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    base, like, cold1, cold2, warm = (median[n] for n in ("bare", "like", "cold1", "cold2", "warm"))
    what = "copies of the book's chapter notebooks" if args.book_scale else "small generated notebooks"
    if args.book_scale and args.book_scale < 44:
        what += "; the targets are stated for 44 or more"
    print(f"{len(paths)} notebooks ({what}), median of {args.repeat}, {os.cpu_count()} CPUs")
    print(f"  bare nbclient, sequential      {base:8.2f} s")
    print(f"  ... with pinb's import shortcut {like:7.2f} s  (like for like: jsonschema's IRI grammars skipped)")
    print(
        f"  pinb verify cold --jobs 1      {cold1:8.2f} s  {cold1 / base:5.2f}x bare nbclient  (target <= 1.20x);"
        f" {cold1 / like:5.2f}x like for like"
    )
    print(f"  pinb verify cold --jobs 2      {cold2:8.2f} s  {cold2 / cold1:5.2f}x --jobs 1  (target <= 0.60x)")
    print(f"  pinb verify warm (unchanged)   {warm:8.2f} s  {warm / cold1:6.1%} of cold --jobs 1  (target <= 3 %)")
    for chapter, bare, like, verify in per_chapter:
        print(
            f"  {chapter}: verify --force {verify:6.2f} s, bare nbclient {bare:6.2f} s (like for like {like:6.2f} s):"
            f" {verify / bare:5.2f}x (target <= 1.20x); {verify / like:5.2f}x like for like"
        )
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
