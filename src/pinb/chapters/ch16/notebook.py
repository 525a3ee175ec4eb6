"""What chapter 16's notebook shows besides the claims: its knobs, the pictures, the guard tester and explorers."""

from __future__ import annotations

from pinb.chapters import cells

#: Parameters a reader may change (papermill can inject them): name → (default, what it is).
KNOBS: dict[str, tuple[object, str]] = {
    "guard_command": ("git push --force origin main", "what the guard tester checks first"),
    "tool_ms": (30, "how long the simulated tools sleep"),
    "handler_ms": (50, "how long the slow handler sleeps"),
    "loop_limit": (6, "the probe's own stop for an unconditional continuation"),
}

CORPUS_TABLE = """\
if obs.traces:
    from pinb.chapters.ch16.pictures import corpus_shown

    display(corpus_shown(obs.trace("corpus")))"""

#: Claim id → code cells drawn under its check.
PICTURES: dict[str, list[str]] = {
    "pi-16.guard.not-unconditional": [CORPUS_TABLE],
    "pi-16.run.sequence-diagram": [cells.timeline("shape"), cells.REQUESTS],
    "pi-16.run.tool-calls-concurrent": [cells.timeline("parallel")],
    "pi-16.run.continuation-branch": [cells.timeline("settle-continue")],
    "pi-16.guard.confirm-with-ui": [cells.timeline("ui-yes")],
}

#: Cells after the claims: ("markdown" | "code", source).
EXTRA_CELLS: list[tuple[str, str]] = [
    (
        "markdown",
        "## Try the guard\n\nType a command: the book's three patterns decide, on `JSON.stringify(input)` as in "
        "JavaScript. Run headless, the tester shows its verdict for the `guard_command` parameter.",
    ),
    (
        "code",
        "from pinb.chapters.ch16.widgets import GuardTester\n\ntester = widgets.record(GuardTester(guard_command))",
    ),
    ("markdown", "## Explore a run\n\nStep through the sequence-diagram run, filtered by source."),
    (
        "code",
        "from pinb.chapters import scenarios\n\n"
        "shape = await run.run(scenarios.run_shape())\n"
        "explorer = widgets.record(widgets.TimelineExplorer(shape))",
    ),
    (
        "markdown",
        "Edit the guard scenario's script or handlers and rerun it on the stand-in: the answer gives the verdict of "
        "the claim it belongs to (`pi-16.guard.blocks-force-push`) on the edited run, marked as an edit.",
    ),
    (
        "code",
        "from pinb.chapters.ch16.guard import guard_extension\n\n"
        "guard_scenario = scenarios.app(\n"
        "    'playground-guard', 'Push my branch.',\n"
        "    [scenarios.calls(scenarios.call('bash', {'command': guard_command})), scenarios.text('Done.')],\n"
        "    tools=[scenarios.bash_tool()], extensions=[guard_extension()],\n"
        ")\n"
        "# The claim this scenario belongs to; its property judges an edited witness through run.check.\n"
        "claim = 'pi-16.guard.blocks-force-push'\n"
        "playground = widgets.ScenarioPlayground(guard_scenario, claim=claim)\n"
        "playground = widgets.record(playground)\nlines = await playground.rerun()",
    ),
]
