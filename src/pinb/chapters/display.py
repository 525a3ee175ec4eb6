"""What a notebook output carries: every picture and table with a plain-text line of its own, tables that read
left to right under JupyterLab's styles, and SVG that static viewers (GitHub, nbviewer) can show.

IPython's `HTML(...)` object leaves `<IPython.core.display.HTML object>` as its plain text, which is what a
reader sees in any viewer that does not render HTML; `Shown` says what the output is instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

#: JupyterLab right-aligns table cells in rendered HTML; each cell states its own alignment so that does not apply.
CELL_STYLE = "text-align:left;vertical-align:top;padding:3px 6px;border:1px solid #d0d7de"
TABLE_STYLE = "border-collapse:collapse;margin:4px 0"


@dataclass(frozen=True)
class Shown:
    """One notebook output: its plain text, and optionally HTML and a standalone SVG of the same thing."""

    text: str
    html: str | None = None
    svg: str | None = None

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        bundle = {"text/plain": self.text}
        if self.html is not None:
            bundle["text/html"] = self.html
        if self.svg is not None:
            bundle["image/svg+xml"] = self.svg
        return bundle

    def __repr__(self) -> str:
        return self.text


def cell(content: str, *, header: bool = False, nowrap: bool = False) -> str:
    """One table cell whose content is already HTML."""
    tag = "th" if header else "td"
    style = CELL_STYLE + (";white-space:nowrap" if nowrap else "")
    return f'<{tag} style="{style}">{content}</{tag}>'


def code(text: str) -> str:
    """An identifier or command that must not wrap mid-word."""
    return f'<code style="white-space:nowrap">{escape(text)}</code>'


def table_html(headers: Sequence[str], rows: Iterable[Sequence[str]], css_class: str = "pinb-table") -> str:
    """A table of already-escaped HTML cells, left-aligned, with a header row."""
    head = "".join(cell(escape(h), header=True) for h in headers)
    body = "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in rows)
    return (
        f'<table class="{css_class}" style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


__all__ = ["CELL_STYLE", "TABLE_STYLE", "Shown", "cell", "code", "table_html"]
