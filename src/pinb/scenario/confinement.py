"""What code given to real Pi may touch: Node's permission model and a network namespace around every Node process.

A scenario's extension ``source`` and a book's program are code from outside pinb. They run under Node's permission
model: reads limited to the Pi package set, the runner files and the run's own temporary folder, writes to that
folder only, and no child processes, worker threads, native addons or WASI (Node grants none of those unless asked).
Node 22 has no network control of its own, so the process also runs in a fresh network namespace (``unshare -n``,
or ``unshare -rn`` in a user namespace) with no interface but a loopback that is down, where the kernel allows it.
:class:`Confinement` says which of the two was in force; a run records it.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pinb.errors import ReferenceError_

#: What Pi looks for in every folder above its working directory (context files, the git root, skills). The run may
#: read these exact paths (Node's permission model would otherwise make Pi's existence checks throw), so none of
#: them may exist above the run's folder: :func:`check_ancestors` refuses the run when one does.
ANCESTOR_NAMES = (
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
    ".git",
    ".agents",
    ".agents/skills",
    ".pi",
)

TRUST_FLAG = "--trust-extension-code"


class Confinement(BaseModel):
    """Which confinement a Node process ran under (recorded with the run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    node_permissions: bool
    """Node's permission model: reads and writes limited, no child processes, workers, addons or WASI."""
    network_namespace: str | None
    """``unshare -n`` or ``unshare -rn`` when the process had no network, else None."""

    @property
    def complete(self) -> bool:
        return self.node_permissions and self.network_namespace is not None

    def describe(self) -> str:
        parts = ["Node permission model" if self.node_permissions else "no Node permission model"]
        parts.append(f"no network ({self.network_namespace})" if self.network_namespace else "network not confined")
        return ", ".join(parts)


@cache
def network_namespace() -> tuple[str, ...] | None:
    """The command prefix that runs a process without network here, or None when the kernel refuses both."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for flags in ("-n", "-rn"):
        try:
            probe = subprocess.run([unshare, flags, "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return (unshare, flags)
    return None


@cache
def node_has_permissions(node: str) -> bool:
    """Whether this Node binary has the (non-experimental) permission model: ``--permission``."""
    try:
        probe = subprocess.run(
            [node, "--permission", "-e", "require('node:fs').readFileSync('/etc/hostname')"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode != 0 and b"ERR_ACCESS_DENIED" in probe.stderr


def available(node: str | Path) -> Confinement:
    prefix = network_namespace()
    return Confinement(
        node_permissions=node_has_permissions(str(node)),
        network_namespace=f"unshare {prefix[1]}" if prefix else None,
    )


def _ancestor_paths(folder: Path) -> list[Path]:
    return [parent / name for parent in folder.resolve().parents for name in ANCESTOR_NAMES]


def check_ancestors(folder: Path) -> None:
    """Refuse a run folder with a context file, git folder or skills folder above it: Pi would read it into the run."""
    for path in _ancestor_paths(folder):
        if path.exists():
            raise ReferenceError_(
                f"{path} would reach the real-Pi run (Pi reads it from every folder above its own): "
                "remove it, or set TMPDIR to a folder with none above it"
            )


def command(
    node: str | Path,
    arguments: list[str],
    *,
    read: list[Path],
    write: Path,
    confinement: Confinement,
    ancestors: bool = True,
) -> list[str]:
    """The command that runs ``node arguments`` under ``confinement``: ``read`` and ``write`` (a folder) are what
    the process may read and write, besides (with ``ancestors``) the names Pi probes above ``write``."""
    flags: list[str] = []
    if confinement.node_permissions:
        flags.append("--permission")
        readable = [*read, write, *(_ancestor_paths(write) if ancestors else [])]
        flags += [f"--allow-fs-read={path}" for path in dict.fromkeys(str(p) for p in readable)]
        flags.append(f"--allow-fs-write={write}")
    prefix = list(network_namespace() or ()) if confinement.network_namespace else []
    return [*prefix, str(node), *flags, *arguments]


def refuse_unconfined(confinement: Confinement, what: str, *, trusted: bool) -> None:
    """Raise unless ``what`` (extension or book code) may run: confinement complete, or the user trusts it."""
    if confinement.complete or trusted:
        return
    raise ReferenceError_(
        f"refusing to run {what} on real Pi unconfined ({confinement.describe()}): this machine cannot confine it; "
        f"pass {TRUST_FLAG} to run it anyway (the run records that)"
    )
