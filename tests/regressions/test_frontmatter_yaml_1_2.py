"""Skill and prompt-template front matter is YAML 1.2 (core schema), as Pi's ``yaml`` package parses it.

PyYAML reads YAML 1.1: ``disable-model-invocation: yes`` became true and hid the skill from the model, which real
Pi lists (``"yes" === true`` is false there); ``description: yes`` or ``description: 2024-01-01`` were not strings,
so the skill was dropped; a key given twice and a ``<<`` merge key were accepted. The expected values in
``tests/app/golden/skills_frontmatter_pi160.json`` come from real Pi 1.6.0's ``loadSkillsFromDir`` run by Node on
the same files (the file names how), and the corpus scenario ``app-project-skill-frontmatter-yaml12`` shows the
same in the system prompt real Pi 1.6.0 sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from pinb.app.resources import VirtualFS, Workspace, load_skills, parse_frontmatter
from pinb.scenario.corpus import read_recorded
from pinb.scenario.model import load_scenario
from pinb.scenario.standin import run_on_standin
from pinb.scenario.trace import first_difference

GOLDEN = json.loads((Path(__file__).parents[1] / "app" / "golden" / "skills_frontmatter_pi160.json").read_text())


def _load() -> tuple[dict[str, dict[str, object]], list[list[str]]]:
    home = "/home/user"
    files = {f"{home}/.pi/agent/skills/{name}/SKILL.md": text for name, text in GOLDEN["files"].items()}
    skills, diagnostics = load_skills(Workspace(VirtualFS(files), cwd="/project", home=home))
    by_folder = {
        Path(s.base_dir).name: {
            "name": s.name,
            "description": s.description,
            "disableModelInvocation": s.disable_model_invocation,
        }
        for s in skills
    }
    found = [[Path(d.path).parent.name, d.type, d.message.splitlines()[0]] for d in diagnostics]
    return by_folder, found


def test_skills_load_as_real_pi_loads_them() -> None:
    skills, _ = _load()
    assert skills == GOLDEN["pi"]["skills"]


def test_the_same_skills_warn() -> None:
    _, diagnostics = _load()
    # The YAML error's wording is the parser's own; which skills warn, and why, is Pi's.
    got = [(folder, kind, "duplicate key" if folder == "dup-key" else message) for folder, kind, message in diagnostics]
    expected = [
        (folder, kind, "duplicate key" if folder == "dup-key" else message)
        for folder, kind, message in GOLDEN["pi"]["diagnostics"]
    ]
    assert sorted(got) == sorted(expected)


def test_yes_is_a_string() -> None:
    frontmatter, body = parse_frontmatter("---\ndisable-model-invocation: yes\nn: 017\nm: 0o17\n---\nBody.")
    assert frontmatter == {"disable-model-invocation": "yes", "n": 17, "m": 15}
    assert body == "Body."


def test_the_system_prompt_lists_the_skills_real_pi_lists() -> None:
    scenarios = Path(__file__).parents[2] / "scenarios"
    scenario = load_scenario(scenarios / "app-project-skill-frontmatter-yaml12.json")
    recorded = read_recorded(scenario.id, "1.6.0", scenarios)
    assert recorded is not None
    prompt = next(line["systemPrompt"] for line in recorded if line["source"] == "request")
    listed = [name for name in ("affirm", "dated", "deploy", "hidden") if f"<name>{name}</name>" in prompt]
    assert listed == ["affirm", "dated", "deploy"]
    assert first_difference(run_on_standin(scenario), recorded) is None
