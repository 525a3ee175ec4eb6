from __future__ import annotations

import pytest

from pinb.chapters import views

from .traces import guard_trace, parallel_tools_trace, session_entries, word_count_trace


@pytest.mark.parametrize(
    ("line", "lane"),
    [
        ({"source": "driver", "type": "prompt"}, "you"),
        ({"source": "agent", "type": "turn_start"}, "pi"),
        ({"source": "session", "type": "tool_execution_end"}, "tools"),
        ({"source": "ext", "type": "tool_call"}, "handlers"),
        ({"source": "model", "type": "request"}, "model"),
        ({"source": "meta", "type": "scenario"}, None),
    ],
)
def test_lane_of(line: dict, lane: str | None) -> None:
    assert views.lane_of(line) == lane


def test_parallel_tools_overlap_and_sequential_do_not() -> None:
    parallel = views.tool_spans(parallel_tools_trace(parallel=True))
    assert [(s.tool_call_id, s.slot) for s in parallel] == [("call#1", 0), ("call#2", 1)]
    assert views.max_concurrency(parallel_tools_trace(parallel=True)) == 2
    sequential = views.tool_spans(parallel_tools_trace(parallel=False))
    assert [s.slot for s in sequential] == [0, 0]
    assert views.max_concurrency(parallel_tools_trace(parallel=False)) == 1


def test_unfinished_tool_span_has_no_end() -> None:
    trace = [
        line
        for line in parallel_tools_trace()
        if not (line["type"] == "tool_execution_end" and line["toolCallId"] == "call#1")
    ]
    spans = {s.tool_call_id: s for s in views.tool_spans(trace)}
    assert spans["call#1"].end is None and spans["call#2"].end is not None


def test_timeline_svg_has_one_event_per_visible_line() -> None:
    trace = word_count_trace()
    svg = views.timeline_svg(trace)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    visible = views.visible_lines(trace)
    assert svg.count('class="event"') == len(visible)
    assert 'class="event"' in views.timeline_svg(trace, include_stream=True)
    assert views.timeline_svg(trace, include_stream=True).count('class="event"') == len(visible) + 1
    assert svg.count('class="tool-span"') == 1


def test_timeline_filters_sources_and_highlights() -> None:
    svg = views.timeline_svg(guard_trace(), sources=["ext"], highlight=13)
    assert svg.count('class="event"') == 1 and 'data-lane="handlers"' in svg and "#fbbc04" in svg


def test_event_label_names_handler_and_result() -> None:
    line = guard_trace()[12]
    label = views.event_label(line)
    assert label.startswith("review-guard/guard: tool_call bash call#1 → ")


def test_request_inputs_reads_model_lines_and_meta() -> None:
    requests = views.request_inputs(guard_trace(), system_prompts={1: "You are a coding assistant."})
    assert [r.n for r in requests] == [1, 2]
    assert requests[0].system_prompt == "You are a coding assistant." and requests[1].system_prompt is None
    assert requests[1].tools == ("bash",)
    assert [m["role"] for m in requests[1].branch] == ["system", "user", "assistant", "toolResult"]
    assert requests[0].settings == {} and requests[0].ran_on.startswith("pi@1.6.0")  # trace metadata, not settings
    html = views.request_inspector_html(requests)
    assert html.count("<tr><td") == 2 and html.count("not traced") == 3  # request 1's system prompt, both settings
    assert f"recorded on {requests[0].ran_on}" in html
    # request 1: both messages are new; request 2: the assistant reply and the tool result
    assert html.count("background:#e6f4ea") == 4


def test_tree_nodes_marks_active_branch_and_compaction() -> None:
    entries, leaf = session_entries()
    nodes = {n.id: n for n in views.tree_nodes(entries, leaf)}
    assert set(nodes) == {"a", "b", "c", "c2", "d", "k", "e"}
    assert {i for i, n in nodes.items() if n.active} == {"a", "b", "c2", "d", "k", "e"}
    assert not nodes["c"].active
    assert {i for i, n in nodes.items() if n.compacted} == {"a", "b"}
    assert nodes["c"].depth == nodes["c2"].depth == 1
    html = views.session_tree_html(entries, leaf)
    assert html.count('class="entry') == 7 and html.count("(compacted)") == 2


def test_tree_without_compaction_compacts_nothing() -> None:
    entries, _ = session_entries()
    nodes = views.tree_nodes(entries, "c")
    assert not any(n.compacted for n in nodes)
    assert {n.id for n in nodes if n.active} == {"a", "b", "c"}
