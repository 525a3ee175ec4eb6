"""A simulated Colab run: chapter 16's notebook on Colab's Python and Jupyter stack, headless.

    .venv/bin/python bench/colab_run.py [--python PYTHON] [--venv DIR] [--notebook notebooks/16-chapter.ipynb]

1. Creates a Python 3.12 virtual environment (`--python`, `PINB_COLAB_PYTHON`, else `python3.12` on PATH or a
   pyenv 3.12) with Colab's preinstalled Jupyter stack pinned (`COLAB_PINS` below);
2. installs pinb from this checkout as Colab would from its git URL (a plain, non-editable `pip install`) under
   those pins as constraints, so pip fails rather than upgrade one, and then checks that every pinned package is
   still at its pinned version;
3. executes a copy of the notebook in a folder outside the checkout (so the recorded verdicts come from the
   packaged snapshot, as on Colab) with nbclient and the venv's own kernel, on the stand-in, as papermill
   injects the parameters;
4. prints the figures (times, the pinned versions found, the claim outcomes by kind) as one JSON object, and exits
   0 when the notebook ran without an error outcome and no pin moved, 1 otherwise, 2 when it could not start.

The pins are those of Colab's runtime image with Python 3.12 (its `pip list`, 2025): the packages the notebooks
and pinb's Jupyter plumbing touch. One departure: Colab's pyzmq 24.0.1 is its own build; no 3.12 wheel of it is
published, so the nearest published wheel, 26.2.1, stands in (the kernel's transport, not what pinb uses).
The suite runs this only when asked: `PINB_COLAB_RUN=1 pytest tests/chapters/test_colab_run.py`.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Colab's preinstalled versions (Python 3.12 runtime) of what the notebook and its kernel use.
COLAB_PINS = {
    "ipykernel": "6.17.1",
    "ipython": "7.34.0",
    "ipywidgets": "7.7.1",
    "widgetsnbextension": "3.6.10",
    "jupyter-client": "6.1.12",
    "jupyter-core": "5.7.2",
    "traitlets": "5.7.1",
    "tornado": "6.4.2",
    "pyzmq": "26.2.1",
    "notebook": "6.5.7",
    "nbformat": "5.10.4",
    "nbclient": "0.10.2",
    "pydantic": "2.11.7",
    "jsonschema": "4.24.0",
    "PyYAML": "6.0.2",
    "regex": "2024.11.6",
    "tqdm": "4.67.1",
    "requests": "2.32.3",
}

#: Run inside the venv: inject the parameters as papermill does, execute with nbclient, print the outcomes.
EXECUTE = r"""
import json, sys, time
import nbformat
from nbclient import NotebookClient
from papermill.parameterize import parameterize_notebook

path, folder = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
for cell in nb.cells:
    cell.metadata.setdefault("tags", [])
nb.metadata.setdefault("papermill", {})
nb = parameterize_notebook(nb, {"backend": "standin", "artifacts_dir": folder + "/artifacts"})
started = time.monotonic()
error = ""
try:
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": folder}}).execute()
except Exception as exc:
    error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
mime = "application/vnd.pinb.claim+json"
outcomes = [o["data"][mime] for c in nb.cells for o in c.get("outputs", []) if mime in o.get("data", {})]
nbformat.write(nb, folder + "/executed.ipynb")
print(json.dumps({"seconds": round(time.monotonic() - started, 1), "error": error, "outcomes": outcomes}))
"""


def find_python(given: str | None) -> str | None:
    """A Python 3.12: the one given, `python3.12` on PATH, or a pyenv 3.12."""
    candidates = [given] if given else []
    candidates += [shutil.which("python3.12") or ""]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(glob.glob(str(pyenv / "3.12*" / "bin" / "python")), reverse=True)
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.stdout.strip() == "True":
            return candidate
    return None


def pip(venv: Path, *args: str) -> None:
    """`pip install` in the venv; its warnings are kept back unless it fails."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args], capture_output=True, text=True
    )
    if done.returncode != 0:
        print(done.stderr[-4000:], file=sys.stderr)
        done.check_returncode()


def installed(venv: Path) -> dict[str, str]:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    )
    return {key(item["name"]): item["version"] for item in json.loads(done.stdout)}


def key(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503): `ruamel.yaml` and `ruamel_yaml` are `ruamel-yaml`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="the Python 3.12 to use (default: PINB_COLAB_PYTHON, python3.12, pyenv)")
    parser.add_argument("--venv", type=Path, help="where to make the venv (default: a temporary folder, removed)")
    parser.add_argument("--notebook", type=Path, default=REPO / "notebooks" / "16-chapter.ipynb", help="the notebook")
    args = parser.parse_args(argv)
    python = find_python(args.python or os.environ.get("PINB_COLAB_PYTHON"))
    if python is None:
        print("no Python 3.12 found: pass --python or set PINB_COLAB_PYTHON", file=sys.stderr)
        return 2
    if not args.notebook.is_file():
        print(f"no notebook at {args.notebook}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="pinb-colab-"))
    venv = args.venv or work / "venv"
    figures: dict[str, object] = {"python": python}
    try:
        started = time.monotonic()
        if not (venv / "bin" / "python").exists():
            subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pins = work / "colab-pins.txt"
        pins.write_text("".join(f"{name}=={version}\n" for name, version in COLAB_PINS.items()), encoding="utf-8")
        pip(venv, "-r", str(pins))
        figures["stack_seconds"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        source = work / "pinb"  # a copy, as a git clone would be: the build never writes into the checkout
        shutil.copytree(
            REPO,
            source,
            ignore=shutil.ignore_patterns(".venv", ".git", "runs", "reference", "node_modules", "*.egg-info", "build"),
        )
        pip(venv, "-c", str(pins), str(source))
        figures["pinb_install_seconds"] = round(time.monotonic() - started, 1)
        found = installed(venv)
        moved = {name: found.get(key(name)) for name, version in COLAB_PINS.items() if found.get(key(name)) != version}
        figures["pins_moved"] = moved
        figures["added_by_pinb"] = {
            name: found.get(name) for name in ("pinb", "papermill", "hypothesis", "ruamel-yaml")
        }
        checked = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"], capture_output=True, text=True)
        figures["pip_check"] = checked.stdout.strip().splitlines()[-1] if checked.stdout.strip() else ""
        figures["python_version"] = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        folder = work / "colab"
        folder.mkdir()
        shutil.copy(args.notebook, folder / args.notebook.name)
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", EXECUTE, str(folder / args.notebook.name), str(folder)],
            capture_output=True,
            text=True,
            cwd=folder,
        )
        if done.returncode != 0 or not done.stdout.strip():
            figures["error"] = (done.stderr.strip().splitlines() or ["the executor printed nothing"])[-1]
            print(json.dumps(figures, indent=1))
            return 1
        ran = json.loads(done.stdout.strip().splitlines()[-1])
        counts: dict[str, int] = {}
        for outcome in ran["outcomes"]:
            counts[outcome["outcome"]] = counts.get(outcome["outcome"], 0) + 1
        figures |= {
            "notebook": args.notebook.name,
            "execute_seconds": ran["seconds"],
            "execution_error": ran["error"],
            "outcomes": counts,
        }
        print(json.dumps(figures, indent=1))
        return 0 if not ran["error"] and not moved and not counts.get("error") and ran["outcomes"] else 1
    except subprocess.CalledProcessError as exc:
        figures["error"] = f"{' '.join(map(str, exc.cmd[:6]))} … exited {exc.returncode}"
        print(json.dumps(figures, indent=1))
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
