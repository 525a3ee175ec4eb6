"""Limits were not enforced: a CPU-bound stand-in run ignored `--timeout` (a scenario of 200,000 responses still
ran at 150 s with `--timeout 1`); a FIFO blocked forever as a scenario (`scenario run` on both backends, `scenario
diff`), in `fingerprint`, as a chapter text and as an executed notebook under `pinb status`; `/dev/zero` as a
scenario ended in a MemoryError traceback; stdout on `/dev/full` or closed, huge or deeply nested `-p` values and a
non-UTF-8 ledger ended in tracebacks. Now every one of them is a one-line error (exit 2), or a bounded run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pinb.chapters.ledger import LedgerError, load_ledger
from pinb.chapters.registry import folders
from pinb.cli import main
from pinb.files import CHAPTER_TEXT_LIMIT, SCENARIO_LIMIT

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "agent-error-result.json"
#: Long enough for any of these to finish on a loaded machine; a blocking open never does.
NEVER = 60


def _pinb(*argv: str, stdout: int | object = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pinb.cli", *argv]
    return subprocess.run(
        command, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=NEVER, cwd=REPO, check=False
    )


def _one_line(done: subprocess.CompletedProcess[str], expected: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert expected in done.stderr


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("scenario", "run", "{}", "--backend", "standin"),
        ("scenario", "run", "{}", "--backend", "pi"),
        ("scenario", "diff", "{}"),
    ],
)
def test_a_fifo_as_a_scenario(fifo: Path, argv: tuple[str, ...]) -> None:
    done = _pinb(*(arg.replace("{}", str(fifo)) for arg in argv))
    if "pi" in argv and "unknown Pi version" in done.stderr:
        pytest.skip("the real-Pi bridge is not available here")
    _one_line(done, f"cannot read scenario file {fifo}: it is a FIFO, not a regular file")


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), ("/tmp", "a folder")])
def test_a_device_or_a_folder_as_a_scenario(path: str, kind: str) -> None:
    _one_line(_pinb("scenario", "run", path, "--backend", "standin"), f"it is {kind}, not a regular file")


def test_fingerprint_of_a_fifo_and_a_device(fifo: Path) -> None:
    _one_line(_pinb("fingerprint", str(fifo)), "it is a FIFO, not a regular file")
    _one_line(_pinb("fingerprint", "/dev/zero"), "it is a character device, not a regular file")


def test_stated_sizes(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(SCENARIO_LIMIT + 1)
    _one_line(_pinb("scenario", "run", str(big), "--backend", "standin"), "is larger than the limit of 4 MiB")
    text = tmp_path / "chapter.txt"
    with open(text, "wb") as handle:
        handle.truncate(CHAPTER_TEXT_LIMIT + 1)
    _one_line(_pinb("fingerprint", str(text)), "is larger than the limit of 16 MiB")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("x" * (64 * 1024 + 1), "parameter tool_ms: its value is longer than the limit of 64 KiB"),
        ("[" * 5000 + "]" * 5000, "parameter tool_ms: nested more than 32 levels deep"),
        ("[" * 40 + "]" * 40, "parameter tool_ms: nested more than 32 levels deep"),
        ("9" * 5000, "parameter tool_ms: Exceeds the limit (4300 digits)"),
    ],
)
def test_parameter_values(value: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "pi-01-chapter", "-p", f"tool_ms={value}", "--root", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert err == f"pinb: error: {expected}" + err.removeprefix(f"pinb: error: {expected}")
    assert err.count("\n") == 1


def test_stdout_on_a_full_device_or_closed() -> None:
    with open("/dev/full", "w") as full:
        _one_line(
            _pinb("scenario", "run", str(SCENARIO), "--backend", "standin", stdout=full),
            "cannot write to standard output: No space left on device",
        )
        _one_line(_pinb("status", stdout=full), "cannot write to standard output: No space left on device")
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m pinb.cli "$@" >&-', sys.executable, "status"],
        capture_output=True,
        text=True,
        timeout=NEVER,
        cwd=REPO,
    )
    _one_line(done, "standard output is closed")


def test_a_non_utf8_ledger(tmp_path: Path) -> None:
    source = next(iter(folders().values())).folder
    chapters = tmp_path / "chapters"
    shutil.copytree(source, chapters / source.name)
    ledger = chapters / source.name / "ledger.yaml"
    ledger.write_bytes(ledger.read_bytes().replace(b"\n", b"\n# \xff\xfe\n", 1))
    with pytest.raises(LedgerError, match=r"ledger .* is not UTF-8 text \(byte \d+\)"):
        load_ledger(ledger)


def test_a_fifo_as_chapter_text(tmp_path: Path) -> None:
    """Every chapter's text a FIFO: status finishes, the texts are unavailable, nothing blocks."""
    book = tmp_path / "book"
    book.mkdir()
    for found in folders().values():
        for source in (found.ledger.text, *found.ledger.also_quoted_from):
            if not (book / source.file).exists():
                (book / source.file).parent.mkdir(parents=True, exist_ok=True)
                os.mkfifo(book / source.file)
    done = _pinb("status", "--book", str(book))
    assert "Traceback" not in done.stderr
    assert "not available" in done.stdout + done.stderr


def test_a_fifo_as_an_executed_notebook(tmp_path: Path) -> None:
    """The committed runs copied, one run's notebook replaced by a FIFO: status finishes and names it."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "runs", root / "runs")
    from pinb.kit.store import RunStore

    run = RunStore(root / "runs").list().runs[0]
    notebook = run.path / "executed.ipynb"
    notebook.chmod(0o644)
    notebook.unlink()
    os.mkfifo(notebook)
    code = (
        "import sys; from pathlib import Path; from pinb.kit.store import RunStore; "
        "runs, problems = RunStore(Path(sys.argv[1])).check(); print('\\n'.join(p.problem for p in problems))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root / "runs")], capture_output=True, text=True, timeout=NEVER
    )
    assert done.returncode == 0, done.stderr
    assert "executed.ipynb is a FIFO, not a regular file" in done.stdout


CPU_BOUND = """
import sys, time
from pinb.scenario import standin
from pinb.scenario.model import load_scenario

def spin(scenario):  # work that never yields to the event loop and never asks for the time left
    while True:
        pass

standin.scripted_responses = spin
began = time.monotonic()
try:
    standin.run_on_standin(load_scenario(sys.argv[1]), timeout=float(sys.argv[2]))
except Exception as exc:
    print(type(exc).__name__, exc)
print(round(time.monotonic() - began, 1))
"""


def test_a_cpu_bound_standin_run_stops_at_its_time_limit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CPU_BOUND, str(SCENARIO), "0.5"], capture_output=True, text=True, timeout=NEVER
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0] == "ScenarioError scenario agent-error-result did not finish within its 0.5 s time limit (--timeout)"
    )


def test_the_cli_timeout_stops_a_long_scripted_run(tmp_path: Path) -> None:
    data = json.loads(SCENARIO.read_text(encoding="utf-8"))
    data["prompt"] = [f"Prompt {n}" for n in range(3000)]
    data["responses"] = [{"content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}] * 3000
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _one_line(
        _pinb("scenario", "run", str(path), "--backend", "standin", "--timeout", "0.5"),
        "did not finish within its 0.5 s time limit (--timeout)",
    )
