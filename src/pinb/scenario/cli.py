"""``pinb scenario run|diff|conform``, ``pinb reference install|refresh`` and the corpus drift of ``pinb drift``
(design.md §6; the kit registers ``pinb drift``, which also compares claims).

Exit codes: 0 ok (traces conform), 1 a finding (traces differ), 2 an error (one line on stderr; nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pinb.backends import PI_RELEASES
from pinb.errors import ReferenceError_, UsageError
from pinb.files import write_atomic
from pinb.scenario.corpus import DEFAULT_PI_VERSION, corpus_dir
from pinb.scenario.model import load_scenario
from pinb.scenario.trace import PROJECTIONS, dumps_jsonl, first_difference, loads_jsonl, project


def add_commands(subparsers: Any) -> None:
    scenario = subparsers.add_parser("scenario", help="run declarative scenarios on the stand-in or on real Pi")
    verbs = scenario.add_subparsers(dest="scenario_command", metavar="VERB", parser_class=type(scenario))

    run = verbs.add_parser("run", help="run one scenario and write its trace (JSONL)")
    run.add_argument("file", type=Path, help="scenario JSON file")
    run.add_argument(
        "--backend", choices=("standin", "pi"), required=True, help="pinb's stand-in, or the real Pi through Node"
    )
    run.add_argument("--pi-version", metavar="V", help=f"Pi version for --backend pi (default {DEFAULT_PI_VERSION})")
    run.add_argument("-o", "--output", type=Path, metavar="TRACE", help="write the trace here (default: stdout)")
    _timeout_option(run)
    trust_option(run)
    run.set_defaults(run=cmd_run)

    diff = verbs.add_parser("diff", help="run on both backends; exit 1 with the first difference")
    diff.add_argument("file", type=Path, help="scenario JSON file")
    diff.add_argument(
        "--pi-version", default=DEFAULT_PI_VERSION, metavar="V", help=f"the Pi release (default {DEFAULT_PI_VERSION})"
    )
    _projection_options(diff)
    _timeout_option(diff)
    trust_option(diff)
    diff.set_defaults(run=cmd_diff)

    conform = verbs.add_parser(
        "conform", help="compare the stand-in with the recorded real-Pi traces (offline), or with live Pi"
    )
    conform.add_argument(
        "--pi-version",
        default=DEFAULT_PI_VERSION,
        metavar="V",
        help=f"the Pi release whose traces or packages to compare with (default {DEFAULT_PI_VERSION})",
    )
    conform.add_argument(
        "--backend",
        choices=("recorded", "pi"),
        default="recorded",
        help="recorded: the traces under scenarios/traces (default, offline); pi: run every scenario on the "
        "installed Pi now (one warm Node worker per job)",
    )
    conform.add_argument("--jobs", type=int, default=1, metavar="N", help="Node workers at once (--backend pi)")
    _projection_options(conform)
    conform.add_argument("--corpus", type=Path, help="scenarios folder (default: the repository's scenarios/)")
    _timeout_option(conform)
    trust_option(conform)
    conform.set_defaults(run=cmd_conform)
    schema = verbs.add_parser(
        "schema", help="print the scenario format's JSON Schema, generated from the models (or --write/--check it)"
    )
    what = schema.add_mutually_exclusive_group()
    what.add_argument(
        "--write", action="store_true", help="rewrite the committed src/pinb/scenario/scenario.schema.json"
    )
    what.add_argument("--check", action="store_true", help="exit 1 when the committed schema differs from the models")
    schema.set_defaults(run=cmd_schema)
    scenario.set_defaults(run=_help(scenario))

    reference = subparsers.add_parser("reference", help="the real-Pi reference packages and recorded traces")
    ref_verbs = reference.add_subparsers(dest="reference_command", metavar="VERB", parser_class=type(reference))
    install = ref_verbs.add_parser("install", help="install one Pi package set (and Node 22 if needed)")
    install.add_argument(
        "--pi-version",
        default=DEFAULT_PI_VERSION,
        metavar="V",
        help=f"a Pi release (default {DEFAULT_PI_VERSION}), or 'all': every release of the matrix, oldest first, and "
        "those installed before from a local source; a release that cannot be installed says why and the rest go on",
    )
    install.add_argument(
        "--from",
        dest="source",
        metavar="PATH",
        help="install from a local package source instead of the registry: a folder of .tgz files (npm pack) or a "
        "node_modules folder (or one that has it), for a release the registry does not have",
    )
    install.set_defaults(run=cmd_reference_install)
    refresh = ref_verbs.add_parser("refresh", help="re-record the corpus traces on real Pi (or --check them)")
    refresh.add_argument("--check", action="store_true", help="only check that the recorded traces are current")
    refresh.add_argument(
        "--scenario", action="append", default=[], metavar="ID", help="only (re-)record this scenario (repeatable)"
    )
    trust_option(refresh)
    refresh.set_defaults(run=cmd_reference_refresh)
    reference.set_defaults(run=_help(reference))


TRUST_HELP = (
    "run a scenario's extension code and the book's programs on real Pi even where this machine cannot confine "
    "them (no Node permission model or no network namespace); the run records it. Without it they are refused "
    "there; where confinement is complete the flag changes nothing"
)


def trust_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trust-extension-code", action="store_true", help=TRUST_HELP)


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="time limit of each scenario run in seconds (default: 60 on the stand-in, 120 on real Pi, "
        "Node's start-up included; the stand-in's clock skips idle waits, so its sleeps take no wall-clock time)",
    )


def _projection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--projection",
        choices=PROJECTIONS,
        default=None,
        help="what to compare (default full: every field of every line but seq and the meta line, stream lines "
        "included and in order, durations and temporary paths normalised; strict: the same without stream lines; "
        "contract: the contract's conformance projection; loose: the contract's loose projection)",
    )
    group.add_argument("--loose", action="store_true", help="same as --projection contract (the older default)")
    group.add_argument("--strict", action="store_true", help="same as --projection strict")


def _projection(args: argparse.Namespace) -> str:
    if args.loose:
        return "contract"
    if args.strict:
        return "strict"
    return str(args.projection or "full")


def _timeouts(args: argparse.Namespace) -> dict[str, float]:
    """``{"timeout": S}`` when ``--timeout`` was given (checked: finite and positive), else ``{}``."""
    if getattr(args, "timeout", None) is None:
        return {}
    from pinb.scenario.standin import check_timeout

    return {"timeout": check_timeout(args.timeout)}


def _help(parser: argparse.ArgumentParser) -> Any:
    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def cmd_schema(args: argparse.Namespace) -> int:
    from pinb.scenario.schema import SCHEMA_PATH, is_current, schema_text

    if args.check:
        if is_current():
            return 0
        print(f"{SCHEMA_PATH.name} is stale: run `pinb scenario schema --write`", file=sys.stderr)
        return 1
    if args.write:
        SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}", file=sys.stderr)
        return 0
    sys.stdout.write(schema_text())
    return 0


# --- helpers -----------------------------------------------------------------------------------------------------


def _reference() -> Any:
    try:
        from pinb.scenario import reference
    except ImportError as exc:
        raise UsageError(f"the real-Pi backend is not available in this pinb ({exc})") from None
    return reference


def check_version(version: str) -> str:
    reference = _reference()
    available = getattr(reference, "available_versions", None)
    supported = tuple(available() if available else getattr(reference, "SUPPORTED_VERSIONS", ()))
    if version not in supported:
        raise UsageError(f"unknown Pi version {version!r}: supported are {', '.join(supported) or 'none'}")
    return version


def run_standin_lines(path: Path, **timeout: float) -> list[dict[str, Any]]:
    scenario = load_scenario(path)
    from pinb.scenario.standin import run_on_standin

    return run_on_standin(scenario, **timeout)


def run_pi_lines(path: Path, version: str, **timeout: float) -> list[dict[str, Any]]:
    load_scenario(path)  # a bad scenario is reported here, not as a Node error
    return loads_jsonl(_reference().run_on_pi(path, check_version(version), **timeout))


def _require_recorded(folder: Path, version: str) -> None:
    if not (folder / "traces" / f"pi-{version}").is_dir():
        raise UsageError(f"no traces recorded for Pi {version} under {folder / 'traces'} (pinb reference refresh)")


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, so a failure leaves nothing."""
    path = path.resolve()
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder (give the trace file's path)")
    if path.exists() and not path.is_file():
        raise UsageError(f"cannot write {path}: it is not a regular file")
    if not path.parent.is_dir():
        raise UsageError(f"cannot write {path}: folder {path.parent} does not exist")
    write_atomic(path, text)


# --- commands ------------------------------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    version = args.pi_version or DEFAULT_PI_VERSION
    if args.backend == "pi" or args.pi_version is not None:
        check_version(version)
    timeout = _timeouts(args)
    lines = (
        run_standin_lines(args.file, **timeout)
        if args.backend == "standin"
        else run_pi_lines(args.file, version, **timeout)
    )
    text = dumps_jsonl(lines)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    check_version(args.pi_version)
    timeout = _timeouts(args)
    standin = run_standin_lines(args.file, **timeout)
    pi = run_pi_lines(args.file, args.pi_version, **timeout)
    projection = _projection(args)
    diff = first_difference(standin, pi, projection=projection, names=("standin", f"pi@{args.pi_version}"))
    if diff is None:
        print(f"conforms: {len(project(standin, projection=projection))} compared lines agree ({projection})")
        return 0
    print(diff.render())
    return 1


def cmd_conform(args: argparse.Namespace) -> int:
    from pinb.scenario.conformance import compare_corpus, render_table

    folder = args.corpus or corpus_dir()
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.backend == "pi":
        check_version(args.pi_version)
        _require_installed(args.pi_version)
    else:
        _require_recorded(folder, args.pi_version)
    results = compare_corpus(
        args.pi_version, folder=folder, projection=_projection(args), live=args.backend == "pi", jobs=args.jobs,
        timeout=_timeouts(args).get("timeout"),
    )  # fmt: skip
    label = args.pi_version if args.backend == "recorded" else f"{args.pi_version} (live)"
    print(render_table(results, label))
    if any(r.status == "error" for r in results):
        return 2  # a scenario that could not run (a time limit, a bad file) was not compared
    return 1 if any(r.status == "differs" for r in results) else 0


def cmd_reference_install(args: argparse.Namespace) -> int:
    reference = _reference()
    source = getattr(args, "source", None)
    if args.pi_version == "all":
        if source is not None:
            raise UsageError("--from installs one release: name it with --pi-version V")
        return _install_all(reference)
    if source is None:
        check_version(args.pi_version)
    options = {"source": source} if source is not None else {}
    reference.install(args.pi_version, progress=lambda message: print(message, file=sys.stderr, flush=True), **options)
    return 0


def _install_all(reference: Any) -> int:
    """Every release, oldest first; one that cannot be installed is reported (its claims' UNRUN reason) and skipped."""

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    pinned = [release.version for release in reversed(PI_RELEASES)]
    versions = pinned + [v for v in reference.available_versions() if v not in pinned]
    failed: list[str] = []
    for version in versions:
        try:
            if version in pinned:
                reference.install(version, progress=say)
            else:
                say(f"Pi {version}: installed from a local source before; kept ({reference.packages_dir(version)})")
        except ReferenceError_ as exc:
            failed.append(version)
            say(f"Pi {version}: not installed: {exc}")
    for version, note in reference.NO_APP_LAYER.items():
        say(f"Pi {version}: UNRUN for layer app: {note}")
    say(
        f"{len(versions) - len(failed)} of {len(versions)} release(s) installed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


def cmd_reference_refresh(args: argparse.Namespace) -> int:
    options = {"only": tuple(args.scenario)} if args.scenario else {}
    result = _reference().refresh(check=args.check, **options)
    return int(result) if isinstance(result, int) else 0


def cmd_drift(args: argparse.Namespace) -> int:
    from pinb.scenario.drift import drift, drift_exit_code, render_drift

    timeout = _timeouts(args)
    if not args.recorded:
        check_version(args.from_version)
        check_version(args.to_version)
        _require_installed(args.from_version, args.to_version)
    folder = args.corpus or corpus_dir()
    if args.recorded:
        _require_recorded(folder, args.from_version)
        _require_recorded(folder, args.to_version)
    results = drift(
        args.from_version, args.to_version, folder=folder, recorded=args.recorded, jobs=args.jobs, **timeout
    )
    print(render_drift(results, args.from_version, args.to_version))
    return drift_exit_code(results)


def _require_installed(*versions: str) -> None:
    """Live drift needs both package sets (and Node 22): say once what is missing, before running anything."""
    is_installed = getattr(_reference(), "is_installed", None)
    if is_installed is None:
        return
    missing = [version for version in dict.fromkeys(versions) if not is_installed(version)]
    if not missing:
        return
    names = " and ".join(f"Pi {version}" for version in missing)
    installs = "; ".join(f"`pinb reference install --pi-version {version}`" for version in missing)
    raise UsageError(
        f"cannot run {names} here (its packages or Node 22 are not installed): run {installs}, "
        "or add --recorded to compare the recorded traces"
    )
