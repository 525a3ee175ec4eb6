"""Pictures that fit: every timeline has a viewBox, scales to the cell's width, and holds every element it draws;
a timeline too long to draw is a table of its tool calls whose counts add up."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pinb.chapters import views
from pinb.chapters.experiments import ChapterRun

REPO = Path(__file__).resolve().parents[2]
TRACES = sorted((REPO / "scenarios" / "traces").rglob("*.jsonl"))
SVG = "{http://www.w3.org/2000/svg}"


def outside(svg: str) -> list[str]:
    """Each element whose box (a text's estimated from its characters) is not inside the root's viewBox."""
    root = ET.fromstring(svg)
    box = [float(v) for v in root.attrib["viewBox"].split()]
    left, top, right, bottom = box[0], box[1], box[0] + box[2], box[1] + box[3]
    size = float(root.attrib.get("font-size", views.FONT_SIZE))
    found = []
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        if tag == "rect":
            x, y = float(element.attrib["x"]), float(element.attrib["y"])
            x2, y2 = x + float(element.attrib["width"]), y + float(element.attrib["height"])
        elif tag == "text":
            own = float(element.attrib.get("font-size", size))
            label = element.text or ""
            x, y = float(element.attrib["x"]), float(element.attrib["y"]) - own
            x2, y2 = x + views.text_width(label, own), float(element.attrib["y"]) + own * 0.25
        else:
            continue
        if x < left or y < top or x2 > right or y2 > bottom:
            found.append(f"{tag} {element.text or ''!r} at ({x:.0f},{y:.0f})–({x2:.0f},{y2:.0f}) outside {box}")
    return found


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_check_catches_a_label_past_the_edge() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50"><text x="60" y="20">twelve chars</text></svg>'
    assert outside(svg) == ["text 'twelve chars' at (60,9)–(142,23) outside [0.0, 0.0, 100.0, 50.0]"]


@pytest.mark.parametrize("path", TRACES, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_recorded_trace_draws_inside_its_viewbox(path: Path) -> None:
    lines = _lines(path)
    for options in ({}, {"include_stream": True, "highlight": 3}):
        svg = views.timeline_svg(lines, title=path.stem, **options)
        root = ET.fromstring(svg)
        width, height = root.attrib["width"], root.attrib["height"]
        assert root.attrib["viewBox"] == f"0 0 {width} {height}"
        assert "max-width:100%" in root.attrib["style"] and "height:auto" in root.attrib["style"]
        assert outside(svg) == []


def test_many_parallel_calls_keep_their_labels_inside() -> None:
    lines: list[dict] = [{"seq": 1, "source": "driver", "type": "prompt", "text": "go"}]
    for n in range(12):
        call = {"source": "agent", "toolName": "a_tool_with_a_long_name", "toolCallId": f"call-{n:02d}"}
        lines.append({**call, "seq": 2 + n, "type": "tool_execution_start", "args": {}})
    for n in range(12):
        call = {"source": "agent", "toolName": "a_tool_with_a_long_name", "toolCallId": f"call-{n:02d}"}
        lines.append({**call, "seq": 20 + n, "type": "tool_execution_end", "isError": n % 2 == 0})
    svg = views.timeline_svg(lines)
    assert svg.count('class="tool-span"') == 12 and outside(svg) == []


async def test_the_guard_corpus_is_a_table_one_row_per_command() -> None:
    observation = await ChapterRun("pi-16-chapter", "standin").check("pi-16.guard.patterns", show=False)
    trace = observation.trace("patterns")
    drawn = len(views.visible_lines(trace))
    assert drawn > views.LONG_TIMELINE
    shown = views.display_timeline(trace, title="event timeline: patterns")
    assert shown.svg is None and shown.html is not None and "<svg" not in shown.html
    commands = [line["args"]["command"] for line in trace if line.get("type") == "tool_execution_start"]
    rows = views.tool_call_rows(trace)
    assert [row.given for row in rows] == [views.visible_whitespace(command) for command in commands]
    assert shown.html.count("<tr>") == len(commands) + 1  # the header, then one row per command
    errors = sum(1 for row in rows if row.ended.startswith("error"))
    ran = sum(1 for row in rows if row.ended.startswith("ran"))
    never = len(rows) - errors - ran
    counts = f"{len(rows)} tool calls: {errors} ended in an error, {ran} ran, {never} never ended"
    assert shown.text.splitlines()[0] == (
        f"event timeline: patterns: {drawn} trace lines, too many to draw; its tool calls — {counts}"
    )
    assert len(shown.text.splitlines()) == len(rows) + 1
    spaced = [row.given for row in rows if re.search("··|⇥|⏎", row.given)]
    assert spaced, "the corpus holds commands whose whitespace is the point"


def test_whitespace_is_visible() -> None:
    assert views.visible_whitespace("git  push\t--force\nrm") == "git··push⇥--force⏎rm"


def test_the_sequence_diagram_is_mermaid_line_by_line_with_the_quotes_words() -> None:
    from pinb.chapters import registry
    from pinb.chapters.card import Card
    from pinb.chapters.diagram import diagram_lines, is_sequence_diagram, mermaid_block
    from pinb.chapters.experiment_view import ExperimentView
    from pinb.fingerprints import normalise

    quotes = [q for c in registry.folder("pi-16-chapter").ledger.claims for q in c.quotes if is_sequence_diagram(q)]
    assert len(quotes) == 2
    for quote in quotes:
        lines = diagram_lines(quote)
        assert normalise(" ".join(lines)) == normalise(quote)  # only the whitespace differs: the quote verifies
        assert all(re.match(r"\s*([A-Z]\w*-{1,2}>>[A-Z]\w*: |loop |alt |else |end$)", line) for line in lines), lines
        # the claim's card draws it above itself (a Markdown output, which JupyterLab renders as Mermaid)
        spec = next(c for c in registry.folder("pi-16-chapter").ledger.claims if quote in c.quotes)
        card = Card(spec, ExperimentView(spec.id, "scenarios"), None, [])
        assert card.diagrams() == [mermaid_block(quote)] and "sequence diagram (drawn above)" in card.html()
    first = diagram_lines(quotes[0])
    assert first[:2] == ["U->>P: submit a prompt", "P->>H: input"]
    assert first[first.index("loop once per turn") + 1] == "    P->>H: turn_start"
    assert "    end" not in first and "end" in first


async def test_the_corpus_table_shows_whitespace_one_row_per_case_and_counts_that_add_up() -> None:
    from pinb.chapters.ch16.experiments import corpus_table
    from pinb.chapters.ch16.pictures import corpus_shown

    observation = await ChapterRun("pi-16-chapter", "standin").check("pi-16.guard.not-unconditional", show=False)
    trace = observation.trace("corpus")
    rows = corpus_table(trace)
    shown = corpus_shown(trace)
    assert shown.html is not None and shown.html.count("<tr>") == len(rows) + 1
    cells = re.findall(r'<code style="white-space:pre-wrap">(.*?)</code>', shown.html)
    assert len(cells) == len(rows) == len(set(zip(cells, (r["tool"] for r in rows), strict=True)))
    assert "git··push·--force" in cells and "git⇥push·--force" in cells and "git·push·--force" in cells
    found = re.fullmatch(
        r"guard corpus: (\d+) cases \((.*)\): this run blocked (\d+), allowed (\d+), gave no result for (\d+); "
        r"of the (\d+) destructive ones it blocked (\d+), allowed (\d+), gave no result for (\d+); "
        r"of the (\d+) harmless ones it blocked (\d+) \(false positives\), allowed (\d+), no result (\d+)",
        shown.text,
    )
    assert found, shown.text
    total, *numbers = (int(n) for i, n in enumerate(found.groups()) if i != 1)
    by_tool = [int(n) for n in re.findall(r"(\d+) through", found.group(2))]
    assert total == len(rows) == sum(by_tool) == sum(numbers[0:3]) == numbers[3] + numbers[7]
    assert numbers[3] == sum(numbers[4:7]) and numbers[7] == sum(numbers[8:11])
    assert numbers[0] == numbers[4] + numbers[8]  # every block is of a destructive or a harmless case
