"""Facts about Pi's published packages that chapter 01 makes claims about, read from the real packages.

Read live (:func:`package_facts`) from the installed reference package set of one Pi version and from the npm
registry; or offline (:func:`recorded_package_facts`) from the snapshot committed in ``reference/facts/``, which
records when and how it was read. Every value is observed, none is typed in.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pinb.errors import ReferenceError_
from pinb.files import write_atomic
from pinb.scenario import reference, registry

SCOPE = "@earendil-works"
CORE = f"{SCOPE}/pi-agent-core"
AI = f"{SCOPE}/pi-ai"
APP = f"{SCOPE}/pi-coding-agent"
TUI = f"{SCOPE}/pi-tui"
DEFAULT_VERSIONS_TO_CHECK: tuple[str, ...] = ("1.0.3", "1.0.4", "1.6.0")


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PackageManifest(_Data):
    """One package's declared dependencies, as published."""

    name: str
    version: str
    dependencies: dict[str, str]
    source: str  # "installed" (its package.json in the reference folder) or "registry" (npm view)


class DistSize(_Data):
    """The size of a package's shipped ``dist/`` folder."""

    all_files_bytes: int
    all_files_count: int
    js_bytes: int
    js_count: int


class PackageFacts(_Data):
    """Chapter 01's package claims, observed for one Pi version."""

    pi_version: str
    read_at: str
    how: str
    node: str
    manifests: dict[str, PackageManifest]
    agent_core_depends_on_tui: bool
    agent_core_imports_tui: bool
    agent_core_tui_importers: tuple[str, ...]
    agent_core_depends_on_typebox: bool
    ai_depends_on_typebox: bool
    agent_core_dist: DistSize
    agent_core_published_versions: tuple[str, ...]
    version_exists: dict[str, bool]
    ai_exports_type: bool
    coding_agent_installable: bool
    coding_agent_missing_dependencies: dict[str, str]
    exports: dict[str, tuple[str, ...]] = {}
    """Each installed package's run-time export names (its main module imported by Node)."""
    ai_importers_of_core_or_app: tuple[str, ...] = ()
    """pi-ai's dist files that name pi-agent-core or pi-coding-agent."""
    registry_read_at: dict[str, str] = {}
    """When the registry document of each package these facts use was read (empty in older snapshots: then
    ``read_at`` is that time)."""


# --- registry --------------------------------------------------------------------------------------------------------


def registry_versions(package: str) -> tuple[str, ...]:
    """Every version of ``package`` published on the npm registry (raises offline, in one line)."""
    return tuple(registry.document(package).versions)


def registry_dependencies(package: str, version: str) -> dict[str, str] | None:
    """The declared dependencies of ``package@version`` on the registry; ``None`` when that version does not exist."""
    return registry.document(package).dependencies(version)


def _any_version_satisfies(package: str, spec: str) -> bool:
    """Whether the registry has a version of ``package`` that the npm range ``spec`` accepts."""
    return bool(registry.document(package).satisfying(spec))


def _registry_read_at(*packages: str) -> dict[str, str]:
    """When each registry document used was read (it may be a cached one: its own time, not now)."""
    return {package: registry.document(package).read_at for package in packages}


# --- installed packages ----------------------------------------------------------------------------------------------


def _installed(version: str, package: str) -> Path:
    return reference.packages_dir(version) / "node_modules" / package


def _manifest(version: str, package: str) -> PackageManifest:
    folder = _installed(version, package)
    if (folder / "package.json").is_file():
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
        return PackageManifest(
            name=package, version=data["version"], dependencies=data.get("dependencies", {}), source="installed"
        )
    deps = registry_dependencies(package, version)
    if deps is None:
        raise ReferenceError_(f"{package}@{version} is neither installed nor published")
    return PackageManifest(name=package, version=version, dependencies=deps, source="registry")


def _dist_size(folder: Path) -> DistSize:
    files = [p for p in folder.rglob("*") if p.is_file()]
    js = [p for p in files if p.suffix == ".js"]
    return DistSize(
        all_files_bytes=sum(p.stat().st_size for p in files),
        all_files_count=len(files),
        js_bytes=sum(p.stat().st_size for p in js),
        js_count=len(js),
    )


def _importers(dist: Path, *packages: str) -> tuple[str, ...]:
    """The JavaScript files under ``dist`` that name any of ``packages``."""
    return tuple(
        str(p.relative_to(dist))
        for p in sorted(dist.rglob("*.js"))
        if any(package in p.read_text(encoding="utf-8", errors="replace") for package in packages)
    )


def _export_names(version: str, package: str) -> tuple[str, ...]:
    """The names the package's main module exports at run time (imported by Node, not guessed from text)."""
    folder = _installed(version, package)
    data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    entry = (data.get("exports", {}).get(".", {}) or {}).get("import") or data.get("main", "index.js")
    script = (
        f"import({json.dumps((folder / entry).resolve().as_uri())})"
        f".then((m) => process.stdout.write(JSON.stringify(Object.keys(m))))"
    )
    out = subprocess.run(
        [str(reference.node_path()), "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if out.returncode != 0:
        raise ReferenceError_(f"importing {package}@{version} failed: {reference._first_error_line(out.stderr)}")
    return tuple(sorted(json.loads(out.stdout)))


def package_facts(version: str, versions_to_check: tuple[str, ...] = DEFAULT_VERSIONS_TO_CHECK) -> PackageFacts:
    """Read chapter 01's package facts for Pi ``version`` from its installed reference set and the npm registry."""
    if not reference.is_installed(version):
        raise ReferenceError_(f"Pi {version} is not installed: run `pinb reference install --pi-version {version}`")
    core = _manifest(version, CORE)
    ai = _manifest(version, AI)
    app = _manifest(version, APP)
    scoped = [dep for dep in app.dependencies if dep.startswith(SCOPE)]
    missing = {dep: app.dependencies[dep] for dep in scoped if not _any_version_satisfies(dep, app.dependencies[dep])}
    dist = _installed(version, CORE) / "dist"
    importers = _importers(dist, TUI)
    published = registry_versions(CORE)
    exports = {
        package: _export_names(version, package)
        for package in (AI, CORE, APP)
        if (_installed(version, package) / "package.json").is_file()
    }
    return PackageFacts(
        pi_version=version,
        read_at=datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        how=f"pinb.scenario.package_facts: package.json and dist/ of the packages installed from "
        f"reference/pi-{version}/package-lock.json, `npm view` on the public npm registry (each package's "
        f"document read once, at registry_read_at), and an import of each installed package's main module in Node",
        node=reference.node_version(),
        manifests={m.name: m for m in (core, ai, app)},
        agent_core_depends_on_tui=TUI in core.dependencies,
        agent_core_imports_tui=bool(importers),
        agent_core_tui_importers=importers,
        agent_core_depends_on_typebox="typebox" in core.dependencies,
        ai_depends_on_typebox="typebox" in ai.dependencies,
        agent_core_dist=_dist_size(dist),
        agent_core_published_versions=published,
        version_exists={v: v in published for v in versions_to_check},
        ai_exports_type="Type" in exports[AI],
        coding_agent_installable=not missing,
        coding_agent_missing_dependencies=missing,
        exports=exports,
        ai_importers_of_core_or_app=_importers(_installed(version, AI) / "dist", CORE, APP),
        registry_read_at=_registry_read_at(CORE, *(m.name for m in (ai, app) if m.source == "registry"), *scoped),
    )


# --- recorded snapshot -----------------------------------------------------------------------------------------------


def facts_path(version: str) -> Path:
    return reference.reference_dir() / "facts" / f"pi-{version}.json"


def recorded_package_facts(version: str) -> PackageFacts:
    """The committed snapshot of :func:`package_facts` for ``version`` (offline; says when and how it was read)."""
    path = facts_path(version)
    if not path.is_file():
        raise ReferenceError_(f"no recorded package facts for Pi {version} ({path.name}); run record_package_facts")
    return PackageFacts.model_validate_json(path.read_text(encoding="utf-8"))


def record_package_facts(version: str) -> PackageFacts:
    """Read the facts live and write them to ``reference/facts/pi-<version>.json``."""
    facts = package_facts(version)
    path = facts_path(version)
    path.parent.mkdir(exist_ok=True)
    write_atomic(path, facts.model_dump_json(indent=2) + "\n")
    return facts
