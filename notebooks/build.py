"""Write every chapter's notebook from its ledger (no outputs): one section per claim, in ledger order.

Run from the repository root: `python notebooks/build.py` (add `--check` to fail when a committed notebook differs
from what this script writes, apart from what running and saving it in Jupyter adds: outputs, execution counts,
cell and kernel metadata; `--chapter ID` to build one chapter; `--root DIR` for a project elsewhere). The
chapters are the registry's (`pinb.chapters.registry`); what a notebook shows besides its claims (knobs, pictures,
widgets) comes from the chapter folder's optional `notebook.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from pinb.backends import PI_MODELLED_VERSION, PI_RELEASES
from pinb.chapters import registry
from pinb.chapters.diagram import is_sequence_diagram, mermaid_block
from pinb.chapters.ledger import Ledger
from pinb.claims import Claim

ROOT = Path(__file__).resolve().parent.parent

PARAMETERS = """\
# Parameters (papermill and `pinb verify` inject their values in a cell right after this one).
backend = "standin"  # "standin" (pinb's Python stand-in) or "pi" (the real Pi packages, through Node)
pi_version = "{pi_version}"  # for backend "pi": {pi_versions}
install_pi_packages = False  # for backend "pi": install Node 22 and the pinned Pi packages if missing
artifacts_dir = None  # where the traces are written (set by pinb verify)
pinb_pip_spec = {pip_spec}  # Colab: where to install pinb from when it is not importable (a git URL or a wheel)
counterfactual = ""  # "first" or a fault name: also show each claim's verdict under a stand-in fault (not recorded)
witnesses = 0  # generated witnesses per property claim besides the hand-written one, seeded (pinb verify: 5)
{knobs}
"""

HOW_TO = """\
## How to use this notebook

Each claim is one **card**: the book's sentence, one line on what the experiment does, and a table with a column
per backend — this run (on the backend chosen in the parameters cell below), then every backend's recorded run —
whose rows are the **verdict**, the value the sentence makes us **expect**, the value the trace **shows**, the
**premise** (what in the witness puts the sentence to the test) and what the check **covers**. The verdicts:
OBSERVED (the sentence held; "partial: not covered: …" names what the check leaves untested), CONTRADICTED (a
finding: it did not; shown as a red banner on whichever backend said it), NOT EXERCISED (the scenarios never put
the sentence to the test), ERROR (the experiment raised) or UNRUN (with the reason). The scenario steps, the
timeline, each witness's verdict and the raw trace are folded under the card's "steps, timeline and trace" line.

- Scenarios are data: `card.experiment.scenarios[...]` is what the card ran; change an entry and check again
  with it, `card = await cards.check("<claim id>", card.experiment)`, to watch the verdict follow (an edited
  run says so in its evidence). An edit that removes what the sentence speaks of (one extension where it speaks
  of several) says NOT EXERCISED, never OBSERVED.
- The parameters cell chooses the backend (`standin`, or `pi` for the real Pi packages through Node) and the
  experiments' knobs; `counterfactual = "first"` also shows what each check would say had Pi behaved otherwise.
- Headless, `pinb verify {chapter}` runs this notebook with papermill and records the run.
"""

# Right under the title: what the recorded runs found, so the first screen says what the book gets wrong.
FINDINGS_MAP = """\
# What the recorded runs found, findings first (the sections below check each claim live).
try:
    from IPython.display import display

    from pinb.chapters.findings import show_findings
    from pinb.kit.recorded import recorded_verdicts
except ModuleNotFoundError:  # on Colab, a cell below installs pinb
    print("pinb is not installed yet: run the cells below (they install it), then this one")
else:
    display(show_findings({chapter!r}, recorded_verdicts({chapter!r})))
"""

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
README_START, README_END = "<!-- colab:start -->", "<!-- colab:end -->"

# After the parameters, so that an injected `pinb_pip_spec` is the one installed.
INSTALL = """\
# On Colab, install pinb when it is not importable; everywhere else this does nothing.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("pinb") is None:
    if "google.colab" not in sys.modules:
        raise ModuleNotFoundError("pinb is not installed in this kernel: `pip install -e .` in the pinb checkout")
    if not pinb_pip_spec:
        raise ValueError(
            "pinb is not on PyPI: set pinb_pip_spec in the parameters cell to the pinb repository's git URL "
            "(git+https://github.com/<owner>/<repo>) or to an uploaded wheel, then run the notebook again"
        )
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", pinb_pip_spec], check=True)
"""

SETUP = """\
from IPython.display import display

from pinb.chapters import views, widgets
from pinb.chapters.card import Cards
from pinb.chapters.experiments import ChapterRun

if backend == "pi":
    from pinb.scenario import reference

    if not reference.is_installed(pi_version):
        if not install_pi_packages:
            raise RuntimeError(f"Pi {{pi_version}} is not installed: set install_pi_packages = True or run "
                               f"`pinb reference install --pi-version {{pi_version}}`")
        reference.install(pi_version, progress=print)

from pinb.kit.recorded import recorded_verdicts

recorded = recorded_verdicts({chapter!r})  # other backends' recorded runs, shown under each live verdict
run = ChapterRun(
    {chapter!r},
    backend,
    pi_version,
    knobs=dict({knob_names}),
    artifacts_dir=artifacts_dir,
    recorded=recorded,
    witnesses=witnesses,
)
cards = Cards(run)  # `await cards.check(claim_id)` checks one claim and shows its card
print("checking", {chapter!r}, "on", run.label)
if counterfactual:  # off by default: each check also shows what it would say had Pi behaved otherwise
    from pinb.testing.counterfactual import attach

    attach(run, counterfactual)
"""


DIAGRAM_NOTE = (
    "*The part of the book's sequence diagram this claim quotes, one statement per line as Mermaid draws it (the "
    "`sequenceDiagram` header is added so it draws):*"
)


def _quoted(quote: str) -> str:
    """A quote as a block quote; a piece of the book's sequence diagram as a Mermaid diagram, line by line."""
    if is_sequence_diagram(quote):
        return f"{DIAGRAM_NOTE}\n\n{mermaid_block(quote)}"
    return "\n".join(f"> {line}" if line else ">" for line in quote.splitlines())


def _reported(spec: Claim) -> str:
    """A reported claim: its quote, where it is, and why nothing here runs it."""
    quoted = "\n>\n".join(_quoted(q) for q in spec.quotes)
    return f"{quoted}\n\n*{spec.location}* · `{spec.id}` — **reported, not run**: {spec.reason}."


def _card_cell(spec: Claim, pictures: dict[str, list[str]]) -> Any:
    """One code cell per runnable claim: it checks the claim and shows its card (the quote is in the card)."""
    own = pictures.get(spec.id, [])
    if not own:
        return new_code_cell(f"card = await cards.check({spec.id!r})")
    drawn = "\n".join("    " + line if line else "" for source in own for line in source.splitlines())
    return new_code_cell(
        f"card = await cards.check({spec.id!r}, show=False)\n"
        "obs = card.observation\n"
        "with card.pictures():  # drawn inside the card's details\n"
        f"{drawn}\n"
        "card.show()"
    )


def _sections(ledger: Ledger) -> list[tuple[str, list[Claim]]]:
    """Claims grouped by the section their location names (in ledger order)."""
    grouped: dict[str, list[Claim]] = {}
    for spec in ledger.claims:
        grouped.setdefault(ledger.section_of(spec), []).append(spec)
    return list(grouped.items())


def _literal(value: object) -> str:
    """A knob's default as Python source: strings in double quotes, as the rest of the cell writes them."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _parameters(knobs: dict[str, tuple[object, str]], repository: str | None) -> str:
    lines = [f"{name} = {_literal(value)}  # {what}" for name, (value, what) in knobs.items()]
    versions = ", or ".join(
        f"{r.version}" + ("" if "app" in r.layers else " (agent-core claims only)") for r in PI_RELEASES
    )
    return PARAMETERS.format(
        knobs="\n".join(lines),
        pi_version=PI_MODELLED_VERSION,
        pi_versions=versions,
        pip_spec=json.dumps(f"git+{repository}" if repository else ""),
    )


def repository_url(root: Path) -> str | None:
    """The repository's public location, `[project.urls] Repository` in pyproject.toml (None until it is set)."""
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    url = str(project.get("urls", {}).get("Repository", "")).strip().rstrip("/")
    return url.removesuffix(".git") if url.startswith("https://github.com/") else None


def colab_url(repository: str, notebook: str) -> str:
    """Colab's address for a notebook of a GitHub repository (its default branch, `main`)."""
    return f"https://colab.research.google.com/github/{repository.removeprefix('https://github.com/')}/blob/main/{notebook}"


def colab_badge(repository: str, notebook: str) -> str:
    return f"[![Open In Colab]({BADGE_IMAGE})]({colab_url(repository, notebook)})"


def colab_block(repository: str | None, chapters: list[registry.ChapterFolder]) -> str:
    """The README's Colab section body: one badge per notebook, or the one line to set until there is a URL."""
    if repository is None:
        return (
            "Open-in-Colab badges appear here once the repository's public location is set: add "
            '`Repository = "https://github.com/<owner>/<repo>"` under `[project.urls]` in `pyproject.toml`, then '
            "run `python notebooks/build.py` (it also makes that URL each notebook's default `pinb_pip_spec`).\n"
        )
    return "".join(
        f"- {colab_badge(repository, c.ledger.notebook)} `{c.ledger.notebook}` — {c.ledger.title}\n" for c in chapters
    )


def chapter_notebook(found: registry.ChapterFolder, repository: str | None = None) -> Any:
    """The notebook of one chapter, from its ledger and its folder's optional `notebook.py`."""
    ledger = found.ledger
    shown = found.module("notebook")
    knobs: dict[str, tuple[object, str]] = dict(getattr(shown, "KNOBS", {}))
    pictures: dict[str, list[str]] = dict(getattr(shown, "PICTURES", {}))
    extra: list[tuple[str, str]] = list(getattr(shown, "EXTRA_CELLS", []))
    title = f"# {ledger.title} — the claims, checked" + (f"\n\n{ledger.intro}" if ledger.intro else "")
    badge = f"\n\n{colab_badge(repository, ledger.notebook)}" if repository else ""
    parameters = new_code_cell(_parameters(knobs, repository).rstrip("\n") + "\n")
    parameters.metadata["tags"] = ["parameters"]
    knob_names = ", ".join(f"{name}={name}" for name in knobs)
    setup = [
        new_code_cell(FINDINGS_MAP.format(chapter=ledger.id)),
        new_code_cell(INSTALL),
        new_code_cell(SETUP.format(chapter=ledger.id, knob_names=knob_names)),
    ]
    for cell in setup:  # the reader sees their outputs; the code is one click away (JupyterLab; Colab's form view)
        cell.metadata["jupyter"] = {"source_hidden": True}
        cell.metadata["cellView"] = "form"
    cells = [new_markdown_cell(title + badge), setup[0], new_markdown_cell(HOW_TO.format(chapter=ledger.id))]
    cells += [parameters, *setup[1:]]
    for title, specs in _sections(ledger):
        # one markdown cell per section: its heading, then the claims it reports but nothing here can run
        reported = [_reported(spec) for spec in specs if spec.kind == "reported"]
        cells.append(new_markdown_cell("\n\n".join([f"## {title}", *reported])))
        cells.extend(_card_cell(spec, pictures) for spec in specs if spec.kind != "reported")
    cells.extend(new_markdown_cell(source) if kind == "markdown" else new_code_cell(source) for kind, source in extra)
    cells.append(new_markdown_cell("## What this run found\n\nThe counts, the claims that did not hold, every claim."))
    cells.append(new_code_cell("cards.summary()"))
    notebook = new_notebook(cells=cells)
    notebook.metadata.update(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pinb": {"chapter": ledger.id},
        }
    )
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{ledger.number}-{index:03d}"
    return notebook


def render(notebook: Any) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def _unexecuted(text: str) -> object:
    """What a notebook says apart from what running and saving it in Jupyter writes: each cell's type, source and
    tags, and the notebook's `pinb` metadata (None where the text is not a notebook)."""
    try:
        nb = json.loads(text)
        return {
            "pinb": nb.get("metadata", {}).get("pinb"),
            "cells": [
                {
                    "type": cell.get("cell_type"),
                    "source": "".join(cell["source"]) if isinstance(cell.get("source"), list) else cell.get("source"),
                    "tags": cell.get("metadata", {}).get("tags", []),
                }
                for cell in nb["cells"]
            ],
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _same(path: Path, content: str) -> bool:
    if not path.exists():
        return False
    committed = path.read_text(encoding="utf-8")
    if committed == content:
        return True
    shown = _unexecuted(committed) if path.suffix == ".ipynb" else None
    return shown is not None and shown == _unexecuted(content)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed notebook is out of date")
    parser.add_argument("--chapter", action="append", default=[], metavar="ID", help="build only this chapter")
    parser.add_argument("--root", type=Path, default=ROOT, help="the project the notebook paths are relative to")
    args = parser.parse_args(argv)
    found = registry.folders()
    unknown = [chapter_id for chapter_id in args.chapter if chapter_id not in found]
    if unknown:
        print(f"unknown chapter(s): {', '.join(unknown)} (known: {', '.join(found)})", file=sys.stderr)
        return 2
    repository = repository_url(args.root)
    outputs: dict[Path, str] = {}
    for chapter_id, chapter in found.items():
        if args.chapter and chapter_id not in args.chapter:
            continue
        notebook = chapter_notebook(chapter, repository)
        nbformat.validate(notebook)
        outputs[args.root / chapter.ledger.notebook] = render(notebook)
    readme = args.root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if README_START in text and README_END in text:
        before, _, rest = text.partition(README_START)
        after = rest.partition(README_END)[2]
        block = colab_block(repository, list(found.values()))
        outputs[readme] = f"{before}{README_START}\n{block}{README_END}{after}"
    stale = []
    for path, content in outputs.items():
        if args.check:
            if not _same(path, content):
                stale.append(path.relative_to(args.root).as_posix())
            elif path.read_text(encoding="utf-8") != content:
                print(
                    f"{path.relative_to(args.root).as_posix()}: up to date, with outputs of a Jupyter session "
                    "(harmless; python notebooks/build.py clears them)",
                    file=sys.stderr,
                )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    if stale:
        print("out of date (run python notebooks/build.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
