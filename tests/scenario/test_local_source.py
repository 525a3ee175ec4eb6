"""`pinb reference install --from`: Pi packages from a local source (no network, no npm, no Node).

The tarballs are built here the way `npm pack` lays them out (`package/...`), under the book's pinned version.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import reference
from pinb.scenario.local_source import SOURCE_FILE, install_local, read_local_source, tree_digest

ROOT = Path(__file__).resolve().parents[2]


def _tarball(folder: Path, name: str, version: str, extra: dict[str, str] | None = None) -> Path:
    files = {"package.json": json.dumps({"name": name, "version": version}), "dist/index.js": f"// {name}\n"}
    files |= extra or {}
    path = folder / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for relative, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"package/{relative}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A reference folder of its own (runner and pinned sets copied), so nothing is installed into the checkout."""
    folder = tmp_path / "reference"
    folder.mkdir()
    shutil.copy(ROOT / "reference" / "runner.mjs", folder / "runner.mjs")
    monkeypatch.setenv("PINB_REFERENCE_DIR", str(folder))
    return folder


@pytest.fixture
def tarballs(tmp_path: Path) -> Path:
    source = tmp_path / "tarballs"
    source.mkdir()
    _tarball(source, "@earendil-works/pi-agent-core", "1.0.4")
    _tarball(source, "@earendil-works/pi-ai", "1.0.4")
    _tarball(source, "left-pad", "1.3.0")
    return source


def test_tarballs_are_unpacked_by_name_with_their_checksums(ref: Path, tarballs: Path) -> None:
    lines: list[str] = []
    reference.install("1.0.4", lines.append, source=tarballs)
    folder = ref / "pi-1.0.4"
    modules = folder / "node_modules"
    assert (
        json.loads((modules / "@earendil-works" / "pi-agent-core" / "package.json").read_text())["version"] == "1.0.4"
    )
    assert (modules / "left-pad" / "dist" / "index.js").is_file()
    record = read_local_source(folder)
    assert record is not None and record["kind"] == "tarballs"
    expected = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tarballs.glob("*.tgz")}
    assert record["sha256"] == expected
    assert str(tarballs) not in (folder / SOURCE_FILE).read_text()  # no machine path is recorded
    assert "1.0.4" in reference.available_versions() and reference.is_installed("1.0.4") in (True, False)
    resolved = reference.resolved_versions("1.0.4")
    assert resolved["@earendil-works/pi-agent-core"] == "1.0.4"
    tgz = "earendil-works-pi-agent-core-1.0.4.tgz"
    assert resolved[f"sha256 {tgz}"] == expected[tgz]  # what a run's environment records
    assert any("pi-coding-agent" in line and "layer app" in line for line in lines)


def test_a_node_modules_folder_is_copied_and_digested(ref: Path, tarballs: Path, tmp_path: Path) -> None:
    staged = tmp_path / "examples"
    install_local(tarballs, "1.0.4", staged, lambda _m: None)  # a node_modules to copy from
    (staged / SOURCE_FILE).unlink()
    reference.install("1.0.4", lambda _m: None, source=staged)
    record = read_local_source(ref / "pi-1.0.4")
    assert record is not None and record["kind"] == "node_modules"
    core = staged / "node_modules" / "@earendil-works" / "pi-agent-core"
    assert record["sha256"]["@earendil-works/pi-agent-core@1.0.4"] == tree_digest(core)
    assert record["sha256"]["node_modules (every file)"] == tree_digest(staged / "node_modules")


def test_a_source_of_another_version_is_refused_and_nothing_is_installed(ref: Path, tarballs: Path) -> None:
    with pytest.raises(ReferenceError_, match=r"holds @earendil-works/pi-agent-core 1\.0\.4, not 1\.0\.5"):
        reference.install("1.0.5", lambda _m: None, source=tarballs)
    assert not (ref / "pi-1.0.5" / "node_modules").exists()
    assert "1.0.5" not in reference.available_versions()


def test_a_source_without_pi_or_packages_is_a_one_line_error(ref: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReferenceError_, match=r"neither \.tgz files nor a node_modules"):
        reference.install("1.0.4", lambda _m: None, source=empty)
    other = tmp_path / "other"
    other.mkdir()
    _tarball(other, "left-pad", "1.3.0")
    with pytest.raises(ReferenceError_, match="no @earendil-works/pi-agent-core in it"):
        reference.install("1.0.4", lambda _m: None, source=other)
    with pytest.raises(ReferenceError_, match="no such folder"):
        reference.install("1.0.4", lambda _m: None, source=tmp_path / "missing")


def test_tarball_members_outside_package_are_never_written(ref: Path, tmp_path: Path) -> None:
    source = tmp_path / "evil"
    source.mkdir()
    path = _tarball(source, "@earendil-works/pi-agent-core", "1.0.4")
    with tarfile.open(path, "r:gz") as archive:
        members = [(m, archive.extractfile(m).read()) for m in archive.getmembers()]  # type: ignore[union-attr]
    with tarfile.open(path, "w:gz") as archive:
        for member, data in members:
            archive.addfile(member, io.BytesIO(data))
        escape = tarfile.TarInfo("package/../../escaped.txt")
        escape.size = 1
        archive.addfile(escape, io.BytesIO(b"x"))
    reference.install("1.0.4", lambda _m: None, source=source)
    assert not list(tmp_path.rglob("escaped.txt"))


def test_unknown_versions_name_the_local_install_way(ref: Path) -> None:
    with pytest.raises(ReferenceError_, match="--from PATH"):
        reference.packages_dir("1.0.4")


def test_the_cli_installs_from_a_local_source_and_errors_in_one_line(
    ref: Path, tarballs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pinb.cli import main

    assert main(["reference", "install", "--pi-version", "1.0.4", "--from", str(tarballs)]) == 0
    assert "sha256 earendil-works-pi-ai-1.0.4.tgz" in capsys.readouterr().err
    assert main(["reference", "install", "--pi-version", "1.0.4", "--from", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such folder" in err
