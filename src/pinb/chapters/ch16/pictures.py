"""Chapter 16's own pictures: the guard corpus as a table."""

from __future__ import annotations

from collections import Counter
from html import escape

from pinb.chapters.ch16.experiments import corpus_table
from pinb.chapters.display import Shown, table_html
from pinb.chapters.properties import Trace
from pinb.chapters.views import WHITESPACE_KEY, visible_whitespace


def corpus_shown(trace: Trace) -> Shown:
    """The corpus table under `guard.not-unconditional`: one row per corpus case (its whitespace shown), what it
    destroys, this run's verdict, JavaScript's; above it, counts that add up to the number of rows."""
    rows = corpus_table(trace)
    cells = [
        (
            f'<code style="white-space:pre-wrap">{escape(visible_whitespace(r["command"]))}</code>',
            escape(r["tool"]),
            escape(r["destroys"]),
            "no result" if r["run_blocked"] is None else "blocked" if r["run_blocked"] else "<b>ALLOWED</b>",
            "blocked" if r["js_blocked"] else "allowed",
            escape(r["note"]),
        )
        for r in rows
    ]
    headers = (
        f"command ({WHITESPACE_KEY})",
        "tool",
        "what it destroys",
        "this run",
        "JavaScript (Node)",
        "why",
    )
    return Shown(corpus_counts(rows), html=f"<div>{escape(corpus_counts(rows))}</div>" + table_html(headers, cells))


def corpus_counts(rows: list[dict[str, object]]) -> str:
    """`41 corpus cases (…): this run blocked 17, allowed 24, …; of the 38 destructive ones it blocked 15 and
    allowed 23, …; of the 3 harmless ones it blocked 2 (false positives)` — each split sums to its whole."""

    def split(part: list[dict[str, object]]) -> tuple[int, int, int]:
        blocked = sum(1 for r in part if r["run_blocked"] is True)
        allowed = sum(1 for r in part if r["run_blocked"] is False)
        return blocked, allowed, len(part) - blocked - allowed

    harmless = [r for r in rows if str(r["destroys"]).startswith("nothing")]
    destructive = [r for r in rows if r not in harmless]
    tools = ", ".join(f"{n} through {t}" for t, n in Counter(str(r["tool"]) for r in rows).items())
    (b, a, n), (db, da, dn), (hb, ha, hn) = split(rows), split(destructive), split(harmless)
    return (
        f"guard corpus: {len(rows)} cases ({tools}): this run blocked {b}, allowed {a}, gave no result for {n}; "
        f"of the {len(destructive)} destructive ones it blocked {db}, allowed {da}, gave no result for {dn}; "
        f"of the {len(harmless)} harmless ones it blocked {hb} (false positives), allowed {ha}, no result {hn}"
    )
