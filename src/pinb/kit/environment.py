"""What a run ran on: interpreter, platform, package versions, the git state, and for `pi@…` runs Node and Pi."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from pinb import __version__
from pinb.kit.record import Environment

_PACKAGES = ("papermill", "nbclient", "ipykernel", "pydantic", "nbformat")


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


_OUTPUT_DIRS = (":(exclude)runs", ":(exclude)reports", ":(exclude)README.md")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def runtime_dependencies() -> tuple[str, ...]:
    """The distributions pinb itself requires (its extras aside), as its installed metadata names them."""
    try:
        requirements = metadata.requires("pinb") or []
    except metadata.PackageNotFoundError:  # pinb run from a source tree without being installed
        return _PACKAGES
    names = []
    for requirement in requirements:
        if "extra ==" in requirement.replace("extra==", "extra =="):
            continue
        found = _REQUIREMENT_NAME.match(requirement)
        if found and found.group(1).lower() not in names:
            names.append(found.group(1).lower())
    return tuple(names)


def reuse_key(backend: str) -> dict[str, str]:
    """The environment that can change a run's outcomes: `pinb verify` re-uses a run only where this is equal.

    Python's version, the operating system and machine type (not the kernel build), the version of each of pinb's
    runtime dependencies, and for `pi@…` runs the Node version and every resolved `@earendil-works/*` version.
    """
    key = {"python": platform.python_version(), "platform": f"{platform.system()}-{platform.machine()}"}
    key |= {name: package_version(name) or "not installed" for name in runtime_dependencies()}
    if backend.startswith("pi@"):
        node, packages, _ = pi_environment(backend.split("@", 1)[1])
        key["node"] = node or "unknown"
        key |= dict(sorted(packages.items()))
    return key


def pi_installed(version: str) -> bool | None:
    """Whether the reference bridge can run Pi `version` here; None when there is no bridge to ask."""
    try:
        from pinb.scenario import reference
    except ImportError:
        return None
    check = getattr(reference, "is_installed", None)
    if check is None:  # a bridge that does not say is not second-guessed
        return None
    try:
        return bool(check(version))
    except Exception:
        return False


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the work tree at `root`; (None, None) outside git or without git.

    The kit's own output (`runs/`, `reports/`, the README's ledger table, the notebooks' recorded-verdict snapshots)
    does not make the tree dirty: the second of two verify runs in a row is on the same code as the first.
    """
    from pinb.kit.recorded import SNAPSHOT_CHECKOUT_DIR

    excluded = (*_OUTPUT_DIRS, f":(exclude){SNAPSHOT_CHECKOUT_DIR.as_posix()}")
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20, check=False
        )
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=normal", "--", ".", *excluded],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return commit.stdout.strip() or None, dirty


def supported_pi_versions() -> tuple[str, ...] | None:
    """The Pi versions the reference bridge can run, or None when the bridge is not available to ask."""
    try:
        from pinb.scenario import reference
    except ImportError:
        return None
    available = getattr(reference, "available_versions", None)  # pinned releases and local installs
    versions = available() if available is not None else getattr(reference, "SUPPORTED_VERSIONS", None)
    # a bridge that does not say is not second-guessed
    return None if versions is None else tuple(str(version) for version in versions)


def pi_environment(version: str) -> tuple[str | None, dict[str, str], tuple[str, ...]]:
    """(node version, resolved `@earendil-works/*` versions, notes) from the reference bridge, if it is there.

    The bridge (`pinb.scenario.reference`, a layer below the kit) is imported only for `pi@…` runs; its absence is
    recorded as a note rather than guessed around.
    """
    try:
        from pinb.scenario import reference
    except ImportError:
        return None, {}, ("the reference bridge (pinb.scenario.reference) is not available",)
    notes: list[str] = []
    node = None
    packages: dict[str, str] = {}
    try:
        node = str(reference.node_version())
    except Exception as exc:  # the bridge's own failure is a fact about this run, not a kit crash
        notes.append(f"node version unknown: {exc}")
    try:
        packages = {str(k): str(v) for k, v in dict(reference.resolved_versions(version)).items()}
    except Exception as exc:
        notes.append(f"Pi package versions unknown: {exc}")
    notes += _confinement_notes(reference)
    return node, packages, tuple(notes)


def _confinement_notes(reference: object) -> list[str]:
    """What Node ran under in this run (``pinb.scenario.confinement``), and whether code ran trusted unconfined."""
    if not hasattr(reference, "confinement"):  # a bridge that does not say is not second-guessed
        return []
    try:
        used = reference.confinement()
        trusted = reference.extension_code_trusted()  # type: ignore[attr-defined]
    except Exception as exc:
        return [f"confinement unknown: {exc}"]
    notes = [f"confinement: {used.describe()}"]
    if trusted and not used.complete:
        notes.append("--trust-extension-code: extension and book code could run unconfined")
    return notes


def ipykernel_on_this_interpreter(argv: list[str]) -> list[str]:
    """An IPython kernel command (`<python> -m ipykernel_launcher ...`) with this interpreter as `<python>`."""
    if len(argv) >= 3 and argv[1:3] == ["-m", "ipykernel_launcher"]:
        return [sys.executable, *argv[1:]]
    return argv


def kernel_command(kernel_name: str) -> tuple[str, ...]:
    """The kernel's argv as pinb launches it (without the connection file)."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        return ()
    try:
        argv = ipykernel_on_this_interpreter(list(KernelSpecManager().get_kernel_spec(kernel_name).argv))
    except Exception:
        return ()
    return tuple(a for a in argv if "{connection_file}" not in a and a != "-f")


def _below(argument: str, root: Path) -> str:
    """A path inside the project as a path relative to it (a record names no path of the machine it ran on)."""
    try:
        return str(Path(argument).relative_to(root.resolve()))
    except ValueError:
        return argument


def collect(root: Path, backend: str, kernel_name: str) -> Environment:
    commit, dirty = git_state(root)
    node = None
    packages: dict[str, str] = {}
    notes: tuple[str, ...] = ()
    if backend.startswith("pi@"):
        node, packages, notes = pi_environment(backend.split("@", 1)[1])
    return Environment(
        python=platform.python_version(),
        platform=platform.platform(),
        pinb=__version__,
        kernel=tuple(_below(argument, root) for argument in kernel_command(kernel_name)),
        git_commit=commit,
        git_dirty=dirty,
        node=node,
        pi_packages=packages,
        notes=notes,
        **{name: package_version(name) for name in _PACKAGES},
    )
