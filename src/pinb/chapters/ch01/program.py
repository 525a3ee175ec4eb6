"""Chapter 01's program (the book names it examples/ch01-agent-core/agent-core.ts), taken from the chapter text.

The program is the subject of the `example.*` claims: run as printed by Node on the pi backend. It is read from
the book directory at run time, from its first import to the line that prompts the agent; pinb keeps no copy.
"""

from __future__ import annotations

from pathlib import Path

from pinb.chapters.book import chapter_text, printed_code
from pinb.chapters.ledger import LEDGER_FILE, load_ledger

NAME = "ch01-agent-core"
FIRST_LINE = 'import { Agent, type AgentTool } from "'
LAST_LINE = "await agent.prompt("


def program() -> str | None:
    """The program as the chapter prints it, or None when the chapter text is not available."""
    text = chapter_text(load_ledger(Path(__file__).with_name(LEDGER_FILE)))
    return None if text is None else printed_code(text.text, FIRST_LINE, LAST_LINE)
