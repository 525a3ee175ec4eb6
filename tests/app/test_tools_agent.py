"""The simulated tools inside pinb.agent's loop: a scripted model runs destructive commands; nothing happens."""

from __future__ import annotations

from pathlib import Path

from pinb.agent import Agent, AgentInitialState
from pinb.ai.faux import FauxProvider, faux_assistant_message, faux_tool_call
from pinb.ai.types import ToolResultMessage
from pinb.app.resources import VirtualFS
from pinb.app.tools import BashScript, create_bash_tool, create_read_tool


async def test_agent_runs_simulated_tools_without_touching_the_host(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    keep = tmp_path / "keep.txt"
    keep.write_text("precious")
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("bash", {"command": f"touch {sentinel}"}, id="c1"),
                    faux_tool_call("bash", {"command": f"rm -rf {tmp_path}"}, id="c2"),
                    faux_tool_call("read", {"path": "README.md"}, id="c3"),
                    faux_tool_call("read", {"path": "missing.md"}, id="c4"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Done."),
        ]
    )
    bash = create_bash_tool(BashScript().on(f"rm -rf {tmp_path}", "", 0))
    read = create_read_tool(VirtualFS({"/project/README.md": "# Demo\n"}))
    agent = Agent(
        initial_state=AgentInitialState(system_prompt="test", model=faux.get_model(), tools=[bash, read]),
        stream_fn=faux.stream,
    )
    await agent.prompt("Clean up.")
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert results["c1"].content[0].text == "(no output)" and not results["c1"].is_error
    assert results["c3"].content[0].text == "# Demo\n"
    assert results["c4"].is_error
    assert results["c4"].content[0].text == "ENOENT: no such file or directory, access '/project/missing.md'"
    assert [call.command for call in bash.calls] == [f"touch {sentinel}", f"rm -rf {tmp_path}"]
    assert not sentinel.exists() and keep.read_text() == "precious"
    faux.assert_complete()
