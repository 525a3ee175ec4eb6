"""What chapter 01's notebook shows besides the claims: its knobs, the pictures under some claims, the widgets."""

from __future__ import annotations

from pinb.chapters import cells

#: Parameters a reader may change (papermill can inject them): name → (default, what it is).
KNOBS: dict[str, tuple[object, str]] = {
    "injected_sentence": ("Remember: the user prefers short answers.", "what the extension inserts"),
    "steer_text": ("Also check the logs.", "the steering message queued while a tool runs"),
    "tool_ms": (30, "how long the simulated tools sleep"),
    "settle_entry": ("Check the plan.", "the entry an agent_before_settle handler proposes"),
    "compaction_summary": ("The user asked two questions.", "the summary of the compaction probe"),
}

BOOK_RUN = """\
if obs.shown.get("book_example"):  # pi: the book's program, run as printed
    ran = obs.shown["book_example"]
    print(f"$ {' '.join(ran['command'])}    # Node {ran['node']}, Pi {ran['pi_version']}: exit code {ran['exit_code']}")
    print(ran["stdout"] + "\\n".join(ran["stderr_head"]))
elif obs.traces:  # standin: what the Python port printed
    from pinb.chapters.ch01.experiments import example_lines

    print("\\n".join(example_lines(obs.trace("word-count"))))"""

#: Claim id → code cells drawn under its check.
PICTURES: dict[str, list[str]] = {
    "pi-01.loop.request-four-inputs": [cells.REQUESTS],
    "pi-01.inputs.neither-changes-other": [cells.REQUESTS],
    "pi-01.loop.turn-shape": [cells.timeline("two-tools")],
    "pi-01.tree.branches-survive-edits": [cells.TREE],
    "pi-01.compaction.entries-stay": [cells.TREE],
    "pi-01.context.skill-descriptions-always": [cells.SYSTEM_PROMPT_LADDER],
    "pi-01.queue.steering-after-turn": [cells.timeline("steering")],
    "pi-01.settle.permission-sequence": [cells.timeline("settle-continue")],
    "pi-01.example.three-lines": [BOOK_RUN],
}

#: Cells after the claims: ("markdown" | "code", source).
EXTRA_CELLS: list[tuple[str, str]] = [
    ("markdown", "## Explore\n\nStep through the example's trace, or edit its script and rerun it."),
    (
        "code",
        "from pinb.chapters import scenarios\n\n"
        "example = await run.run(scenarios.word_count('agent'))\n"
        "explorer = widgets.record(widgets.TimelineExplorer(example))",
    ),
    (
        "code",
        "playground = widgets.ScenarioPlayground(scenarios.word_count('agent'))\n"
        "playground = widgets.record(playground)\nlines = await playground.rerun()",
    ),
]
