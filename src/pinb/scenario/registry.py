"""The npm registry's document of a package, read once and kept for a day: every version and its dependencies.

One ``npm view <package>@>=0.0.0-0 version dependencies --json`` reads them all (npm's own configuration, proxy
and authentication apply). The answer is kept in this process and on disk in the user's cache folder
(``$PINB_CACHE_DIR``, else ``~/.cache/pinb``; ``registry/``) with the time it was read, for
:data:`DEFAULT_MAX_AGE_S` (``$PINB_REGISTRY_MAX_AGE`` seconds; 0 reads the registry every time). Whoever cites a
registry fact cites that time (:attr:`RegistryDocument.read_at`), not the time it was used. Version ranges are
matched with npm's semantics by ``semantic_version.NpmSpec``, never by hand.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from datetime import UTC, datetime, timedelta

import semantic_version  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, ValidationError

from pinb.errors import ReferenceError_
from pinb.files import FileError, user_cache_dir, write_atomic
from pinb.scenario import reference

MAX_AGE_ENV = "PINB_REGISTRY_MAX_AGE"
DEFAULT_MAX_AGE_S = 24 * 3600
#: Every published version, prereleases included.
_EVERY_VERSION = ">=0.0.0-0"
_TIMEOUT_S = 120


class RegistryDocument(BaseModel):
    """What the registry published for one package, as read at one time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str
    read_at: str
    """When the registry was read (UTC, ``2026-12-01T17:02:15Z``)."""
    exists: bool
    versions: dict[str, dict[str, str]]
    """Each published version and its declared dependencies, in the registry's order."""

    def dependencies(self, version: str) -> dict[str, str] | None:
        """``version``'s declared dependencies; None when that version was not published."""
        found = self.versions.get(version)
        return dict(found) if found is not None else None

    def satisfying(self, spec: str) -> list[str]:
        """The published versions an npm range (``^1.0.3``, ``1.6.0``, ``>=1 <2``) accepts."""
        try:
            accepts = semantic_version.NpmSpec(spec)
        except ValueError:
            raise ReferenceError_(f"{self.package}: {spec!r} is not an npm version range") from None
        return [v for v in self.versions if _parsed(v) is not None and _parsed(v) in accepts]


def _parsed(version: str) -> semantic_version.Version | None:
    try:
        return semantic_version.Version(version)
    except ValueError:
        return None


_memo: dict[str, RegistryDocument] = {}
_lock = threading.Lock()


def document(package: str) -> RegistryDocument:
    """``package``'s registry document: from this process, else the disk cache while it is younger than the
    maximum age, else read from the registry now (and cached). Raises :class:`ReferenceError_` in one line when
    the registry cannot be reached or npm fails."""
    with _lock:
        if package in _memo:
            return _memo[package]
        max_age = max_age_s()
        found = _cached(package, max_age) if max_age > 0 else None
        if found is None:
            found = _read(package)
            _store(found)
        _memo[package] = found
        return found


def forget() -> None:
    """Drop this process's documents (the disk cache stays)."""
    with _lock:
        _memo.clear()


def max_age_s() -> float:
    raw = os.environ.get(MAX_AGE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_AGE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ReferenceError_(f"{MAX_AGE_ENV}={raw!r} is not a number of seconds (0 reads the registry every time)")
    return value


def _path(package: str) -> str:
    return str(user_cache_dir() / "registry" / (re.sub(r"[^A-Za-z0-9._-]", "_", package) + ".json"))


def _cached(package: str, max_age: float) -> RegistryDocument | None:
    try:
        with open(_path(package), encoding="utf-8") as handle:
            found = RegistryDocument.model_validate_json(handle.read())
        read_at = datetime.strptime(found.read_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (OSError, ValueError, ValidationError):
        return None  # no cache, or one this pinb cannot read: the registry is asked
    age = datetime.now(UTC) - read_at
    if found.package != package or age < timedelta(0) or age > timedelta(seconds=max_age):
        return None
    return found


def _store(found: RegistryDocument) -> None:
    path = user_cache_dir() / "registry"
    try:
        path.mkdir(parents=True, exist_ok=True)
        write_atomic(_path(found.package), found.model_dump_json(indent=1) + "\n")
    except (OSError, FileError):
        pass  # no writable cache folder: the next process asks the registry again


def _read(package: str) -> RegistryDocument:
    read_at = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    command = [reference._npm(), "view", f"{package}@{_EVERY_VERSION}", "version", "dependencies", "--json"]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise ReferenceError_(f"npm view {package}: the npm registry did not answer within {_TIMEOUT_S} s") from None
    if out.returncode != 0:
        text = (out.stderr or out.stdout).strip()
        if "E404" in text:
            return RegistryDocument(package=package, read_at=read_at, exists=False, versions={})
        if any(marker in text for marker in reference._NETWORK_ERRORS):
            raise ReferenceError_(f"cannot reach the npm registry for {package} ({reference._first_error_line(text)})")
        raise ReferenceError_(f"npm view {package} failed: {reference._first_error_line(text)}")
    try:
        data = json.loads(out.stdout) if out.stdout.strip() else []
    except ValueError:
        raise ReferenceError_(f"npm view {package}: its answer is not JSON") from None
    entries = data if isinstance(data, list) else [data]  # npm answers one matching version with an object
    versions: dict[str, dict[str, str]] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("version"), str):
            deps = entry.get("dependencies")
            versions[entry["version"]] = {str(k): str(v) for k, v in deps.items()} if isinstance(deps, dict) else {}
    return RegistryDocument(package=package, read_at=read_at, exists=True, versions=versions)


__all__ = ["DEFAULT_MAX_AGE_S", "MAX_AGE_ENV", "RegistryDocument", "document", "forget", "max_age_s"]
