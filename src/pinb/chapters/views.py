"""Pictures of a run: an event timeline, a request inspector and a session-tree view.

Every function here is pure: trace lines (dicts in the trace format) or session entries in, an HTML/SVG string
out. `display_*` wrappers hand the same strings to IPython. Nothing here runs a scenario.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from math import ceil
from typing import Any

from pinb.chapters.display import TABLE_STYLE, Shown, cell, table_html

TraceLine = Mapping[str, Any]

LANES: tuple[str, ...] = ("you", "pi", "tools", "handlers", "model")
LANE_TITLES: dict[str, str] = {
    "you": "You",
    "pi": "Pi",
    "tools": "Tool calls",
    "handlers": "Handlers",
    "model": "Provider",
}
_LANE_COLOURS: dict[str, str] = {
    "you": "#e8f0fe",
    "pi": "#f1f3f4",
    "tools": "#fef7e0",
    "handlers": "#e6f4ea",
    "model": "#fce8e6",
}


#: The timelines' font size, and how wide a monospace character is at a given size (an upper bound: the common
#: monospace faces advance 0.6 em; every label's box is estimated with it, so the picture is made wide enough).
FONT_SIZE = 11
CHAR_EM = 0.62
#: Characters of an event label in a lane, and in the tools lane beside its bars.
LABEL_CHARS, TOOL_LABEL_CHARS = 34, 24


def text_width(text: str, size: float = FONT_SIZE) -> float:
    return len(text) * CHAR_EM * size


def lane_of(line: TraceLine) -> str | None:
    """The swimlane a trace line belongs to, or None for lines no lane shows (meta)."""
    source = line.get("source")
    if source == "driver":
        return "you"
    if source in ("agent", "session"):
        return "tools" if str(line.get("type", "")).startswith("tool_execution_") else "pi"
    if source in ("ext", "error"):
        return "handlers"
    if source == "model":
        return "model"
    return None


def event_label(line: TraceLine) -> str:
    """A short human label: the event type plus the one or two fields that tell lines apart."""
    kind = str(line.get("type", "?"))
    parts = [kind]
    if line.get("source") == "ext":
        parts.insert(0, f"{line.get('extension', '')}{'/' + line['handler'] if line.get('handler') else ''}:")
    if "role" in line:
        parts.append(str(line["role"]))
    if "toolName" in line:
        parts.append(str(line["toolName"]))
    if "toolCallId" in line and not kind.startswith("tool_execution_"):
        parts.append(str(line["toolCallId"]))
    if kind == "request":
        parts.append(f"#{line.get('n')}")
    if "stopReason" in line and kind == "message_end":
        parts.append(f"({line['stopReason']})")
    if line.get("isError"):
        parts.append("error")
    if "result" in line:
        parts.append("→ " + _short(line["result"]))
    if "error" in line and line.get("source") == "ext":
        parts.append("threw " + _short(line["error"]))
    if kind in ("prompt", "queue") and "text" in line:
        parts.append(repr(_short(line["text"], 30)))
    if kind == "queue" and "do" in line:
        parts.append(str(line["do"]))
    return " ".join(parts)


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else _compact_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact_json(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def visible_lines(lines: Iterable[TraceLine], include_stream: bool = False) -> list[TraceLine]:
    """The lines a picture shows: every line with a lane, stream lines only when asked for."""
    return [line for line in lines if lane_of(line) is not None and (include_stream or not line.get("stream", False))]


@dataclass(frozen=True)
class ToolSpan:
    """One tool execution, from its `tool_execution_start` row to its `tool_execution_end` row."""

    tool_call_id: str
    tool_name: str
    start: int
    end: int | None
    """Row of the end line; None when the trace never ends it (an aborted run)."""
    slot: int
    """Column inside the tools lane; spans that overlap get different slots."""
    is_error: bool = False


def tool_spans(lines: Sequence[TraceLine]) -> list[ToolSpan]:
    """Tool executions in `lines` (row = index into `lines`), each with a slot so overlapping ones sit side by side.

    Two executions overlap when one starts before the other ends: that is what "ran in parallel" looks like in a
    trace, which has no clock. Only one listener's lines are used (`agent` or else `session`), so a tool is not
    counted twice.
    """
    sources = {line.get("source") for line in lines if str(line.get("type", "")).startswith("tool_execution_")}
    source = "agent" if "agent" in sources else "session"
    open_spans: dict[str, tuple[int, str, int]] = {}
    done: list[ToolSpan] = []
    busy: set[int] = set()
    for row, line in enumerate(lines):
        if line.get("source") != source:
            continue
        kind = line.get("type")
        call_id = str(line.get("toolCallId", ""))
        if kind == "tool_execution_start":
            slot = next(i for i in range(len(busy) + 1) if i not in busy)
            busy.add(slot)
            open_spans[call_id] = (row, str(line.get("toolName", "")), slot)
        elif kind == "tool_execution_end" and call_id in open_spans:
            start, name, slot = open_spans.pop(call_id)
            busy.discard(slot)
            done.append(ToolSpan(call_id, name, start, row, slot, bool(line.get("isError"))))
    done.extend(ToolSpan(call_id, name, start, None, slot) for call_id, (start, name, slot) in open_spans.items())
    return sorted(done, key=lambda span: span.start)


def max_concurrency(lines: Sequence[TraceLine]) -> int:
    """The largest number of tool executions open at once (1 = strictly one after another, 0 = none)."""
    spans = tool_spans(lines)
    return max((span.slot + 1 for span in spans), default=0)


def timeline_svg(
    lines: Iterable[TraceLine],
    include_stream: bool = False,
    highlight: int | None = None,
    sources: Iterable[str] | None = None,
    title: str = "",
) -> str:
    """Swimlanes you · Pi · tool calls · handlers · provider, one row per trace line, top to bottom.

    Tool executions are drawn as bars from their start line to their end line in the tools lane; executions
    that were open at the same time get separate columns, so parallel calls show as overlapping bars.
    `highlight` is a `seq` to mark; `sources` restricts which trace sources are drawn.
    """
    wanted = set(sources) if sources is not None else None
    shown = [line for line in visible_lines(lines, include_stream) if wanted is None or line.get("source") in wanted]
    row_h, top, label_w, slot_w = 22, 46, 40, 60
    lane_w = ceil(8 + text_width("x" * LABEL_CHARS) + 8)
    spans = tool_spans(shown)
    slots = max((span.slot + 1 for span in spans), default=1)
    tools_w = max(lane_w, ceil(slots * slot_w + 12 + text_width("x" * TOOL_LABEL_CHARS) + 8))
    widths = {lane: (tools_w if lane == "tools" else lane_w) for lane in LANES}
    x0: dict[str, int] = {}
    x = label_w
    for lane in LANES:
        x0[lane] = x
        x += widths[lane]
    width, height = x + 10, top + row_h * max(len(shown), 1) + 20
    body: list[str] = []
    right = 0.0  # the right edge of the widest label: the picture is made wide enough to hold it
    for lane in LANES:
        body.append(
            f'<rect x="{x0[lane]}" y="0" width="{widths[lane]}" height="{height}" fill="{_LANE_COLOURS[lane]}" '
            f'stroke="#dadce0"/>'
            f'<text x="{x0[lane] + 8}" y="20" font-weight="bold" font-size="13">{escape(LANE_TITLES[lane])}</text>'
        )
        right = max(right, x0[lane] + 8 + text_width(LANE_TITLES[lane], 13))
    for span in spans:
        bx = x0["tools"] + 8 + span.slot * slot_w
        y1 = top + row_h * span.start
        y2 = top + row_h * (span.end if span.end is not None else len(shown) - 1) + row_h - 4
        colour = "#d93025" if span.is_error else "#f9ab00"
        body.append(
            f'<rect class="tool-span" data-call="{escape(span.tool_call_id)}" x="{bx}" y="{y1}" width="14" '
            f'height="{y2 - y1}" rx="4" fill="{colour}" opacity="0.55"><title>{escape(span.tool_name)} '
            f"{escape(span.tool_call_id)}</title></rect>"
        )
    for row, line in enumerate(shown):
        lane = lane_of(line)
        assert lane is not None
        y = top + row_h * row
        seq = line.get("seq", row + 1)
        marked = highlight is not None and seq == highlight
        if marked:
            body.append(f'<rect x="0" y="{y - 2}" width="{width}" height="{row_h}" fill="#fbbc04" opacity="0.35"/>')
        body.append(f'<text x="4" y="{y + 13}" fill="#5f6368">{escape(str(seq))}</text>')
        tx = x0[lane] + 8 + (slots * slot_w + 4 if lane == "tools" else 0)
        label = event_label(line)
        if lane == "tools":
            label = label.replace("tool_execution_", "")
        label = _short(label, LABEL_CHARS if lane != "tools" else TOOL_LABEL_CHARS)
        right = max(right, tx + text_width(label))
        colour = "#d93025" if line.get("isError") or "error" in line else "#202124"
        style = ' font-style="italic"' if line.get("stream") else ""
        body.append(
            f'<text class="event" data-seq="{escape(str(seq))}" data-lane="{lane}" x="{tx}" y="{y + 13}" '
            f'fill="{colour}"{style}>{escape(label)}'
            f"<title>{escape(_compact_json(dict(line)))}</title></text>"
        )
    width = max(width, ceil(right) + 6)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'preserveAspectRatio="xMinYMin meet" style="max-width:100%;height:auto" '
        f'font-family="monospace" font-size="{FONT_SIZE}" class="pinb-timeline">'
    )
    return head + (f"<title>{escape(title)}</title>" if title else "") + "".join(body) + "</svg>"


@dataclass(frozen=True)
class RequestInputs:
    """The four inputs of one model request, as far as a trace (plus optional extras) shows them."""

    n: int
    system_prompt: str | None
    """The system prompt's text; traces never carry it, so this is None unless it was supplied."""
    branch: tuple[Mapping[str, Any], ...]
    """The messages the model received (the active branch, after any context handlers)."""
    tools: tuple[str, ...]
    settings: Mapping[str, Any]
    """The model settings supplied with the trace (a scenario's); a trace's request line does not record them."""
    ran_on: str = ""
    """Where the trace was recorded (backend and versions, from its `meta` line): not a model setting."""


def request_inputs(
    lines: Iterable[TraceLine],
    system_prompts: Mapping[int, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> list[RequestInputs]:
    """One `RequestInputs` per `model` request line, in order.

    A trace's request line records messages and tools only: the model settings are the `settings` given (e.g. the
    scenario's), and where the trace was recorded (its `meta` line) is kept apart as `ran_on`.
    """
    base: dict[str, Any] = dict(settings or {})
    requests: list[RequestInputs] = []
    all_lines = list(lines)
    meta = next((line for line in all_lines if line.get("source") == "meta"), {})
    versions = meta.get("versions") if isinstance(meta.get("versions"), Mapping) else {}
    ran_on = ", ".join(
        [str(meta["backend"])] * ("backend" in meta) + [f"{name} {version}" for name, version in versions.items()]
    )
    for line in all_lines:
        if line.get("source") == "model" and line.get("type") == "request":
            n = int(line.get("n", len(requests) + 1))
            requests.append(
                RequestInputs(
                    n=n,
                    system_prompt=(system_prompts or {}).get(n),
                    branch=tuple(line.get("messages", ())),
                    tools=tuple(line.get("tools", ())),
                    settings=dict(base),
                    ran_on=ran_on,
                )
            )
    return requests


def _message_html(message: Mapping[str, Any], new: bool) -> str:
    role = str(message.get("role", "?"))
    bits = [f"<b>{escape(role)}</b>"]
    if "toolCallId" in message:
        bits.append(escape(str(message["toolCallId"])))
    if message.get("isError"):
        bits.append('<span style="color:#d93025">error</span>')
    if "text" in message:
        bits.append(escape(_short(message["text"], 120)))
    for call in message.get("toolCalls", ()) or ():
        bits.append(f"→ {escape(str(call.get('name')))}({escape(_short(call.get('args', {}), 60))})")
    style = "background:#e6f4ea;" if new else ""
    return f'<li style="{style}">{" ".join(bits)}</li>'


def request_inspector_html(requests: Sequence[RequestInputs]) -> str:
    """A table with one row per request and one column per input; messages new since the last request are green."""
    head = "".join(
        cell(escape(h), header=True) for h in ("#", "system prompt", "active branch", "tools", "model settings")
    )
    rows = []
    previous: tuple[Mapping[str, Any], ...] = ()
    for request in requests:
        same_prefix = request.branch[: len(previous)] == previous
        messages = "".join(
            _message_html(message, new=same_prefix and i >= len(previous)) for i, message in enumerate(request.branch)
        )
        system = (
            f"<pre style='white-space:pre-wrap;max-width:28em'>{escape(request.system_prompt)}</pre>"
            if request.system_prompt is not None
            else "<i>not traced</i>"
        )
        settings = "<br>".join(f"{escape(str(k))}: {escape(_short(v, 60))}" for k, v in request.settings.items())
        tools = escape(", ".join(request.tools)) or "<i>none</i>"
        cells = (str(request.n), system, f"<ol>{messages}</ol>", tools, settings or "<i>not traced</i>")
        rows.append("<tr>" + "".join(cell(c) for c in cells) + "</tr>")
        previous = request.branch
    ran_on = next((request.ran_on for request in requests if request.ran_on), "")
    caption = f"<caption style='text-align:left'>recorded on {escape(ran_on)}</caption>" if ran_on else ""
    return (
        f'<table class="pinb-requests" style="{TABLE_STYLE}">{caption}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


@dataclass(frozen=True)
class TreeNode:
    id: str
    parent_id: str | None
    type: str
    label: str
    depth: int
    active: bool
    """On the path from the root to the leaf (the active branch)."""
    compacted: bool
    """On the active branch, before the latest compaction's first kept entry: replaced by its summary in requests."""


def _entry_label(entry: Mapping[str, Any]) -> str:
    kind = str(entry.get("type", "?"))
    if kind == "message":
        message = entry.get("message", {}) or {}
        content = message.get("content")
        if isinstance(content, str):
            text = content
        else:
            text = "".join(
                block.get("text", "") for block in content or () if isinstance(block, Mapping) and "text" in block
            )
            calls = [
                block.get("name")
                for block in content or ()
                if isinstance(block, Mapping) and block.get("type") == "toolCall"
            ]
            if calls:
                text += " → " + ", ".join(str(c) for c in calls)
        return f"{message.get('role', '?')}: {_short(text, 60)}"
    if kind in ("compaction", "branch_summary"):
        return f"{kind}: {_short(entry.get('summary', ''), 60)}"
    if kind in ("custom", "custom_message"):
        return f"{kind} {entry.get('customType', '')}"
    return kind


def tree_nodes(entries: Sequence[Mapping[str, Any]], leaf_id: str | None) -> list[TreeNode]:
    """Session entries (Pi's JSONL v3 shape: `id`, `parentId`, `type`, …) as a depth-first list of nodes.

    The active branch is the parent chain from `leaf_id` to the root. The latest compaction on that branch marks
    the branch entries before its `firstKeptEntryId` as compacted (still in the tree, no longer sent).
    """
    by_id = {str(e["id"]): e for e in entries if e.get("id") is not None and e.get("type") != "session"}
    children: dict[str | None, list[str]] = {}
    for entry_id, entry in by_id.items():
        parent = entry.get("parentId")
        children.setdefault(str(parent) if parent is not None and str(parent) in by_id else None, []).append(entry_id)
    path: list[str] = []
    cursor = leaf_id
    while cursor is not None and cursor in by_id and cursor not in path:
        path.append(cursor)
        parent = by_id[cursor].get("parentId")
        cursor = str(parent) if parent is not None else None
    path.reverse()
    compacted: set[str] = set()
    for index in range(len(path) - 1, -1, -1):
        entry = by_id[path[index]]
        if entry.get("type") == "compaction":
            kept = entry.get("firstKeptEntryId")
            before = path[:index]
            compacted = set(before[: before.index(kept)]) if kept in before else set(before)
            compacted = {e for e in compacted if by_id[e].get("type") == "message"}
            break
    active = set(path)
    nodes: list[TreeNode] = []

    def walk(entry_id: str, depth: int) -> None:
        entry = by_id[entry_id]
        parent = entry.get("parentId")
        nodes.append(
            TreeNode(
                id=entry_id,
                parent_id=str(parent) if parent is not None else None,
                type=str(entry.get("type", "?")),
                label=_entry_label(entry),
                depth=depth,
                active=entry_id in active,
                compacted=entry_id in compacted,
            )
        )
        kids = children.get(entry_id, [])
        for kid in kids:
            walk(kid, depth + (1 if len(kids) > 1 else 0))

    for root in children.get(None, []):
        walk(root, 0)
    return nodes


def session_tree_html(entries: Sequence[Mapping[str, Any]], leaf_id: str | None) -> str:
    """The tree as an indented list: the active branch bold with a ●, compacted entries struck through."""
    rows = []
    for node in tree_nodes(entries, leaf_id):
        marks = []
        style = [f"margin-left:{node.depth * 1.5}em"]
        if node.active:
            marks.append("●")
            style.append("font-weight:bold")
        else:
            marks.append("○")
            style.append("color:#80868b")
        if node.compacted:
            style.append("text-decoration:line-through")
            marks.append("(compacted)")
        if node.type == "compaction":
            style.append("background:#fef7e0")
        classes = " ".join(c for c in ("active" if node.active else "", "compacted" if node.compacted else "") if c)
        rows.append(
            f'<div class="entry {classes}" data-id="{escape(node.id)}" style="{";".join(style)}">'
            f"{escape(marks[0])} <code>{escape(node.id)}</code> {escape(node.label)} "
            f"{escape(' '.join(marks[1:]))}</div>"
        )
    legend = "<div style='color:#5f6368'>● active branch · ○ other branches · struck: compacted (kept, not sent)</div>"
    return f'<div class="pinb-tree" style="font-family:monospace">{legend}{"".join(rows)}</div>'


def display_timeline(lines: Iterable[TraceLine], **options: Any) -> Shown:
    """The timeline as inline SVG (tooltips in Jupyter), collapsed under its summary line, and as a standalone
    `image/svg+xml` for static viewers; a timeline longer than `LONG_TIMELINE` rows is a table of its tool calls
    instead (`display_tool_calls`)."""
    lines = list(lines)
    count = len(visible_lines(lines, bool(options.get("include_stream"))))
    title = options.get("title") or "event timeline"
    if count > LONG_TIMELINE:
        return display_tool_calls(lines, f"{title}: {count} trace lines, too many to draw; its tool calls")
    svg = timeline_svg(lines, **options)
    summary = f"{title} ({count} trace lines)"
    # collapsed under its one-line summary: open on request (static viewers show the standalone SVG)
    return Shown(
        summary, html=f"<details class='pinb-details'><summary>{escape(summary)}</summary>{svg}</details>", svg=svg
    )


#: A timeline with more rows than this is shown as a table of its tool calls: drawn, it would be taller than ten
#: screens and read as noise.
LONG_TIMELINE = 80


#: The key to `visible_whitespace`, for a column's header.
WHITESPACE_KEY = "· space, ⇥ tab, ⏎ line break, ⟨U+XXXX⟩ other whitespace or invisible characters"


def visible_whitespace(text: str) -> str:
    """Text with its whitespace shown: `·` for a space, `⇥` for a tab, `⏎` for a line break, and every other
    whitespace or invisible character (NEL, NBSP, an em space, a BOM …) as its code point, so `git  push`,
    `git\tpush` and `git\u0085push` no longer read alike (and no line of a table is broken inside a cell)."""
    shown = {" ": "·", "\t": "⇥", "\r": "␍", "\n": "⏎"}
    return "".join(
        shown.get(ch) or (f"⟨U+{ord(ch):04X}⟩" if ch.isspace() or not ch.isprintable() else ch) for ch in text
    )


@dataclass(frozen=True)
class ToolCallRow:
    """One tool call of a trace, in words."""

    call_id: str
    tool: str
    #: The input as the tool received it: the command or content with visible whitespace, else the arguments.
    given: str
    #: What the handlers answered (`review-guard/guard: block (Guard blocked: …)`), in order.
    answers: tuple[str, ...]
    #: `error: …`, `ran: …`, or `no end` (the trace never ends the call).
    ended: str


def tool_call_rows(lines: Sequence[TraceLine]) -> list[ToolCallRow]:
    """Every tool execution of the trace, one row each, in the order they started."""
    sources = {line.get("source") for line in lines if str(line.get("type", "")).startswith("tool_execution_")}
    source = "agent" if "agent" in sources else "session"
    rows: dict[str, dict[str, Any]] = {}
    answers: dict[str, list[str]] = {}
    for line in lines:
        kind, call_id = line.get("type"), str(line.get("toolCallId", ""))
        if line.get("source") == "ext" and kind == "tool_call":
            who = f"{line.get('extension', '')}/{line.get('handler', '')}".strip("/")
            result = line.get("result")
            if isinstance(result, Mapping) and result.get("block"):
                said = f"block ({result.get('reason', 'no reason')})"
            elif "error" in line:
                said = f"threw {line['error']}"
            else:
                said = "no answer" if result is None else f"answered {_compact_json(result)}"
            answers.setdefault(call_id, []).append(f"{who}: {said}")
        elif line.get("source") == source and kind == "tool_execution_start":
            rows[call_id] = {"tool": str(line.get("toolName", "")), "given": _given(line.get("args"))}
        elif line.get("source") == source and kind == "tool_execution_end" and call_id in rows:
            text = _short(str(line.get("text", "")), 120)
            rows[call_id]["ended"] = f"error: {text}" if line.get("isError") else f"ran: {text}"
    return [
        ToolCallRow(call_id, row["tool"], row["given"], tuple(answers.get(call_id, ())), row.get("ended", "no end"))
        for call_id, row in rows.items()
    ]


def _given(args: Any) -> str:
    if isinstance(args, Mapping) and len(args) == 1:
        (value,) = args.values()
        if isinstance(value, str):
            return visible_whitespace(value)
    return _compact_json(args)


def display_tool_calls(lines: Iterable[TraceLine], title: str) -> Shown:
    """A trace's tool calls as a table (one row per call) with a count line that adds up."""
    rows = tool_call_rows(list(lines))
    errors = sum(1 for row in rows if row.ended.startswith("error"))
    ran = sum(1 for row in rows if row.ended.startswith("ran"))
    counts = f"{len(rows)} tool calls: {errors} ended in an error, {ran} ran, {len(rows) - errors - ran} never ended"
    headers = ("call", "tool", f"input ({WHITESPACE_KEY})", "handlers answered", "ended")
    cells = [
        (
            escape(row.call_id),
            escape(row.tool),
            f'<code style="white-space:pre-wrap">{escape(row.given)}</code>',
            escape("; ".join(row.answers) or "no handler"),
            escape(row.ended),
        )
        for row in rows
    ]
    text = "\n".join(
        [f"{title} — {counts}"]
        + [f"  {r.call_id} {r.tool} {r.given} → {'; '.join(r.answers) or 'no handler'} → {r.ended}" for r in rows]
    )
    return Shown(text, html=f"<div><b>{escape(title)}</b> — {escape(counts)}{table_html(headers, cells)}</div>")


def display_requests(lines: Iterable[TraceLine], title: str = "", **options: Any) -> Shown:
    requests = request_inputs(lines, **options)
    heading = f"<h4>{escape(title)}</h4>" if title else ""
    text = f"request inspector{f' ({title})' if title else ''}: {len(requests)} model requests"
    return Shown(text, html=heading + request_inspector_html(requests))


def display_text(title: str, text: str) -> Shown:
    """A long text (a system prompt) folded under its title."""
    html = (
        f"<details><summary>{escape(title)}</summary><pre style='white-space:pre-wrap'>{escape(text)}</pre></details>"
    )
    return Shown(f"{title}:\n{text}", html=html)


def display_tree(entries: Sequence[Mapping[str, Any]], leaf_id: str | None) -> Shown:
    return Shown(f"session tree: {len(entries)} entries, leaf {leaf_id}", html=session_tree_html(entries, leaf_id))


__all__ = [
    "LANES",
    "LONG_TIMELINE",
    "WHITESPACE_KEY",
    "RequestInputs",
    "ToolCallRow",
    "ToolSpan",
    "TreeNode",
    "display_requests",
    "display_text",
    "display_timeline",
    "display_tool_calls",
    "display_tree",
    "event_label",
    "lane_of",
    "max_concurrency",
    "request_inputs",
    "request_inspector_html",
    "session_tree_html",
    "text_width",
    "timeline_svg",
    "tool_call_rows",
    "tool_spans",
    "tree_nodes",
    "visible_lines",
    "visible_whitespace",
]
