"""Chapter 01's package facts and its printed program, as properties whose witnesses are Pi releases.

A witness runs no scenario: its inputs are in `Witness.params` — `facts` (`packages.Facts` of one release, read
from its installed packages or the committed snapshot) for the package claims, `run` (a
`pinb.scenario.reference.BookExampleRun` of the book's program on one release) for the program claims. The
expected values come from the chapter's text (the dependency edges the book draws, the description it quotes, the
lines it says the program prints); the observed ones from the release. The domain is the releases whose facts or
runs are at hand (`releases`), so a difference between releases shows as one.
"""

from __future__ import annotations

from typing import Any

from pinb.chapters.ch01 import packages as pk
from pinb.chapters.ch01.experiments import MIN_NODE, TS_REFUSED, _node_at_least
from pinb.chapters.ch01.program import NAME, printed_output
from pinb.chapters.properties import Premise, Property, Witness

#: The packages the book's graph draws, by short name.
SHORT = {pk.CORE: "pi-agent-core", pk.AI: "pi-ai", pk.APP: "pi-coding-agent", pk.TUI: "pi-tui"}
COMPOSED = ("pi-agent-core", "pi-ai", "pi-tui", "pi-mcp", "pi-codemode", "chord")
#: The edges the book draws ("↑ pi-agent-core pi-ai + typebox"): the core on pi-ai and typebox, pi-ai on no agent.
BOOK_CORE_DEPENDS_ON = ("pi-ai", "typebox")
BOOK_DESCRIPTION = "general-purpose agent with transport abstraction, state management, and attachment support"
PINNED = "1.0.4"


def _no_scenarios(params: Any) -> dict[str, dict[str, Any]]:
    return {}


def releases() -> list[str]:
    """The Pi releases whose package facts are installed or recorded (the package claims' witness domain)."""
    from pinb.errors import PinbError
    from pinb.scenario import reference

    def installed(version: str) -> bool:
        try:
            return reference.is_installed(version)
        except PinbError:  # a release pinb knows no source for
            return False

    recorded = {p.stem.removeprefix("pi-") for p in (reference.reference_dir() / "facts").glob("pi-*.json")}
    return sorted(recorded | {v for v in (PINNED,) if installed(v)})


def facts_witness(version: str) -> Witness:
    facts, why = pk.load_facts(version)
    return Witness(f"pi@{version}", {}, {}, {"facts": facts, "release": version, "why": why})


def recorded_facts_witness(version: str) -> Witness:
    """A release's witness from the committed snapshot only (offline: no registry, no Node)."""
    import json

    from pinb.chapters.ch01 import package_facts as pf
    from pinb.scenario import reference

    facts = pf.recorded_package_facts(version)
    extra: dict[str, Any] = {}
    for name in (pk.CORE, pk.TUI):
        manifest = reference.reference_dir() / f"pi-{version}" / "node_modules" / name / "package.json"
        if manifest.is_file():
            extra[name] = json.loads(manifest.read_text(encoding="utf-8"))
    found = pk.Facts(facts, f"recorded snapshot read {facts.read_at}", extra)
    return Witness(f"pi@{version}", {}, {}, {"facts": found, "release": version, "why": ""})


def _facts(w: Witness) -> Any:
    return w.params.get("facts")


def _has(*names: str) -> Any:
    def premise(w: Witness) -> Premise:
        f = _facts(w)
        if f is None:
            return Premise(False, f"no package facts for Pi {w.params.get('release')}: {w.params.get('why')}")
        missing = [SHORT.get(n, n) for n in names if n not in f.facts.manifests]
        if missing:
            return Premise(False, f"Pi {f.facts.pi_version}'s package set has no {missing}")
        return Premise(True, f"Pi {f.facts.pi_version}'s packages ({f.source})")

    return premise


def _scoped(deps: dict[str, str]) -> list[str]:
    return sorted(d.split("/")[-1] for d in deps if d.startswith("@earendil-works/"))


def _graph_observed(w: Witness) -> dict[str, Any]:
    f = _facts(w)
    core, ai = pk._deps(f, pk.CORE), pk._deps(f, pk.AI)
    return {
        "pi-agent-core depends on": _scoped(core) + (["typebox"] if f.facts.agent_core_depends_on_typebox else []),
        "pi-ai depends on an agent package": sorted(SHORT[d] for d in (pk.CORE, pk.APP) if d in ai),
    }


GRAPH = Property(
    _no_scenarios,
    _has(pk.CORE, pk.AI),
    lambda w: {"pi-agent-core depends on": sorted(BOOK_CORE_DEPENDS_ON), "pi-ai depends on an agent package": []},
    _graph_observed,
)


def _ai_premise(w: Witness) -> Premise:
    base = _has(pk.AI, pk.CORE)(w)
    if base.holds and not all(n in _facts(w).facts.exports for n in (pk.AI, pk.CORE, pk.APP)):
        return Premise(False, "the run-time exports of pi-ai, pi-agent-core and pi-coding-agent are not all read")
    return base


def _ai_observed(w: Witness) -> dict[str, Any]:
    f = _facts(w)
    exports = f.facts.exports
    ai = set(exports[pk.AI])
    return {
        "exports shared with pi-agent-core (the loop, state, tool execution)": sorted(ai & set(exports[pk.CORE])),
        "exports shared with pi-coding-agent (sessions)": sorted(ai & set(exports[pk.APP])),
        "depends on or imports an agent package": sorted(
            {SHORT[n] for n in (pk.CORE, pk.APP) if n in pk._deps(f, pk.AI)} | set(f.facts.ai_importers_of_core_or_app)
        ),
    }


AI_MODEL_ACCESS_ONLY = Property(
    _no_scenarios,
    _ai_premise,
    lambda w: {
        "exports shared with pi-agent-core (the loop, state, tool execution)": [],
        "exports shared with pi-coding-agent (sessions)": [],
        "depends on or imports an agent package": [],
    },
    _ai_observed,
)

COMPOSES = Property(
    _no_scenarios,
    _has(pk.APP),
    lambda w: sorted(COMPOSED),
    lambda w: sorted(d for d in _scoped(pk._deps(_facts(w), pk.APP)) if d in COMPOSED),
)


def _no_tui_observed(w: Witness) -> dict[str, Any]:
    f = _facts(w)
    tui = f.extra.get(pk.TUI)
    return {
        "pi-agent-core declares pi-tui": f.facts.agent_core_depends_on_tui,
        "pi-agent-core's dist imports pi-tui": f.facts.agent_core_imports_tui,
        "pi-tui depends on an agent or model package": sorted(
            SHORT[d] for d in (pk.CORE, pk.APP, pk.AI) if d in (tui or {}).get("dependencies", {})
        ),
    }


def _no_tui_premise(w: Witness) -> Premise:
    base = _has(pk.CORE)(w)
    if base.holds and _facts(w).extra.get(pk.TUI) is None:
        return Premise(False, "pi-tui is not in this release's package set")
    return base


CORE_NO_TUI = Property(
    _no_scenarios,
    _no_tui_premise,
    lambda w: {
        "pi-agent-core declares pi-tui": False,
        "pi-agent-core's dist imports pi-tui": False,
        "pi-tui depends on an agent or model package": [],
    },
    _no_tui_observed,
)


def _description_premise(w: Witness) -> Premise:
    f = _facts(w)
    if f is None or f.extra.get(pk.CORE) is None:
        return Premise(False, "pi-agent-core's package.json is not at hand for this release")
    return Premise(True, f"pi-agent-core {f.extra[pk.CORE].get('version')}'s package.json")


CORE_DESCRIPTION = Property(
    _no_scenarios,
    _description_premise,
    lambda w: True,
    lambda w: BOOK_DESCRIPTION in str(_facts(w).extra[pk.CORE].get("description", "")).lower(),
    words=lambda v: "the book's words are in the description" if v else "the book's words are not in it",
)

SIZE = Property(
    _no_scenarios,
    _has(pk.CORE),
    lambda w: f"{pk.SIXTY_KB[0]}–{pk.SIXTY_KB[1]} bytes",
    lambda w: _facts(w).facts.agent_core_dist.js_bytes,
    agree=lambda expected, observed: pk.SIXTY_KB[0] <= observed <= pk.SIXTY_KB[1],
    words=lambda v: f"{v} bytes of JavaScript" if isinstance(v, int) else str(v),
)

PINNED_RELEASE = Property(
    _no_scenarios,
    lambda w: Premise(
        _facts(w) is not None and PINNED in _facts(w).facts.version_exists,
        f"the registry's versions as read {pk.registry_time(_facts(w).facts)}" if _facts(w) else "no facts",
    ),
    lambda w: {f"pi-agent-core {PINNED} published": True},
    lambda w: {f"pi-agent-core {PINNED} published": bool(_facts(w).facts.version_exists.get(PINNED))},
)

# --- the book's program, run by Node ----------------------------------------------------------------------------


def program_witness(version: str) -> Witness:
    from pinb.errors import PinbError
    from pinb.scenario import reference

    try:
        run: Any = reference.recorded_book_example(NAME, version)
    except PinbError as error:
        run, why = None, str(error)
    else:
        why = ""
    return Witness(f"pi@{version}", {}, {}, {"run": run, "release": version, "why": why})


def _run(w: Witness) -> Any:
    return w.params.get("run")


def _ran(w: Witness) -> Premise:
    run = _run(w)
    if run is None:
        return Premise(False, f"no run of the book's program on Pi {w.params.get('release')}: {w.params.get('why')}")
    return Premise(True, f"the book's program, verbatim, run by Node {run.node} on Pi {run.pi_version}")


def _printed(w: Witness) -> Any:
    run = _run(w)
    if run.exit_code != 0:
        error = next((ln.strip() for ln in run.stderr_head if "Error" in ln.split(":")[0]), "no error line")
        return [f"(exit code {run.exit_code}) {error}"]
    return run.stdout.splitlines()


THREE_LINES_BOOK = Property(_no_scenarios, _ran, lambda w: printed_output(), _printed)
RUNS_ON_PINNED = Property(_no_scenarios, _ran, lambda w: printed_output(), _printed)


def _typescript_observed(w: Witness) -> dict[str, Any]:
    from pinb.chapters.ch01.experiments import AT_IMPORT

    run = _run(w)
    refused = next((m for m in TS_REFUSED if any(m in ln for ln in run.stderr_head)), None)
    return {
        f"Node {MIN_NODE[0]}.{MIN_NODE[1]} or newer": _node_at_least(run.node, MIN_NODE),
        "run as `node <file>.ts`, no flag or compile step": len(run.command) == 2 and run.command[1].endswith(".ts"),
        "Node refused the TypeScript": refused is not None,
        "Node got past parsing the file": run.exit_code == 0
        or any(m in ln for ln in run.stderr_head for m in AT_IMPORT),
    }


NODE_RUNS_TYPESCRIPT = Property(
    _no_scenarios,
    _ran,
    lambda w: {
        f"Node {MIN_NODE[0]}.{MIN_NODE[1]} or newer": True,
        "run as `node <file>.ts`, no flag or compile step": True,
        "Node refused the TypeScript": False,
        "Node got past parsing the file": True,
    },
    _typescript_observed,
)

#: Claims over package facts (witness: `facts_witness(release)`) and over the program's runs (`program_witness`).
FACT_PROPERTIES: dict[str, Property] = {
    "packages.graph": GRAPH,
    "packages.ai-model-access-only": AI_MODEL_ACCESS_ONLY,
    "packages.coding-agent-composes": COMPOSES,
    "packages.core-no-tui": CORE_NO_TUI,
    "packages.core-description": CORE_DESCRIPTION,
    "packages.core-size": SIZE,
    "packages.pinned-release": PINNED_RELEASE,
}
PROGRAM_PROPERTIES: dict[str, Property] = {
    "example.three-lines": THREE_LINES_BOOK,
    "example.node-runs-typescript": NODE_RUNS_TYPESCRIPT,
    "example.runs-on-pinned-packages": RUNS_ON_PINNED,
}

__all__ = [
    "FACT_PROPERTIES",
    "PROGRAM_PROPERTIES",
    "facts_witness",
    "program_witness",
    "recorded_facts_witness",
    "releases",
]
