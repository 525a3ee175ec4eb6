"""Prompt templates as Pi 1.6.0 expands them (core/prompt-templates.ts); the corpus scenarios
app-project-prompt-templates* compare the whole path with real Pi."""

from __future__ import annotations

import pytest

from pinb.app.prompt_templates import (
    PromptTemplate,
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)
from pinb.app.resources import VirtualFS, Workspace


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"a b" c', ["a b", "c"]),
        ("it's fine", ["it's", "fine"]),  # a quote inside a word is text
        ('say "x \\" y"', ["say", 'x " y']),
        ('"" x', ["", "x"]),  # a quoted empty string is an argument
        ('"open', ['"open']),  # an unclosed quote is text
        ("", []),
    ],
)
def test_arguments_split_like_pi(text: str, args: list[str]) -> None:
    assert parse_command_args(text) == args


def test_placeholders() -> None:
    args = ["one", "two", "three"]
    assert substitute_args("$1|$2|$9|$@|$ARGUMENTS", args) == "one|two||one two three|one two three"
    assert substitute_args("${2:-d}|${5:-d}|${@:-none}", args) == "two|d|one two three"
    assert substitute_args("${@:2}|${@:2:1}|${@:0}", args) == "two three|two|one two three"
    assert substitute_args("${@:-none}", []) == "none"
    assert substitute_args("$1", ["$2", "x"]) == "$2"  # values are not substituted again


def test_expansion_needs_a_known_name() -> None:
    templates = [PromptTemplate("review", "Review $1.", "/p/review.md")]
    assert expand_prompt_template("/review a.py", templates) == "Review a.py."
    assert expand_prompt_template("/review", templates) == "Review ."
    assert expand_prompt_template("/other a.py", templates) == "/other a.py"
    assert expand_prompt_template("review a.py", templates) == "review a.py"


def test_project_templates_need_trust_and_come_first() -> None:
    fs = VirtualFS(
        {
            "/w/p/.pi/prompts/review.md": "---\ndescription: d\n---\nProject review.",
            "/w/p/.pi/prompts/.hidden.md": "no",
            "/h/.pi/agent/prompts/review.md": "User review.",
            "/h/.pi/agent/prompts/greet.md": "Hello.",
        }
    )
    trusted = load_prompt_templates(Workspace(fs=fs, cwd="/w/p", home="/h", trusted=True))
    assert [(t.name, t.content) for t in trusted] == [("review", "Project review."), ("greet", "Hello.")]
    untrusted = load_prompt_templates(Workspace(fs=fs, cwd="/w/p", home="/h", trusted=False))
    assert [(t.name, t.content) for t in untrusted] == [("greet", "Hello."), ("review", "User review.")]
