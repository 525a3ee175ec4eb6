"""Write notebooks/01-chapter.ipynb and notebooks/16-chapter.ipynb from the chapter ledgers (no outputs).

Run from the repository root: `python notebooks/build.py` (add `--check` to fail when a committed notebook differs
from what this script writes). The notebooks are generated so that every claim of the ledger gets its section and
the notebooks stay reviewable as this one readable source.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from pinb.chapters import ch01, ch16
from pinb.chapters._claimspec import ClaimSpec

HERE = Path(__file__).resolve().parent

PARAMETERS = """\
# Parameters (papermill and `pinb verify` inject their values in a cell right after this one).
backend = "standin"  # "standin" (pinb's Python stand-in) or "pi" (the real Pi packages, through Node)
pi_version = "1.6.0"  # for backend = "pi": 1.6.0, or 1.0.3 (agent-core claims only)
install_pi_packages = False  # backend = "pi": install Node 22 and the pinned Pi packages if missing
artifacts_dir = None  # where the traces are written (set by pinb verify)
pinb_pip_spec = ""  # Colab: where to install pinb from when it is not importable (a git URL or a wheel)
{knobs}
"""

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
from IPython.display import HTML, display

from pinb.chapters import views, widgets
from pinb.chapters.experiments import ChapterRun

if backend == "pi":
    from pinb.scenario import reference

    if not reference.is_installed(pi_version):
        if not install_pi_packages:
            raise RuntimeError(f"Pi {{pi_version}} is not installed: set install_pi_packages = True or run "
                               f"`pinb reference install --pi-version {{pi_version}}`")
        reference.install(pi_version, progress=print)

run = ChapterRun({chapter!r}, backend, pi_version, knobs=dict({knob_names}), artifacts_dir=artifacts_dir)
print("checking", {chapter!r}, "on", run.label)
"""


def _quote(spec: ClaimSpec) -> str:
    quoted = "\n".join(f"> {line}" if line else ">" for line in spec.quote.splitlines())
    where = f"*{spec.location}* · `{spec.id}` · {spec.kind}"
    if spec.kind == "reported":
        return f"{quoted}\n\n{where} — **reported, not run**: {spec.reason}."
    notes = "".join(f"\n\nNote: {note}." for note in spec.notes)
    return f"{quoted}\n\n{where} · checked on: {', '.join(spec.backends)}{notes}"


def _claim_cells(spec: ClaimSpec, extra: dict[str, list[str]]) -> list[Any]:
    cells = [new_markdown_cell(_quote(spec))]
    cells.append(new_code_cell(f"obs = await run.check({spec.id!r})"))
    for source in extra.get(spec.id, []):
        cells.append(new_code_cell(source))
    return cells


def _sections(claims: tuple[ClaimSpec, ...], headings: dict[str, str]) -> list[tuple[str, list[ClaimSpec]]]:
    """Claims grouped by the section their location names (in ledger order)."""
    grouped: dict[str, list[ClaimSpec]] = {}
    for spec in claims:
        section = next((title for prefix, title in headings.items() if spec.location.startswith(prefix)), "Other")
        grouped.setdefault(section, []).append(spec)
    return list(grouped.items())


TREE_PICTURE = """\
if obs.shown.get("entries"):
    display(views.display_tree(obs.shown["entries"], obs.shown["leaf"]))"""
REQUESTS_PICTURE = """\
if obs.traces:
    for name, trace in obs.traces.items():
        display(HTML(f"<h4>{name}</h4>"), views.display_requests(trace))"""
TIMELINE_PICTURE = """\
if obs.traces:
    display(views.display_timeline(obs.trace({name!r})))"""
CORPUS_TABLE = """\
if obs.traces:
    from html import escape

    from pinb.chapters.exp16 import corpus_table

    rows = corpus_table(obs.trace("corpus"))
    body = "".join(
        f"<tr><td><code>{escape(r['command'])}</code></td><td>{r['tool']}</td><td>{escape(r['destroys'])}</td>"
        f"<td>{'blocked' if r['run_blocked'] else 'ALLOWED'}</td><td>{'blocked' if r['js_blocked'] else 'allowed'}</td>"
        f"<td>{escape(r['note'])}</td></tr>"
        for r in rows
    )
    display(HTML("<table border=1 cellpadding=3 style='border-collapse:collapse;text-align:left'>"
                 "<tr><th>command</th><th>tool</th><th>what it destroys</th><th>this run</th>"
                 "<th>JavaScript (Node)</th><th>why</th></tr>" + body
                 + "</table>"))"""
LADDER_PICTURE = """\
if obs.shown.get("base"):
    for rung in ("base", "with_context", "appended", "replaced", "skills"):
        display(HTML(f"<details><summary>system prompt: {rung}</summary><pre style='white-space:pre-wrap'>"
                     f"{obs.shown[rung]}</pre></details>"))"""

BOOK_RUN_PICTURE = """\
if obs.shown.get("book_example"):  # pi: the book's program, run as printed
    ran = obs.shown["book_example"]
    print(f"$ {' '.join(ran['command'])}    # Node {ran['node']}, Pi {ran['pi_version']}: exit code {ran['exit_code']}")
    print(ran["stdout"] + "\\n".join(ran["stderr_head"]))
elif obs.traces:  # standin: what the Python port printed
    from pinb.chapters.exp01 import example_lines

    print("\\n".join(example_lines(obs.trace("word-count"))))"""


def chapter_01() -> Any:
    knobs = (
        'injected_sentence = "Remember: the user prefers short answers."  # what the extension inserts\n'
        'steer_text = "Also check the logs."  # the steering message queued while a tool runs\n'
        "tool_ms = 30  # how long the simulated tools sleep\n"
        'settle_entry = "Check the plan."  # the entry an agent_before_settle handler proposes\n'
        'compaction_summary = "The user asked two questions."  # the summary of the compaction probe'
    )
    knob_names = (
        "injected_sentence=injected_sentence, steer_text=steer_text, tool_ms=tool_ms, "
        "settle_entry=settle_entry, compaction_summary=compaction_summary"
    )
    headings = {
        "One turn": "One turn",
        "Four inputs": "Four inputs, one request",
        "What is the active branch": "What is the active branch?",
        "The turn is not the run": "The turn is not the run",
        "Queued messages": "Queued messages",
        "Where the context comes from": "Where the context comes from",
        "The loop, as a drawing": "The loop, as a drawing",
        "Why this chapter is first": "Why this chapter is first",
        "What kind of thing": "What kind of thing the loop is",
        "Replaceability": "Replaceability is not isolation",
        "The agent core": "The agent core, run with no provider and no terminal",
        "Representation": "Representation crossing a boundary is not responsibility crossing it",
        "Where the layer boundary": "Where the layer boundary actually is",
        "The same test": "The same test on any assembly-to-execution pipeline",
    }
    extra = {
        "pi-01.loop.request-four-inputs": [REQUESTS_PICTURE],
        "pi-01.inputs.neither-changes-other": [REQUESTS_PICTURE],
        "pi-01.loop.turn-shape": [TIMELINE_PICTURE.format(name="two-tools")],
        "pi-01.tree.branches-survive-edits": [TREE_PICTURE],
        "pi-01.compaction.entries-stay": [TREE_PICTURE],
        "pi-01.context.skill-descriptions-always": [LADDER_PICTURE],
        "pi-01.queue.steering-after-turn": [TIMELINE_PICTURE.format(name="steering")],
        "pi-01.settle.permission-sequence": [TIMELINE_PICTURE.format(name="settle-continue")],
        "pi-01.example.three-lines": [BOOK_RUN_PICTURE],
    }
    intro = (
        f"# {ch01.TITLE} — the claims, checked\n\n"
        "Chapter 01 of *Pi Agents*, claim by claim. Each section quotes the chapter, runs an experiment on the "
        'chosen backend, draws what happened and records whether the sentence held. `backend = "standin"` runs '
        'pinb\'s Python stand-in of Pi; `backend = "pi"` runs the same scenarios on the real npm packages through '
        "Node. A claim a backend cannot check is marked UNRUN for that backend, with the reason; reported claims "
        "(the book reports them, nothing here can run them) are listed with theirs."
    )
    widgets_cells = [
        new_markdown_cell("## Explore\n\nStep through the example's trace, or edit its script and rerun it."),
        new_code_cell(
            "from pinb.chapters import scenarios\n\n"
            "example = await run.run(scenarios.word_count('agent'))\n"
            "explorer = widgets.record(widgets.TimelineExplorer(example))"
        ),
        new_code_cell(
            "playground = widgets.ScenarioPlayground(scenarios.word_count('agent'))\n"
            "await playground.rerun()\nwidgets.record(playground)"
        ),
    ]
    return _notebook(ch01, intro, PARAMETERS.format(knobs=knobs), knob_names, headings, extra, widgets_cells)


def chapter_16() -> Any:
    knobs = (
        'guard_command = "git push --force origin main"  # what the guard tester checks first\n'
        "tool_ms = 30  # how long the simulated tools sleep\n"
        "handler_ms = 50  # how long the slow handler sleeps\n"
        "loop_limit = 6  # the probe's own stop for an unconditional continuation"
    )
    knob_names = "tool_ms=tool_ms, handler_ms=handler_ms, loop_limit=loop_limit"
    headings = {
        "Opening": "Opening: what a tool_call guard can do",
        "How events dispatch": "How events dispatch",
        "The shape of a run": "The shape of a run",
        "Two boundaries": "Two boundaries",
        "The events that change behaviour": "The events that change behaviour",
        "The guard": "The guard",
    }
    extra = {
        "pi-16.guard.not-unconditional": [CORPUS_TABLE],
        "pi-16.run.sequence-diagram": [TIMELINE_PICTURE.format(name="shape"), REQUESTS_PICTURE],
        "pi-16.run.tool-calls-concurrent": [TIMELINE_PICTURE.format(name="parallel")],
        "pi-16.run.continuation-branch": [TIMELINE_PICTURE.format(name="settle-continue")],
        "pi-16.guard.confirm-with-ui": [TIMELINE_PICTURE.format(name="ui-yes")],
    }
    intro = (
        f"# {ch16.TITLE} — the claims, checked\n\n"
        "Chapter 16 of *Pi Agents* (the excerpt in its research brief), claim by claim: the dispatch rules, the "
        "shape of a run, the two settlement boundaries, the events table and the review guard. Each section quotes "
        "the chapter, runs an experiment on the chosen backend, draws it and records whether the sentence held. "
        "The guard tester at the end answers for any command you type, with JavaScript's JSON and regex semantics."
    )
    widgets_cells = [
        new_markdown_cell(
            "## Try the guard\n\nType a command: the book's three patterns decide, on `JSON.stringify(input)` as in "
            "JavaScript. Run headless, the tester shows its verdict for the `guard_command` parameter."
        ),
        new_code_cell("tester = widgets.record(widgets.GuardTester(guard_command))"),
        new_markdown_cell("## Explore a run\n\nStep through the sequence-diagram run, filtered by source."),
        new_code_cell(
            "from pinb.chapters import scenarios\n\n"
            "shape = await run.run(scenarios.run_shape())\n"
            "explorer = widgets.record(widgets.TimelineExplorer(shape))"
        ),
        new_markdown_cell("Edit the guard scenario's script or handlers and rerun it on the stand-in."),
        new_code_cell(
            "guard_scenario = scenarios.app(\n"
            "    'playground-guard', 'Push my branch.',\n"
            "    [scenarios.calls(scenarios.call('bash', {'command': guard_command})), scenarios.text('Done.')],\n"
            "    tools=[scenarios.bash_tool()], extensions=[scenarios.guard_extension()],\n"
            ")\n"
            "playground = widgets.ScenarioPlayground(guard_scenario)\n"
            "await playground.rerun()\nwidgets.record(playground)"
        ),
    ]
    return _notebook(ch16, intro, PARAMETERS.format(knobs=knobs), knob_names, headings, extra, widgets_cells)


def _notebook(
    module: Any,
    intro: str,
    parameters_source: str,
    knob_names: str,
    headings: dict[str, str],
    extra: dict[str, list[str]],
    widgets_cells: list[Any],
) -> Any:
    parameters = new_code_cell(parameters_source)
    parameters.metadata["tags"] = ["parameters"]
    cells = [parameters, new_code_cell(INSTALL), new_markdown_cell(intro)]
    cells.append(new_code_cell(SETUP.format(chapter=module.CHAPTER_ID, knob_names=knob_names)))
    for title, specs in _sections(module.CLAIMS, headings):
        cells.append(new_markdown_cell(f"## {title}"))
        for spec in specs:
            cells.extend(_claim_cells(spec, extra))
    cells.extend(widgets_cells)
    cells.append(new_markdown_cell("## What this run found\n\nEvery claim of the ledger, with its outcome here."))
    cells.append(new_code_cell("run.summary()"))
    notebook = new_notebook(cells=cells)
    notebook.metadata.update(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pinb": {"chapter": module.CHAPTER_ID},
        }
    )
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{module.NUMBER}-{index:03d}"
    return notebook


def render(notebook: Any) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed notebook is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, build in (("01-chapter.ipynb", chapter_01), ("16-chapter.ipynb", chapter_16)):
        notebook = build()
        nbformat.validate(notebook)
        text = render(notebook)
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python notebooks/build.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
