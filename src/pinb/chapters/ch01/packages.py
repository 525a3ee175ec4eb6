"""The published packages' facts chapter 01's package claims are judged from (pi backend only; their properties
are in `props_packages`).

The facts are read live from the installed reference packages and the npm registry; offline, from the snapshot
committed with the reference packages, which says when it was read. The book states its package graph "at version
1.0.4"; each finding names the version it observed, so a difference between releases shows as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CORE = "@earendil-works/pi-agent-core"
AI = "@earendil-works/pi-ai"
APP = "@earendil-works/pi-coding-agent"
TUI = "@earendil-works/pi-tui"
SIXTY_KB = (45_000, 75_000)


@dataclass
class Facts:
    """Package facts plus what the properties need beyond them (read from installed package.json files)."""

    facts: Any
    source: str
    """`live` or `recorded <date>`."""
    extra: dict[str, Any] = field(default_factory=dict)


def load_facts(version: str) -> tuple[Facts | None, str]:
    """Facts for Pi `version`, or None and why they cannot be had."""
    from pinb.chapters.ch01 import package_facts as pf
    from pinb.errors import PinbError
    from pinb.scenario import reference

    try:
        facts = pf.package_facts(version)
        source = f"live; npm registry read {registry_time(facts)}"
    except PinbError as live_error:
        try:
            facts = pf.recorded_package_facts(version)
        except PinbError:
            return None, f"package facts for Pi {version} are unavailable: {live_error}"
        source = f"recorded snapshot read {facts.read_at} (live read failed: {live_error})"
    extra: dict[str, Any] = {}
    modules = reference.packages_dir(version) / "node_modules"
    for name in (CORE, TUI):
        manifest = modules / name / "package.json"
        if manifest.is_file():
            extra[name] = json.loads(manifest.read_text(encoding="utf-8"))
    return Facts(facts, source, extra), ""


def registry_time(facts: Any) -> str:
    """When the registry's answers in ``facts`` were read (a cached document keeps its own time)."""
    return str(getattr(facts, "registry_read_at", {}).get(CORE) or facts.read_at)


def _deps(f: Facts, name: str) -> dict[str, str]:
    manifest = f.facts.manifests.get(name)
    return dict(manifest.dependencies) if manifest is not None else {}
