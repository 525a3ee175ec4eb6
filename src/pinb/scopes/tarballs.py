"""Each published release's tarball, as the registry serves it: fetched with `npm pack`, checked against the
integrity hash of the registry record, unpacked into a cache under `reference/.tarballs/` (never committed)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pinb.errors import ReferenceError_

_STRICT = ConfigDict(frozen=True, extra="forbid")
PACKAGE = "@earendil-works/pi-coding-agent"
#: The published release nearest the book's pin (1.0.4 is not on the registry): the matrix starts here.
FIRST_RELEASE = "1.0.3"
NPM_TIMEOUT_S = 300
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


class Release(BaseModel):
    """A release as the registry records it."""

    model_config = _STRICT

    package: str
    version: str
    integrity: str
    tarball: str
    published: str
    """The registry's publish time of this version (its `time` record)."""


def version_key(version: str) -> tuple[int, int, int]:
    match = _SEMVER.match(version)
    if not match:
        raise ReferenceError_(f"{version!r} is not a release version (major.minor.patch)")
    return (int(match[1]), int(match[2]), int(match[3]))


def _npm_json(args: list[str], cwd: Path | None = None) -> object:
    npm = shutil.which("npm")
    if not npm:
        raise ReferenceError_("npm not found: install Node.js with npm to read the published releases")
    try:
        out = subprocess.run(
            [npm, *args, "--json"], cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ReferenceError_(f"npm {' '.join(args)} did not finish (is the npm registry reachable?)") from None
    if out.returncode != 0:
        lines = [line for line in (out.stderr or out.stdout).splitlines() if line.strip()]
        raise ReferenceError_(f"npm {' '.join(args)} failed: {lines[-1] if lines else 'no output'}")
    return json.loads(out.stdout)


def registry_versions(package: str = PACKAGE, first: str = FIRST_RELEASE) -> list[str]:
    """The package's releases on the registry from `first` on, oldest first (pre-releases left out)."""
    listed = _npm_json(["view", package, "versions"])
    versions = [str(v) for v in (listed if isinstance(listed, list) else [listed]) if _SEMVER.match(str(v))]
    return sorted((v for v in versions if version_key(v) >= version_key(first)), key=version_key)


def registry_record(version: str, package: str = PACKAGE) -> Release:
    raw = _npm_json(["view", f"{package}@{version}"])
    if not isinstance(raw, dict) or "dist" not in raw:
        raise ReferenceError_(f"{package}@{version} is not on the npm registry")
    times = raw.get("time") or {}
    return Release(
        package=package,
        version=version,
        integrity=raw["dist"]["integrity"],
        tarball=raw["dist"]["tarball"],
        published=str(times.get(version, "")),
    )


def cache_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "reference" / ".tarballs"


def integrity_of(path: Path) -> str:
    """The file's Subresource Integrity string (`sha512-…`), as npm records it."""
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode("ascii")


def unpacked(release: Release, cache: Path | None = None) -> Path:
    """The release's package folder, unpacked from its tarball (fetched with `npm pack` once, then reused)."""
    folder = (cache or cache_dir()) / f"{release.package.split('/')[-1]}-{release.version}"
    tgz = folder.parent / f"{folder.name}.tgz"
    if not tgz.is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        packed = _npm_json(["pack", f"{release.package}@{release.version}", "--pack-destination", str(folder.parent)])
        name = packed[0]["filename"] if isinstance(packed, list) and packed else ""
        (folder.parent / Path(str(name)).name).replace(tgz)
    if integrity_of(tgz) != release.integrity:
        tgz.unlink()
        raise ReferenceError_(f"{tgz.name} does not match the registry's integrity hash; removed, fetch it again")
    if not (folder / "package" / "package.json").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        with tarfile.open(tgz) as archive:
            archive.extractall(folder, filter="data")
    return folder / "package"


__all__ = ["FIRST_RELEASE", "PACKAGE", "Release", "integrity_of", "registry_record", "registry_versions", "unpacked"]
