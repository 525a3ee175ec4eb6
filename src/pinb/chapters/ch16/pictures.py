"""Chapter 16's own pictures: the guard corpus as a table."""

from __future__ import annotations

from html import escape

from pinb.chapters.ch16.experiments import corpus_table
from pinb.chapters.display import Shown, code, table_html
from pinb.chapters.experiments import Trace


def corpus_shown(trace: Trace) -> Shown:
    """The corpus table under `guard.not-unconditional`: each command, what it destroys, this run's verdict."""
    rows = corpus_table(trace)
    cells = [
        (
            code(r["command"]),
            escape(r["tool"]),
            escape(r["destroys"]),
            "no result" if r["run_blocked"] is None else "blocked" if r["run_blocked"] else "<b>ALLOWED</b>",
            "blocked" if r["js_blocked"] else "allowed",
            escape(r["note"]),
        )
        for r in rows
    ]
    headers = ("command", "tool", "what it destroys", "this run", "JavaScript (Node)", "why")
    allowed = sum(1 for r in rows if r["run_blocked"] is False and not r["destroys"].startswith("nothing"))
    return Shown(
        f"guard corpus: {len(rows)} commands, {allowed} destructive ones allowed", html=table_html(headers, cells)
    )
