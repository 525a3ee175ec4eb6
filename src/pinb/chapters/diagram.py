"""The book's sequence diagram, from the flattened text a quote holds back to Mermaid lines.

The chapter's plain-text snapshot runs the diagram's lines together (`U->>P: submit a prompt P->>H: input …`). A
Mermaid sequence diagram is one statement per line, and each statement starts in a way the messages between them do
not (`P->>H:`, `loop`, `alt`, `else`, `end`, `Note over`), so the line breaks can be put back. The result has the
quote's words in the quote's order, only the whitespace between them differs: the quote still verifies.
"""

from __future__ import annotations

import re

#: Where a statement of a sequence diagram starts: an arrow message, a block keyword, a note, a participant.
_STATEMENT = re.compile(
    r"(?<!\S)(?=(?:[A-Za-z]\w*\s*-{1,2}[>x)]{1,2}\+?-?\s*[A-Za-z]\w*\s*:|loop\b|alt\b|else\b|opt\b|end(?!\S)"
    r"|Note\s+(?:over|left of|right of)\b|participant\b|actor\b))"
)
_OPENS = ("loop", "alt", "opt")
_INDENT = "    "


def is_sequence_diagram(text: str) -> bool:
    """Whether the text is (part of) a Mermaid sequence diagram: it starts with a statement and has an arrow."""
    flat = " ".join(text.split())
    return bool(_STATEMENT.match(flat)) and "->>" in flat


def diagram_lines(text: str) -> list[str]:
    """The statements of a flattened sequence diagram, one per line, indented inside `loop`/`alt`/`opt` blocks."""
    flat = " ".join(text.split())
    starts = [match.start() for match in _STATEMENT.finditer(flat)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    parts = [flat[a:b].strip() for a, b in zip(starts, [*starts[1:], len(flat)], strict=True)]
    lines, depth = [], 0
    for part in (p for p in parts if p):
        word = part.split()[0]
        if word in ("end", "else"):
            depth = max(depth - 1, 0)
        lines.append(_INDENT * depth + part)
        if word in (*_OPENS, "else"):
            depth += 1
    return lines


def mermaid_block(text: str) -> str:
    """A fenced Mermaid block JupyterLab draws (and any Markdown viewer shows line by line)."""
    body = "\n".join(_INDENT + line for line in diagram_lines(text))
    return f"```mermaid\nsequenceDiagram\n{body}\n```"


__all__ = ["diagram_lines", "is_sequence_diagram", "mermaid_block"]
