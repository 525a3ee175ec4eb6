"""The fault switchboard: off by default, on only inside `injected`, everything restored afterwards."""

from __future__ import annotations

import pytest

from pinb import _faults
from pinb.agent import loop, tool_execution
from pinb.app.extensions.runner import ExtensionRunner
from pinb.app.session import AgentSession
from pinb.errors import UsageError
from pinb.testing import faults


def _state() -> dict[str, object]:
    return {
        "snapshot": ExtensionRunner.__dict__["_snapshot"],
        "emit": ExtensionRunner.__dict__["emit"],
        "parallel": tool_execution._parallel,
        "run_loop": loop._run_loop,
        "execute": loop.execute_tool_calls,
        "settled_override": "_emit_agent_settled" in AgentSession.__dict__,
    }


def test_no_fault_is_on_unless_injected() -> None:
    assert not _faults.ACTIVE


@pytest.mark.parametrize("name", sorted(faults.FAULTS))
def test_each_fault_is_restored_after_its_block(name: str) -> None:
    before = _state()
    with faults.injected(name):
        assert name in _faults.ACTIVE
    assert _state() == before
    assert not _faults.ACTIVE


def test_restored_even_when_the_block_raises() -> None:
    before = _state()
    with pytest.raises(RuntimeError), faults.injected("handlers-reverse-order", "tool-batches-sequential"):
        assert tool_execution._parallel is not before["parallel"]
        raise RuntimeError("boom")
    assert _state() == before


def test_a_module_function_is_swapped_where_it_was_imported_too() -> None:
    from pinb.app import resources, system_prompt

    original = resources.load_project_context_files
    importers = [m for m in (system_prompt,) if getattr(m, "load_project_context_files", None) is original]
    with faults.injected("agents-md-not-loaded"):
        assert resources.load_project_context_files is not original
        assert all(m.load_project_context_files is resources.load_project_context_files for m in importers)
    assert resources.load_project_context_files is original


def test_unknown_fault_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown fault"), faults.injected("no-such-fault"):
        pass


def test_every_fault_says_how_it_deviates_from_pi() -> None:
    for fault in faults.FAULTS.values():
        assert fault.deviation and fault.name == fault.name.lower()
