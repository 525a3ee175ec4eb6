"""`pinb reference scopes`: fetch each release's tarball, judge every claim's documentation and declarations
scopes on it, and write `reference/facts/scopes/pi-coding-agent-<version>.json`."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from pinb.errors import ReferenceError_
from pinb.scopes import declarations
from pinb.scopes.facts import ReleaseFacts, release_facts, write_facts
from pinb.scopes.tarballs import PACKAGE, registry_record, registry_versions, unpacked, version_key

Progress = Callable[[str], None]


def typescript_dir(progress: Progress) -> Path:
    """The pinned `typescript` package (reference/typescript/), installed with `npm ci` when it is not there."""
    folder = Path(__file__).resolve().parents[3] / "reference" / "typescript"
    module = folder / "node_modules" / "typescript"
    if not (module / "package.json").is_file():
        npm = shutil.which("npm")
        if not npm:
            raise ReferenceError_("npm not found: the declarations scope needs it to install TypeScript")
        progress("npm ci in reference/typescript (the TypeScript compiler API) ...")
        out = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True)
        if out.returncode != 0:
            raise ReferenceError_(
                f"installing TypeScript: npm ci failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}"
            )
    return module


def _node() -> Path:
    found = shutil.which("node")
    if found:
        return Path(found)
    from pinb.scenario.reference import node_path

    return node_path()


def resolve_versions(asked: list[str]) -> list[str]:
    """`all` is every registry release from the first of the matrix on; otherwise the versions given."""
    versions: list[str] = []
    for item in asked:
        versions.extend(registry_versions() if item == "all" else [item])
    for version in versions:
        version_key(version)
    return sorted(dict.fromkeys(versions), key=version_key)


def generate(asked: list[str], progress: Progress, folder: Path | None = None) -> list[ReleaseFacts]:
    from pinb.chapters.registry import folders

    ledgers = [found.ledger for found in folders().values()]
    versions = resolve_versions(asked)
    module = typescript_dir(progress)
    ts_version = json.loads((module / "package.json").read_text(encoding="utf-8"))["version"]
    node = _node()
    method = (
        f"npm pack of the registry tarball, checked against its integrity hash; Markdown read as text; .d.ts read by "
        f"the TypeScript {ts_version} compiler API (reference/declarations.mjs)"
    )
    everything = registry_versions()
    written: list[ReleaseFacts] = []
    for version in versions:
        earlier = [v for v in everything if version_key(v) < version_key(version)]
        previous = earlier[-1] if earlier else ""
        progress(f"{PACKAGE}@{version}: registry record and tarball ...")
        release = registry_record(version)
        package_dir = unpacked(release)

        def shapes(package: Path, symbols: list[str]) -> dict[str, declarations.Shape | None]:
            return declarations.read_shapes(module, package, symbols, node)

        facts = release_facts(release, package_dir, ledgers, shapes, previous, method)
        path = write_facts(facts, folder)
        held = sum(r.verdict == "holds" for r in facts.results)
        progress(f"  {len(facts.results)} scope result(s), {held} hold: {path.name}")
        written.append(facts)
    return written


__all__ = ["generate", "resolve_versions", "typescript_dir"]
