"""Pi packages from a local source, for a release the registry does not have (the book's pin, 1.0.4, say).

``pinb reference install --pi-version V --from PATH`` takes either a folder of npm tarballs (``*.tgz``, as ``npm
pack`` writes them: each holds ``package/``) or an existing ``node_modules`` (or a folder that has one, such as the
book repository's ``examples/``). The packages go into ``reference/pi-<V>/node_modules`` with no network and no
npm: tarballs are unpacked by name, a ``node_modules`` tree is copied. ``reference/pi-<V>/.local-source.json``
records what was installed and the source's checksums (each tarball's sha256, or each package's tree digest), never
the source's path; run records carry those checksums in their environment.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pinb.errors import ReferenceError_

SOURCE_FILE = ".local-source.json"
CORE = "@earendil-works/pi-agent-core"

Progress = Callable[[str], None]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_digest(folder: Path) -> str:
    """sha256 over every file below ``folder``: its relative POSIX path, a NUL, its bytes, a NUL (sorted by path)."""
    digest = hashlib.sha256()
    files = sorted((p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()), key=lambda p: p.as_posix())
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_kind(source: Path) -> tuple[str, Path]:
    """(``tarballs`` or ``node_modules``, the folder to read), or a one-line error."""
    if not source.exists():
        raise ReferenceError_(f"{source}: no such folder")
    if not source.is_dir():
        raise ReferenceError_(f"{source}: a local package source is a folder of .tgz files or a node_modules folder")
    if source.name == "node_modules":
        return "node_modules", source
    if (source / "node_modules").is_dir():
        return "node_modules", source / "node_modules"
    if any(source.glob("*.tgz")):
        return "tarballs", source
    raise ReferenceError_(f"{source}: neither .tgz files nor a node_modules folder in it")


def _safe_member(name: str) -> PurePosixPath | None:
    """The path of a tarball member below ``package/``; None for anything outside it (or escaping it)."""
    path = PurePosixPath(name)
    parts = path.parts
    if not parts or parts[0] != "package" or path.is_absolute() or ".." in parts:
        return None
    return PurePosixPath(*parts[1:]) if len(parts) > 1 else None


def _unpack(tarball: Path, modules: Path) -> tuple[str, str]:
    """Unpack one npm tarball into ``modules/<its package name>``; (name, version)."""
    files: dict[PurePosixPath, bytes] = {}
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            for member in archive.getmembers():
                relative = _safe_member(member.name)
                if relative is None or not member.isfile():
                    continue
                extracted = archive.extractfile(member)
                if extracted is not None:
                    files[relative] = extracted.read()
    except (tarfile.TarError, OSError) as exc:
        raise ReferenceError_(f"{tarball.name}: not an npm tarball ({exc})") from None
    manifest_bytes = files.get(PurePosixPath("package.json"))
    if manifest_bytes is None:
        raise ReferenceError_(f"{tarball.name}: no package/package.json in it (not an npm tarball)")
    manifest = json.load(io.BytesIO(manifest_bytes))
    name, version = manifest.get("name"), manifest.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise ReferenceError_(f"{tarball.name}: its package.json has no name or version")
    target = modules.joinpath(*name.split("/"))
    if target.exists():
        shutil.rmtree(target)
    for relative, data in files.items():
        path = target.joinpath(*relative.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return name, version


def _package_dirs(modules: Path) -> list[Path]:
    found = []
    for child in sorted(modules.iterdir()):
        if child.name.startswith("."):
            continue
        if child.name.startswith("@") and child.is_dir():
            found += [p for p in sorted(child.iterdir()) if (p / "package.json").is_file()]
        elif (child / "package.json").is_file():
            found.append(child)
    return found


def _manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "package.json").read_text(encoding="utf-8"))


def install_local(source: Path, version: str, folder: Path, progress: Progress) -> dict[str, Any]:
    """Install the packages of ``source`` into ``folder/node_modules`` and record them; the record (also written
    to ``folder/.local-source.json``). Pi ``version`` must be the source's pi-agent-core version."""
    kind, root = source_kind(source)
    if root.resolve().is_relative_to(folder.resolve()):
        raise ReferenceError_(f"{source}: the source is inside the folder it would be installed into")
    staging = folder / "node_modules.tmp"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    checksums: dict[str, str] = {}
    packages: dict[str, str] = {}
    try:
        if kind == "tarballs":
            for tarball in sorted(root.glob("*.tgz")):
                name, found = _unpack(tarball, staging)
                packages[name] = found
                checksums[tarball.name] = _sha256(tarball.read_bytes())
            progress(f"unpacked {len(packages)} tarballs")
        else:
            shutil.copytree(root, staging, symlinks=True, dirs_exist_ok=True)
            for package in _package_dirs(staging):
                data = _manifest(package)
                name = str(data.get("name", package.name))
                packages[name] = str(data.get("version", "?"))
                if name.startswith("@earendil-works/"):
                    checksums[f"{name}@{packages[name]}"] = tree_digest(package)
            checksums["node_modules (every file)"] = tree_digest(staging)
            progress(f"copied node_modules ({len(packages)} packages)")
        core = packages.get(CORE)
        if core is None:
            raise ReferenceError_(f"{source}: no {CORE} in it, so it holds no Pi release")
        if core != version:
            raise ReferenceError_(f"{source}: it holds {CORE} {core}, not {version} (pass --pi-version {core})")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    modules = folder / "node_modules"
    if modules.exists() or modules.is_symlink():
        if modules.is_symlink() or modules.is_file():
            modules.unlink()
        else:
            shutil.rmtree(modules)
    staging.rename(modules)
    record = {
        "pi_version": version,
        "kind": kind,
        "installed_at": datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "packages": {name: packages[name] for name in sorted(packages) if name.startswith("@earendil-works/")},
        "sha256": dict(sorted(checksums.items())),
    }
    (folder / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def read_local_source(folder: Path) -> dict[str, Any] | None:
    """The record of a local install in ``folder`` (None when its packages came from the registry)."""
    path = folder / SOURCE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def source_environment(record: dict[str, Any]) -> dict[str, str]:
    """The entries a run's environment gets for a local source: where the packages came from, and its checksums."""
    out = {"local source": str(record.get("kind"))}  # no install time: reinstalling the same source changes nothing
    out |= {f"sha256 {name}": str(value) for name, value in dict(record.get("sha256", {})).items()}
    return out
