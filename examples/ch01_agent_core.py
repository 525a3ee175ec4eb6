"""Chapter 01's program: the agent core, run with no provider and no terminal.

The same program as the book's TypeScript listing, written against pinb: a scripted faux model, one tool
(word_count), an Agent, and a listener that prints the three lines the book shows:

    stop: toolUse
    tool: word_count {"words":4}
    stop: stop
"""

from __future__ import annotations

from typing import Any

from pinb._async import run_sync
from pinb.agent import Agent, AgentInitialState, AgentTool, AgentToolResult
from pinb.ai import FauxProvider, TextContent, faux_assistant_message, faux_text, faux_tool_call, js_stringify

# The provider layer: a scripted stand-in for a model.
faux = FauxProvider()


# A tool is a name, a schema and an execute(). Nothing here knows about Pi.
def count_words(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    n = len(params["text"].split())
    return AgentToolResult(content=(TextContent(text=str(n)),), details={"words": n})


word_count = AgentTool(
    name="word_count",
    label="Word Count",
    description="Count the words in a string.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    execute=count_words,
)

# Turn 1 asks for the tool. Turn 2 answers from its result.
faux.set_responses(
    [
        faux_assistant_message([faux_tool_call("word_count", {"text": "the quick brown fox"})], stop_reason="toolUse"),
        faux_assistant_message([faux_text("Four words.")]),
    ]
)

# The agent core: loop, messages, state, tool execution, events.
agent = Agent(
    initial_state=AgentInitialState(system_prompt="You count words.", model=faux.get_model(), tools=[word_count]),
    stream_fn=faux.stream,
)


def show(event: Any, signal: Any) -> None:
    if event.type == "tool_execution_end":
        print("tool:", event.tool_name, js_stringify(event.result.details))
    if event.type == "message_end" and event.message.role == "assistant":
        print("stop:", event.message.stop_reason)


agent.subscribe(show)

if __name__ == "__main__":
    run_sync(agent.prompt("How many words in 'the quick brown fox'?"))
