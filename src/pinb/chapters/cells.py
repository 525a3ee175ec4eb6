"""Code cells a chapter's notebook may show under a claim (its pictures), as source text for `notebooks/build.py`.

A chapter's `notebook.py` names them per claim (`PICTURES`); each reads the `obs` the claim's check returned.
"""

from __future__ import annotations

TREE = """\
if obs.shown.get("entries"):
    display(views.display_tree(obs.shown["entries"], obs.shown["leaf"]))"""

REQUESTS = """\
if obs.traces:
    for name, trace in obs.traces.items():
        display(views.display_requests(trace, title=name))"""

SYSTEM_PROMPT_LADDER = """\
if obs.shown.get("base"):
    for rung in ("base", "with_context", "appended", "replaced", "skills"):
        display(views.display_text(f"system prompt: {rung}", obs.shown[rung]))"""


def timeline(name: str) -> str:
    """The event timeline of the claim's scenario `name`."""
    return f"if obs.traces:\n    display(views.display_timeline(obs.trace({name!r})))"


__all__ = ["REQUESTS", "SYSTEM_PROMPT_LADDER", "TREE", "timeline"]
