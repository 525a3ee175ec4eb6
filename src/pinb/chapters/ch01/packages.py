"""Chapter 01's claims about the published packages, judged from `package_facts` (pi backend only).

The facts are read live from the installed reference packages and the npm registry; offline, from the snapshot
committed with the reference packages, which says when it was read. The book states its package graph "at version
1.0.4"; each finding names the version it observed, so a difference between releases shows as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pinb.chapters.experiments import Finding

CORE = "@earendil-works/pi-agent-core"
AI = "@earendil-works/pi-ai"
APP = "@earendil-works/pi-coding-agent"
TUI = "@earendil-works/pi-tui"
SIXTY_KB = (45_000, 75_000)


@dataclass
class Facts:
    """Package facts plus what the judges need beyond them (read from installed package.json files)."""

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


def _at(f: Facts) -> str:
    return f"Pi {f.facts.pi_version} ({f.source})"


def judge_graph(f: Facts) -> Finding:
    core, ai = _deps(f, CORE), _deps(f, AI)
    core_scoped = sorted(d for d in core if d.startswith("@earendil-works/"))
    ai_is_leaf = not any(d in ai for d in (CORE, APP))
    holds = core_scoped == [AI] and f.facts.agent_core_depends_on_typebox and ai_is_leaf
    return Finding(
        holds,
        f"{_at(f)}: pi-agent-core depends on {sorted(core)}; on typebox: {f.facts.agent_core_depends_on_typebox}; "
        f"pi-ai depends on neither pi-agent-core nor pi-coding-agent: {ai_is_leaf}",
        "the book states the graph at 1.0.4",
    )


def judge_ai_model_access_only(f: Facts) -> Finding | None:
    """pi-ai has no loop, tool execution or session: it shares no export with the packages that do, nor uses them.

    The loop, state and tool execution are what pi-agent-core exports and sessions are what pi-coding-agent exports,
    both read from the real packages; a loop pi-ai shipped under a name of its own would not be seen.
    """
    exports = f.facts.exports
    if not all(name in exports for name in (AI, CORE, APP)):
        return None
    ai = set(exports[AI])
    with_core = sorted(ai & set(exports[CORE]))
    with_app = sorted(ai & set(exports[APP]))
    depends = sorted(name for name in (CORE, APP) if name in _deps(f, AI))
    importers = list(f.facts.ai_importers_of_core_or_app)
    sessions = [name for name in exports[APP] if "Session" in name]
    return Finding(
        not (with_core or with_app or depends or importers),
        f"{_at(f)}: pi-ai exports {len(ai)} names. Shared with pi-agent-core's exports {list(exports[CORE])}: "
        f"{with_core or 'none'}. Shared with pi-coding-agent's {len(exports[APP])} exports (those naming a session: "
        f"{sessions}): {with_app or 'none'}. pi-ai declares a dependency on {depends or 'neither'}; its dist files "
        f"naming either package: {importers or 'none'}",
        "a loop, tool runner or session store pi-ai exported under a name of its own would not be seen",
    )


def judge_coding_agent(f: Facts) -> Finding:
    app = _deps(f, APP)
    wanted = [CORE, AI, TUI, "@earendil-works/pi-mcp", "@earendil-works/pi-codemode", "@earendil-works/chord"]
    present = {name.split("/")[-1]: name in app for name in wanted}
    return Finding(all(present.values()), f"{_at(f)}: pi-coding-agent declares {present}")


def judge_core_no_tui(f: Facts) -> Finding:
    tui = f.extra.get(TUI)
    tui_deps = sorted((tui or {}).get("dependencies", {}))
    tui_clean = tui is None or not any(d in tui_deps for d in (CORE, APP, AI))
    holds = not f.facts.agent_core_depends_on_tui and not f.facts.agent_core_imports_tui and tui_clean
    tui_note = f"pi-tui depends on {tui_deps}" if tui is not None else "pi-tui is not in this package set"
    return Finding(
        holds,
        f"{_at(f)}: pi-agent-core declares pi-tui: {f.facts.agent_core_depends_on_tui}; its dist imports pi-tui: "
        f"{f.facts.agent_core_imports_tui}; {tui_note}",
    )


def judge_core_description(f: Facts) -> Finding | None:
    core = f.extra.get(CORE)
    if core is None:
        return None
    description = str(core.get("description", ""))
    expected = "general-purpose agent with transport abstraction, state management, and attachment support"
    return Finding(expected.lower() in description.lower(), f"{_at(f)}: pi-agent-core's description is {description!r}")


def judge_core_size(f: Facts) -> Finding:
    dist = f.facts.agent_core_dist
    low, high = SIXTY_KB
    return Finding(
        low <= dist.js_bytes <= high,
        f"{_at(f)}: pi-agent-core's dist has {dist.js_count} JavaScript files, {dist.js_bytes} bytes "
        f"({dist.all_files_bytes} bytes with maps and declarations)",
        f"'about sixty kilobytes' read as {low}–{high} bytes of JavaScript",
    )


def judge_pinned_release(f: Facts) -> Finding:
    exists = f.facts.version_exists
    checked = registry_time(f.facts)
    return Finding(
        bool(exists.get("1.0.4")),
        f"pi-agent-core 1.0.4 on the npm registry as of {checked}: {exists.get('1.0.4')} (versions checked: {exists}; "
        f"{f.source})",
    )


JUDGES = {
    "packages.graph": judge_graph,
    "packages.ai-model-access-only": judge_ai_model_access_only,
    "packages.coding-agent-composes": judge_coding_agent,
    "packages.core-no-tui": judge_core_no_tui,
    "packages.core-description": judge_core_description,
    "packages.core-size": judge_core_size,
    "packages.pinned-release": judge_pinned_release,
}
