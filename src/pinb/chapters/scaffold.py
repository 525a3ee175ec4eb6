"""`pinb chapter new`: a new chapter's folder, with an empty ledger that validates and an experiments module.

Adding a chapter touches only its folder (and, once built, its notebook): the registry discovers the folder by
its `ledger.yaml`, so no list elsewhere has to learn about it. docs/authoring.md walks an author from here to
committed runs and a report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pinb.chapters as _package
from pinb.chapters.book import book_dir
from pinb.chapters.ledger import LEDGER_FILE, load_ledger
from pinb.errors import UsageError

NUMBER_RE = re.compile(r"^(?:[0-9]{1,3}|[A-Z])$")

LEDGER_TEMPLATE = """\
# Chapter {number}, "{title}": every claim of the chapter text, quoted with where it stands.
#
# One entry per claim (see docs/authoring.md):
#
# - id: {prefix}.<topic>.<slug>          # stable; lowercase slugs separated by dots
#   quote: The sentence, verbatim.        # or a list of passages; checked against the chapter text
#   location: Section heading ¶2         # where it stands
#   experiment: <topic>.<slug>           # a name in experiments.py's EXPERIMENTS (runnable claims)
#   backends: [standin, pi]              # who can check it (default: both)
#   layer: app                           # agent (pi-agent-core alone), app (a session) or package
#   notes: [what the experiment covers and does not]
#
# - id: {prefix}.<topic>.<slug>
#   quote: A sentence nothing here can observe.
#   location: Section heading ¶3
#   kind: reported
#   reason: why it cannot be run
id: {chapter_id}
number: '{number}'
title: {title_yaml}
notebook: notebooks/{number}-chapter.ipynb
text:
  file: {text_file}
intro: ''
sections: []
claims: []
"""

INIT_TEMPLATE = '''"""Chapter {number}, "{title}".

Its ledger (`ledger.yaml`), its experiments (`experiments.py`) and what its notebook shows (`notebook.py`).
"""
'''

EXPERIMENTS_TEMPLATE = '''"""Chapter {number}'s experiments, by the names its ledger gives them.

Each runnable claim is a property (`pinb.chapters.properties`): a premise, an expected value from the witness's
own scenarios or the chapter's text (never from a constant the stand-in also uses), an observed value from the
traces, and a family of generated witnesses. Scenario builders: `pinb.chapters.scenarios`; trace queries:
`pinb.chapters.tq` (docs/authoring.md, "The modules you need").
"""

from __future__ import annotations

from pinb.chapters.properties import Experiment

#: Experiment name (as the ledger's `experiment:` names it) -> experiment.
EXPERIMENTS: dict[str, Experiment] = {{}}
'''

NOTEBOOK_TEMPLATE = '''"""What chapter {number}'s notebook shows besides its claims (all optional)."""

from __future__ import annotations

#: Parameters a reader may change (papermill can inject them): name -> (default, what it is).
KNOBS: dict[str, tuple[object, str]] = {{}}
#: Claim id -> code cells drawn under its check (see `pinb.chapters.cells`).
PICTURES: dict[str, list[str]] = {{}}
#: Cells after the claims: ("markdown" | "code", source).
EXTRA_CELLS: list[tuple[str, str]] = []
'''


@dataclass(frozen=True)
class Scaffolded:
    chapter_id: str
    folder: Path
    notebook: str
    files: tuple[Path, ...]


def _yaml_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def new_chapter(number: str, title: str, text_file: str, into: Path | None = None) -> Scaffolded:
    """Create `ch<number>/` in `into` (default: the pinb.chapters package folder); UsageError when it cannot."""
    if not NUMBER_RE.match(number):
        raise UsageError(f"chapter number {number!r}: use the number as printed, e.g. 02, 16 or A")
    number = number.zfill(2) if number.isdigit() else number
    if not title.strip() or "\n" in title:
        raise UsageError("the chapter title is one line of text")
    if Path(text_file).name != text_file or not text_file.strip():
        raise UsageError(f"--text {text_file!r}: name the chapter's file inside the book directory, not a path")
    folder_book = book_dir()
    if folder_book is not None and not (folder_book / text_file).is_file():
        raise UsageError(f"the book directory {folder_book} has no {text_file}")
    base = Path(into) if into is not None else Path(_package.__path__[0])
    if not base.is_dir():
        raise UsageError(f"chapters folder {base} is not a folder")
    folder = base / f"ch{number.lower()}"
    if folder.exists():
        raise UsageError(f"{folder} already exists")
    chapter_id = f"pi-{number.lower()}-chapter"
    values = {
        "number": number,
        "title": title,
        "title_yaml": _yaml_string(title),
        "chapter_id": chapter_id,
        "prefix": f"pi-{number.lower()}",
        "text_file": text_file,
    }
    contents = {
        "__init__.py": INIT_TEMPLATE.format(**values),
        LEDGER_FILE: LEDGER_TEMPLATE.format(**values),
        "experiments.py": EXPERIMENTS_TEMPLATE.format(**values),
        "notebook.py": NOTEBOOK_TEMPLATE.format(**values),
    }
    folder.mkdir(parents=True)
    for name, text in contents.items():
        (folder / name).write_text(text, encoding="utf-8")
    ledger = load_ledger(folder / LEDGER_FILE)  # the empty ledger validates
    return Scaffolded(chapter_id, folder, ledger.notebook, tuple(folder / name for name in contents))


__all__ = ["Scaffolded", "new_chapter"]
