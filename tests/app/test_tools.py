"""Simulated bash and read tools against real Pi 1.6.0's tools (golden/pi-tool-results.json, written by
golden/make_pi_tool_results.mjs; no Node here), and proof that they never touch the host."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pinb.agent.types import AgentToolResult
from pinb.ai.abort import AbortController
from pinb.app.resources import VirtualFS
from pinb.app.tools import BashOutcome, BashScript, create_bash_tool, create_read_tool
from pinb.errors import UsageError

GOLDEN: dict[str, Any] = json.loads((Path(__file__).parent / "golden" / "pi-tool-results.json").read_text("utf-8"))

FILES = VirtualFS(
    {
        "/project/README.md": "# Demo\ncafé ☕\n\tindented\n",
        "/project/ten.txt": "\n".join(f"line {i}" for i in range(1, 11)),
        "/project/empty.txt": "",
    }
)
READ_PARAMS = {
    "small": {"path": "README.md"},
    "absolute": {"path": "/project/README.md"},
    "at_prefix": {"path": "@README.md"},
    "limit": {"path": "ten.txt", "limit": 3},
    "offset_limit": {"path": "ten.txt", "offset": 4, "limit": 2},
    "offset_tail": {"path": "ten.txt", "offset": 9},
    "offset_beyond": {"path": "ten.txt", "offset": 20},
    "empty": {"path": "empty.txt"},
    "missing": {"path": "nope.md"},
    "missing_absolute": {"path": "/nonexistent-pinb/x.md"},
}
# What the commands of the golden's bash cases print on a real shell, scripted here.
BASH_SCRIPT = (
    BashScript()
    .on("echo hello", "hello\n")
    .on("printf 'a\\nb'", "a\nb", chunks=("a\n", "b"))
    .on("true", "")
    .on("echo oops; exit 3", "oops\n", 3)
    .on("exit 1", "", 1)
    .on("echo out; echo err 1>&2", "out\nerr\n", chunks=("out\n", "err\n"))
)
BASH_COMMANDS = {
    "echo": "echo hello",
    "printf_no_newline": "printf 'a\\nb'",
    "silent": "true",
    "exit_code": "echo oops; exit 3",
    "exit_silent": "exit 1",
    "stderr": "echo out; echo err 1>&2",
}


async def run(tool: Any, params: dict[str, Any], signal: Any = None) -> dict[str, Any]:
    updates: list[dict[str, Any]] = []

    def on_update(result: AgentToolResult) -> None:
        content = [block.model_dump(by_alias=True, exclude_none=True) for block in result.content]
        updates.append({"content": content, "details": result.details})

    try:
        result = tool.execute("call", params, signal, on_update)
        if hasattr(result, "__await__"):
            result = await result
    except Exception as exc:
        return {"ok": False, "error": str(exc)}
    out = {
        "ok": True,
        "content": [block.model_dump(by_alias=True, exclude_none=True) for block in result.content],
        "details": result.details,
        "isError": bool(result.is_error),
        "structuredContent": result.structured_content,
    }
    if tool.name == "bash":
        out["updates"] = updates
    return out


def test_definitions_match_pi() -> None:
    for tool in (create_bash_tool(), create_read_tool(FILES)):
        expected = GOLDEN["definitions"][tool.name]
        assert (tool.name, tool.label, tool.description) == (
            expected["name"],
            expected["label"],
            expected["description"],
        )
        assert json.dumps(tool.parameters) == json.dumps(expected["parameters"])  # key order too


@pytest.mark.parametrize("name", list(READ_PARAMS))
async def test_read_matches_pi(name: str) -> None:
    assert await run(create_read_tool(FILES), READ_PARAMS[name]) == GOLDEN["read"][name]


@pytest.mark.parametrize("name", list(BASH_COMMANDS))
async def test_bash_matches_pi(name: str) -> None:
    assert await run(create_bash_tool(BASH_SCRIPT), {"command": BASH_COMMANDS[name]}) == GOLDEN["bash"][name]


async def test_bash_records_commands_and_unscripted_default() -> None:
    calls: list = []
    tool = create_bash_tool(BashScript().on(re.compile(r"^git status"), "clean\n"), calls)
    await run(tool, {"command": "git status --short"})
    await run(tool, {"command": "make", "timeout": 5})
    assert [(c.command, c.timeout, c.scripted) for c in calls] == [
        ("git status --short", None, True),
        ("make", 5, False),
    ]
    assert tool.calls is calls


@pytest.mark.parametrize(
    ("outcome", "error"),
    [
        (BashOutcome("partial", timed_out_after=2), "partial\n\nCommand timed out after 2 seconds"),
        (BashOutcome("", timed_out_after=1.5), "Command timed out after 1.5 seconds"),
        (BashOutcome("x", exit_code=None), "x\n\nCommand terminated without an exit code"),
    ],
)
async def test_bash_failures_throw_like_pi(outcome: BashOutcome, error: str) -> None:
    script = BashScript(default=outcome)
    assert await run(create_bash_tool(script), {"command": "anything"}) == {"ok": False, "error": error}


async def test_bash_abort() -> None:
    controller = AbortController()
    controller.abort()
    result = await run(create_bash_tool(), {"command": "sleep 10"}, signal=controller.signal)
    assert result == {"ok": False, "error": "Command aborted"}


def test_oversized_scripted_output_is_refused() -> None:
    with pytest.raises(UsageError, match="does not model Pi's output truncation"):
        BashOutcome("x\n" * 2000)


async def test_read_directory_and_home() -> None:
    fs = VirtualFS({"/home/user/notes.txt": "n", "/project/dir/a.txt": "a"})
    assert (await run(create_read_tool(fs), {"path": "~/notes.txt"}))["content"][0]["text"] == "n"
    assert await run(create_read_tool(fs), {"path": "dir"}) == {
        "ok": False,
        "error": "EISDIR: illegal operation on a directory, read",
    }


async def test_simulated_tools_leave_the_host_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    sentinel = tmp_path / "sentinel"
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    tool = create_bash_tool(BashScript().on(re.compile("."), ""))
    for command in (f"touch {sentinel}", f"rm -rf {victim}", f"rm -rf {tmp_path}", f"echo x > {victim / 'keep.txt'}"):
        result = await run(tool, {"command": command})
        assert result["ok"] and result["content"][0]["text"] == "(no output)"
    assert not sentinel.exists()
    assert (victim / "keep.txt").read_text() == "precious"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert [call.command for call in tool.calls][:2] == [f"touch {sentinel}", f"rm -rf {victim}"]
