"""Chapter 01's program (the book names it examples/ch01-agent-core/agent-core.ts), taken from the chapter text.

The program is the subject of the `example.*` claims: run as printed by Node on the pi backend. It is read from
the book directory at run time, from its first import to the line that prompts the agent; pinb keeps no copy.
"""

from __future__ import annotations

import re
from pathlib import Path

from pinb.chapters.book import chapter_text, printed_code
from pinb.chapters.ledger import LEDGER_FILE, load_ledger
from pinb.errors import UsageError

NAME = "ch01-agent-core"
FIRST_LINE = 'import { Agent, type AgentTool } from "'
LAST_LINE = "await agent.prompt("


#: The claim whose quote is what the program prints.
OUTPUT_CLAIM = "pi-01.example.three-lines"
OUTPUT_INTRO = "This program prints:"


def printed_output() -> list[str]:
    """The lines the chapter says the program prints, from the quote of `pi-01.example.three-lines` (checked
    against the chapter text whenever it is available); each line starts with `stop:` or `tool:`. The claim is the
    registry's, read with its chapter's ledger once (`registry.refresh()` reads an edited ledger again)."""
    from pinb.chapters.registry import claim

    try:
        text = claim(OUTPUT_CLAIM).text
    except KeyError:
        text = ""
    if OUTPUT_INTRO not in text:
        raise UsageError(f"chapter 01's ledger has no claim {OUTPUT_CLAIM} quoting {OUTPUT_INTRO!r}")
    printed = text.split(OUTPUT_INTRO, 1)[1]
    return [line.strip() for line in re.split(r"(?=\b(?:stop|tool): )", printed) if line.strip()]


def program() -> str | None:
    """The program as the chapter prints it, or None when the chapter text is not available."""
    text = chapter_text(load_ledger(Path(__file__).with_name(LEDGER_FILE)))
    return None if text is None else printed_code(text.text, FIRST_LINE, LAST_LINE)
