"""The confinement of Node processes, without Node: the command built, the refusal where it cannot be had, the trust
flag recorded, and the folders above a run's folder checked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pinb.cli import main
from pinb.errors import ReferenceError_
from pinb.scenario import confinement, reference
from pinb.scenario.confinement import Confinement

ROOT = Path(__file__).resolve().parents[2]
FULL = Confinement(node_permissions=True, network_namespace="unshare -n")
NONE = Confinement(node_permissions=False, network_namespace=None)
NO_NETWORK_CONTROL = Confinement(node_permissions=True, network_namespace=None)


def test_the_command_limits_reads_and_writes_and_grants_nothing_else(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(confinement, "network_namespace", lambda: ("/usr/bin/unshare", "-n"))
    folder = tmp_path / "run"
    folder.mkdir()
    command = confinement.command(
        "node", ["worker.mjs", "--x"], read=[Path("/pkgs"), Path("/r/runner.mjs")], write=folder, confinement=FULL
    )
    assert command[:4] == ["/usr/bin/unshare", "-n", "node", "--permission"]
    assert command[-2:] == ["worker.mjs", "--x"]
    flags = command[4:-2]
    assert f"--allow-fs-write={folder}" in flags and [f for f in flags if f.startswith("--allow-fs-write")] == [
        f"--allow-fs-write={folder}"
    ]
    reads = {f.split("=", 1)[1] for f in flags if f.startswith("--allow-fs-read=")}
    assert {"/pkgs", "/r/runner.mjs", str(folder)} <= reads
    assert str(tmp_path / "AGENTS.md") in reads and str(tmp_path / ".git") in reads
    assert all(Path(p).name in confinement.ANCESTOR_NAMES or p in {"/pkgs", "/r/runner.mjs", str(folder)}
               or p.endswith(".agents/skills") for p in reads)  # fmt: skip
    assert not any(f.startswith(("--allow-child-process", "--allow-worker", "--allow-addons", "--allow-wasi"))
                   for f in flags)  # fmt: skip


def test_without_confinement_the_command_is_plain_node() -> None:
    assert confinement.command("node", ["a.ts"], read=[], write=Path("/tmp/x"), confinement=NONE) == ["node", "a.ts"]


def test_a_context_file_above_the_run_folder_refuses_the_run(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    confinement.check_ancestors(inner)
    (tmp_path / "CLAUDE.md").write_text("host\n", encoding="utf-8")
    with pytest.raises(ReferenceError_, match=rf"^{tmp_path / 'CLAUDE.md'} would reach the real-Pi run"):
        confinement.check_ancestors(inner)


def _source_scenario(tmp_path: Path) -> Path:
    scenario = json.loads((ROOT / "scenarios" / "app-two-prompts.json").read_text(encoding="utf-8"))
    scenario["extensions"] = [
        {"name": "x", "handlers": [], "source": "export default function (pi) {}\n"},
    ]
    path = tmp_path / "with-code.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


@pytest.fixture
def fake_cold(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    commands: list[list[str]] = []
    monkeypatch.setattr(reference, "is_installed", lambda version: True)
    monkeypatch.setattr(reference, "node_path", lambda: Path("node"))
    monkeypatch.delenv("PINB_TRUST_EXTENSION_CODE", raising=False)
    monkeypatch.setitem(reference._trust, "extension_code", False)

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, '{"seq":1,"source":"meta","type":"scenario"}\n{"seq":2}\n', "")

    monkeypatch.setattr(reference.subprocess, "run", fake_run)
    return commands


@pytest.mark.parametrize("where", [NONE, NO_NETWORK_CONTROL])
def test_extension_code_is_refused_where_it_cannot_be_confined(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_cold: list[list[str]], where: Confinement
) -> None:
    monkeypatch.setattr(reference, "confinement", lambda: where)
    with pytest.raises(ReferenceError_, match=r"refusing to run the extension code of with-code\.json .*"
                       r"pass --trust-extension-code"):  # fmt: skip
        reference.run_on_pi(_source_scenario(tmp_path), "1.6.0", warm=False)
    assert fake_cold == []  # nothing ran


def test_a_scenario_without_code_runs_unconfined_and_says_so(
    monkeypatch: pytest.MonkeyPatch, fake_cold: list[list[str]]
) -> None:
    monkeypatch.setattr(reference, "confinement", lambda: NONE)
    trace = reference.run_on_pi(ROOT / "scenarios" / "ch01-word-count.json", "1.6.0", warm=False)
    meta = json.loads(trace.splitlines()[0])
    assert meta["confinement"] == {"node_permissions": False, "network_namespace": None}
    assert "trust_extension_code" not in meta


def test_trusted_code_runs_unconfined_and_the_trace_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_cold: list[list[str]]
) -> None:
    monkeypatch.setattr(reference, "confinement", lambda: NONE)
    monkeypatch.setenv("PINB_TRUST_EXTENSION_CODE", "1")
    trace = reference.run_on_pi(_source_scenario(tmp_path), "1.6.0", warm=False)
    assert json.loads(trace.splitlines()[0])["trust_extension_code"] is True
    assert trace.splitlines()[1] == '{"seq":2}'


def test_the_book_program_is_refused_the_same_way(monkeypatch: pytest.MonkeyPatch, fake_cold: list[list[str]]) -> None:
    monkeypatch.setattr(reference, "confinement", lambda: NO_NETWORK_CONTROL)
    with pytest.raises(ReferenceError_, match=r"refusing to run the book's program probe\.ts"):
        reference.run_book_example("probe", "1.6.0", "console.log(1)\n")
    assert fake_cold == []


def test_the_trust_flag_reaches_the_kernels_through_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import os

    monkeypatch.setenv("PINB_TRUST_EXTENSION_CODE", "0")  # restored (unset) after the test
    assert main(["scenario", "conform", "--trust-extension-code", "--corpus", str(tmp_path)]) == 2
    capsys.readouterr()
    assert os.environ.get("PINB_TRUST_EXTENSION_CODE") == "1"
    assert reference.extension_code_trusted()


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--help"],
        ["scenario", "run", "--help"],
        ["scenario", "conform", "--help"],
        ["drift", "--help"],
        ["reference", "refresh", "--help"],
    ],
)
def test_every_command_that_runs_pi_offers_the_flag(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    assert "--trust-extension-code" in capsys.readouterr().out
