"""The everyday commands start fast: they import only what they use.

``pinb status``, ``pinb report`` and ``pinb scenario run`` read records or run the stand-in; none of them needs
Jupyter, papermill or a JSON-schema validator, whose imports cost more than the commands themselves, nor what only
``pinb verify`` uses. Each command runs in a fresh interpreter, which then lists the heavy modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Top-level packages no fast command may load.
HEAVY = (
    "IPython",
    "ipykernel",
    "ipywidgets",
    "jsonschema",
    "jupyter_client",
    "jupyter_core",
    "nbclient",
    "nbformat",
    "papermill",
    "tornado",
    "zmq",
)

PROBE = """
import json, sys
from pinb.cli import main
code = main(sys.argv[1:])
heavy = json.loads(sys.stdin.read())
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(heavy["top"]))
loaded += sorted(name for name in heavy["exact"] if name in sys.modules)
print("\\n" + json.dumps({"code": code, "loaded": loaded}))
"""


def _loaded(args: list[str], *, also: tuple[str, ...] = ()) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=json.dumps({"top": HEAVY, "exact": also}),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 1), out.stderr
    return result["loaded"]


#: What only ``pinb verify`` needs: its process pool and progress bar.
VERIFY_ONLY = ("pinb.kit.verify", "pinb.kit.execute", "concurrent.futures.process", "tqdm")


def test_status_loads_no_notebook_machinery() -> None:
    assert _loaded(["status", "--root", str(ROOT)], also=VERIFY_ONLY) == []


def test_report_loads_no_notebook_machinery(tmp_path: Path) -> None:
    args = ["report", "pi-16-chapter", "--root", str(ROOT), "-o", str(tmp_path / "report.md")]
    assert _loaded(args, also=VERIFY_ONLY) == []


@pytest.mark.parametrize("scenario", ["ch01-word-count", "app-extension-events"])
def test_scenario_run_loads_neither_notebook_machinery_nor_the_kit(tmp_path: Path, scenario: str) -> None:
    path = ROOT / "scenarios" / f"{scenario}.json"
    args = ["scenario", "run", str(path), "--backend", "standin", "-o", str(tmp_path / "trace.jsonl")]
    assert _loaded(args, also=("pinb.kit", "pinb.chapters")) == []
    assert (tmp_path / "trace.jsonl").read_text(encoding="utf-8").startswith('{"seq":1,"source":"meta"')


def _commands(argv: list[str] | None) -> set[str]:
    from pinb.cli import build_parser

    parser = build_parser(argv)
    action = next(a for a in parser._actions if a.dest == "command")
    return set(action.choices or ())


def test_a_named_command_builds_only_its_layers_parser_and_anything_else_builds_all() -> None:
    every = _commands(None)
    assert {"status", "report", "scenario", "drift"} <= every
    scenario = _commands(["scenario", "run", "x.json", "--backend", "standin"])
    assert "scenario" in scenario and "status" not in scenario
    assert _commands(["--version"]) == every
    assert _commands(["no-such-command"]) == every


def test_every_command_names_the_module_that_registers_it() -> None:
    import argparse
    import importlib

    from pinb.cli import COMMAND_MODULES, COMMAND_OWNERS

    for name in COMMAND_MODULES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).add_commands(subparsers)
        for command in subparsers.choices:
            assert COMMAND_OWNERS.get(command) == name, f"add {command!r}: {name!r} to pinb.cli.COMMAND_OWNERS"
