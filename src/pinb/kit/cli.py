"""The kit's subcommands (design.md §6): verify, status, report, runs, chapter, drift, fingerprint.

Exit codes: 0 every checked claim holds; 1 a claim is contradicted (a finding); 2 an error (a notebook or the
kit failed, or a user mistake, reported in one line on stderr); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinb.backends import PI_MODELLED_VERSION, PI_RELEASES
from pinb.errors import KitError
from pinb.files import write_atomic
from pinb.kit import report as report_module
from pinb.kit.claims import VERDICT, VERDICTS
from pinb.kit.fingerprint import fingerprint_file
from pinb.kit.project import ChapterLike, Project, load_project
from pinb.kit.status import ClaimStatus, chapter_statuses, check_known_backend, claim_in_run, resolve_backend
from pinb.kit.store import StoredRun, StoreProblem, validate_run_id
from pinb.kit.summary import summary_markdown

if TYPE_CHECKING:  # verify's process pool and progress bar are loaded by `pinb verify` only
    from pinb.kit.matrix import Change, MatrixRow
    from pinb.kit.verify import VerifyResult


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("verify", help="execute chapter notebooks, record runs, print the claim table")
    p.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    p.add_argument(
        "--backend",
        choices=("standin", "pi"),
        default="standin",
        help="standin (pinb's Python stand-in, default) or pi (the real Pi packages through Node)",
    )
    p.add_argument(
        "--pi-version",
        metavar="V",
        help="Pi version for --backend pi (default: the modelled one), or 'all': every installed release of the "
        "matrix, oldest first",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="notebooks run in parallel processes (at most one per CPU)",
    )
    p.add_argument("--force", action="store_true", help="run even when the inputs are unchanged since the last run")
    p.add_argument("--cell-timeout", type=_seconds, default=600.0, metavar="S", help="per cell (0: none)")
    p.add_argument("--timeout", type=_seconds, default=1800.0, metavar="S", help="per notebook (0: none)")
    p.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE", help="extra parameter")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--trust-extension-code",
        action="store_true",
        help="on --backend pi, run extension code and the book's programs even where this machine cannot confine "
        "them (the run records it); where confinement is complete the flag changes nothing",
    )
    _root(p)
    p.set_defaults(run=cmd_verify)

    p = subparsers.add_parser("status", help="claim statuses from the run store (exit 2 if a run record is unreadable)")
    p.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--summary", action="store_true", help="a short Markdown table: counts per chapter and backend")
    p.add_argument(
        "--matrix",
        action="store_true",
        help="one row per claim across the Pi releases: the behaviour runs recorded on each and what the "
        "documentation and declarations scopes found in each release",
    )
    p.add_argument("--from", dest="from_version", metavar="A", help="with --matrix and --to: the older release")
    p.add_argument(
        "--to", dest="to_version", metavar="B", help="with --matrix: only claims whose verdict changed A → B"
    )
    p.add_argument(
        "--backend",
        metavar="B",
        help="one backend's verdicts only: standin, pi (the current Pi version) or pi@<version>",
    )
    _root(p)
    p.set_defaults(run=cmd_status)

    p = subparsers.add_parser("report", help="the evidence report of one chapter; --all: the committed ledger")
    p.add_argument("chapter", nargs="?", metavar="CHAPTER", help="the chapter id (not with --all)")
    p.add_argument(
        "--format",
        choices=("md", "json", "brief"),
        default="md",
        help="md (pinb's evidence report), json, or brief: the research brief's seven required sections",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument(
        "--all",
        action="store_true",
        help="rewrite reports/<chapter>.md and .json for every chapter and the README's ledger table",
    )
    p.add_argument("--check", action="store_true", help="with --all: write nothing; exit 1 if any is out of date")
    _root(p)
    p.set_defaults(run=cmd_report)

    p = subparsers.add_parser("runs", help="list, show and check recorded runs")
    runs = p.add_subparsers(dest="runs_command", metavar="ACTION", parser_class=type(p))
    q = runs.add_parser("list", help="every run, oldest first")
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    _root(q)
    q.set_defaults(run=cmd_runs_list)
    q = runs.add_parser("show", help="one run record as JSON")
    q.add_argument("run_id", metavar="RUN", help="the run id, as `pinb runs list` shows it")
    _root(q)
    q.set_defaults(run=cmd_runs_show)
    q = runs.add_parser("check", help="verify every run; report records that no longer match their evidence")
    _root(q)
    q.set_defaults(run=cmd_runs_check)
    q = runs.add_parser("rm", help="remove runs by id")
    q.add_argument("run_ids", nargs="+", metavar="RUN", help="run ids, as `pinb runs list` shows them")
    _root(q)
    q.set_defaults(run=cmd_runs_rm)
    q = runs.add_parser("prune", help="remove failed and superseded runs and leftovers of stopped processes")
    q.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    _root(q)
    q.set_defaults(run=cmd_runs_prune)
    p.set_defaults(run=_usage_of(p))

    p = subparsers.add_parser("chapter", help="author a chapter: scaffold its folder")
    chapter = p.add_subparsers(dest="chapter_command", metavar="ACTION", parser_class=type(p))
    q = chapter.add_parser("new", help="a new chapter folder with an empty ledger, and its notebook")
    q.add_argument("number", metavar="NN", help="the chapter number as printed, e.g. 02")
    q.add_argument("--title", required=True, help="the chapter's title")
    q.add_argument("--text", required=True, metavar="FILE", help="the chapter's text file in the book directory")
    q.add_argument("--into", metavar="DIR", help="the folder to create ch<NN>/ in (default: pinb's chapters)")
    _root(q)
    q.set_defaults(run=cmd_chapter_new)
    p.set_defaults(run=_usage_of(p))

    p = subparsers.add_parser(
        "drift",
        help="what changed between two Pi releases: the agent-layer corpus's traces (exit 1 when any differs), or "
        "with --claims each claim's recorded verdicts (exit 1 when any changed)",
    )
    p.add_argument(
        "--claims",
        nargs="?",
        const="",
        metavar="CHAPTER",
        help="compare the claims of CHAPTER (default: every chapter) instead of the corpus: the behaviour their runs "
        "recorded on each release and what their scopes found in each release's tarball (the rows of `pinb status "
        "--matrix`); both releases must have recorded runs",
    )
    p.add_argument(
        "--from", dest="from_version", metavar="A", help=f"the older release (default {PI_RELEASES[-1].version})"
    )
    p.add_argument("--to", dest="to_version", metavar="B", help=f"the newer release (default {PI_MODELLED_VERSION})")
    p.add_argument("--json", action="store_true", help="with --claims: machine-readable output")
    p.add_argument("--recorded", action="store_true", help="corpus: use the recorded traces instead of running Node")
    p.add_argument("--corpus", type=Path, metavar="DIR", help="corpus: the scenarios folder (default: scenarios/)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="corpus: warm Node workers at once (live runs)")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="corpus: wall-clock limit of each scenario run in seconds (default 120 on real Pi, Node's start-up "
        "included)",
    )
    p.add_argument(
        "--trust-extension-code",
        action="store_true",
        help="corpus: run a scenario's extension code on real Pi even where this machine cannot confine it (the "
        "run records it); where confinement is complete the flag changes nothing",
    )
    _root(p)
    p.set_defaults(run=cmd_drift)

    p = subparsers.add_parser("fingerprint", help="sha256 of a chapter text after pinb's normalisation")
    p.add_argument("file", metavar="FILE", help="the chapter's text (Markdown or plain text)")
    p.set_defaults(run=cmd_fingerprint)


def _root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", metavar="DIR", help="project root (default: found from the working directory)")
    parser.add_argument(
        "--book",
        metavar="DIR",
        help="the book's chapter texts (default: $PINB_BOOK, else [tool.pinb] book in pyproject.toml)",
    )


def _usage_of(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command that prints `parser`'s usage (bound now: `parser` names a later parser by the time it runs)."""

    def usage(_args: argparse.Namespace) -> int:
        parser.print_usage(sys.stderr)
        return 2

    return usage


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r} (use 0 for no limit)")
    if value < 0:
        raise argparse.ArgumentTypeError("seconds cannot be negative")
    return value or None


#: The stated limits of a `-p NAME=VALUE`: its value's length, and how deeply JSON arrays and objects nest in it.
PARAMETER_LIMIT = 64 * 1024
PARAMETER_DEPTH = 32


def _parameter(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise KitError(f"parameter {_clip(text, 60)!r} is not NAME=VALUE")
    if len(raw) > PARAMETER_LIMIT:
        raise KitError(f"parameter {name}: its value is longer than the limit of {PARAMETER_LIMIT // 1024} KiB")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a bare word is a string
    except RecursionError:
        raise KitError(f"parameter {name}: nested more than {PARAMETER_DEPTH} levels deep") from None
    except ValueError as exc:  # an integer longer than Python converts
        raise KitError(f"parameter {name}: {' '.join(str(exc).split())[:200]}") from None
    if _depth(value) > PARAMETER_DEPTH:
        raise KitError(f"parameter {name}: nested more than {PARAMETER_DEPTH} levels deep")
    return name, value


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in a JSON value (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            if depth + 1 <= PARAMETER_DEPTH:
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _project(args: argparse.Namespace) -> Project:
    from pinb.chapters.book import BOOK_ENV

    book = getattr(args, "book", None)
    if book:
        if not Path(book).is_dir():
            raise KitError(f"book directory {book} is not a folder")
        os.environ[BOOK_ENV] = str(Path(book).resolve())  # the notebooks' kernels read it too
    return load_project(getattr(args, "root", None))


def _text_notes(chapters: list[Any]) -> list[str]:
    """`<chapter>: <note>` for each chapter whose text is unavailable or no longer holds a quote."""
    return [f"{chapter.id}: {note}" for chapter in chapters if (note := getattr(chapter, "text_note", ""))]


def _out(text: str, end: str = "\n") -> None:
    """Print to stdout; a reader that stops early (`pinb status | head`) is not an error."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _warn(problems: list[StoreProblem], runs: Sequence[StoredRun] = ()) -> None:
    """Unreadable records (errors), store problems, then every run not counted because its record does not match
    its evidence."""
    for run in runs:
        if run.unreadable:
            print(f"pinb: error: {run.problem}", file=sys.stderr)
    problems = [*problems, *(StoreProblem(run.path, run.problem) for run in runs if run.problem and not run.unreadable)]
    for problem in problems:
        print(f"pinb: warning: {problem}", file=sys.stderr)


# --- verify ---------------------------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace) -> int:
    from pinb.kit.verify import VerifyOptions, verify

    project = _project(args)
    every = args.pi_version == "all"
    if every and args.backend != "pi":
        raise KitError("--pi-version all needs --backend pi")
    versions, skip = _every_release(project, list(args.chapters)) if every else ((), {})
    if every and not versions:
        raise KitError("no Pi release is installed: run `pinb reference install --pi-version all`")
    options = VerifyOptions(
        chapters=tuple(args.chapters),
        backend=args.backend,
        pi_version=None if every else args.pi_version,
        pi_versions=versions,
        skip=skip,
        jobs=args.jobs,
        force=args.force,
        cell_timeout=args.cell_timeout,
        timeout=args.timeout,
        parameters=dict(_parameter(p) for p in args.parameter),
        command=shlex.join(["pinb", *sys.argv[1:]]) if sys.argv and sys.argv[0] else "pinb verify",
        progress=not args.no_progress,
    )
    result = verify(project, options)
    rows, failures = verify_table(result)
    if every:
        for backend in dict.fromkeys(item.backend for item in result.results):
            _out(f"== {backend}")
            _out(format_table([row for row in rows if _row_backend(row) == backend]))
    else:
        _out(format_table(rows))
    _out(verify_findings(project, result))
    if result.refreshed:
        _out("updated " + ", ".join(_shown(project, path) for path in result.refreshed))
    _held_back(project, result.held_back)
    for line in failures:
        print(f"pinb: {line}", file=sys.stderr)
    for note in _text_notes(project.select(list(args.chapters))):
        print(f"pinb: warning: {note}", file=sys.stderr)
    if result.ledger_error:
        print(f"pinb: error: {result.ledger_error}", file=sys.stderr)
        return 2
    return verify_exit_code(result, rows)


def _row_backend(row: ClaimStatus | tuple[str, str]) -> str:
    """The backend a row of the verify table is about (a note names it: `<chapter> on <backend>`)."""
    if isinstance(row, tuple):
        return row[0].rpartition(" on ")[2]
    return row.backend or ""


def _every_release(project: Project, chapters: list[str]) -> tuple[tuple[str, ...], dict[tuple[str, str], str]]:
    """`--pi-version all`: every installed release of the matrix, oldest first (one not installed is reported
    UNRUN with the command that installs it), and the chapters that cannot run on a release at all (no claim of
    theirs is on a layer its package set has), each reported UNRUN with why."""
    from pinb.backends import Backend
    from pinb.scenario import reference

    pinned = [release.version for release in reversed(PI_RELEASES)]
    versions = pinned + [v for v in reference.available_versions() if v not in pinned]
    installed = []
    for version in versions:
        if reference.is_installed(version):
            installed.append(version)
        else:
            print(
                f"pinb: pi@{version}: UNRUN: not installed (pinb reference install --pi-version {version})",
                file=sys.stderr,
            )
    skip: dict[tuple[str, str], str] = {}
    for chapter in project.select(chapters):
        needed = sorted(
            {str(claim.layer) for claim in chapter.claims if claim.kind == "runnable" and "pi" in claim.backends}
        )
        for version in installed:
            backend = Backend("pi", version)
            answers = [backend.supports(layer) for layer in needed]
            if answers and not any(ok for ok, _ in answers):
                skip[chapter.id, backend.label] = answers[0][1]
                print(f"pinb: {chapter.id} on {backend.label}: UNRUN: {answers[0][1]}", file=sys.stderr)
    return tuple(installed), skip


def _shown(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return str(path)


def verify_findings(project: Project, result: VerifyResult) -> str:
    """The findings of every backend for the chapters verified; the runs this verify made are labelled so."""
    from pinb.kit.summary import findings, findings_text

    runs = result.stored or project.store.list().runs
    live = {item.run.record.run_id for item in result.results if item.run is not None and not item.cached}
    found = []
    chapters = {item.chapter.id: item.chapter for item in result.results}  # once each, whatever its releases
    for chapter in chapters.values():
        statuses = chapter_statuses(project, chapter, runs)
        completed = [
            r for r in runs if r.record.chapter == chapter.id and r.verified and r.record.status == "completed"
        ]
        latest = list({run.record.backend: run for run in completed}.values())  # runs are listed oldest first
        found += findings(statuses, latest, live)
    return findings_text(found)


def verify_table(result: VerifyResult) -> tuple[list[ClaimStatus | tuple[str, str]], list[str]]:
    """Each chapter's status on the verified backend (as `pinb status --backend` says it now), then one line per
    chapter saying whether its outcomes reproduced; and the failures for stderr."""
    rows: list[ClaimStatus | tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    failures: list[str] = []
    for item in result.results:
        where = f"{item.chapter.id} on {item.backend}" if item.backend else item.chapter.id
        if item.run is None:
            failures.append(f"{item.chapter.id}: {item.error or 'not run'}")
        else:
            record = item.run.record
            if record.status != "completed":
                failures.append(f"{item.chapter.id}: run {record.run_id} {record.status}: {record.failure}")
            if item.run.problem:
                failures.append(f"{item.chapter.id}: run {record.run_id}: {item.run.problem}")
            failures.extend(f"{item.chapter.id}: run {record.run_id}: {warning}" for warning in record.warnings)
        if item.statuses:
            rows.extend(item.statuses)
        elif item.run is not None:
            rows.extend(claim_in_run(claim, item.run) for claim in item.chapter.claims)
        if item.reproduction:
            notes.append((where, item.reproduction))
    return [*rows, *notes], failures


def verify_exit_code(result: VerifyResult, rows: list[ClaimStatus | tuple[str, str]]) -> int:
    if result.interrupted:
        return 130
    statuses = [row for row in rows if isinstance(row, ClaimStatus)]
    for item in result.results:
        run = item.run
        if run is None or run.record.status != "completed" or run.record.warnings or run.problem:
            return 2
    if any(row.status == "ERROR" for row in statuses):
        return 2
    if any(row.status == "CONTRADICTED" for row in statuses):
        return 1
    return 0


def format_table(rows: list[ClaimStatus | tuple[str, str]]) -> str:
    header = ("STATUS", "CLAIM", "BACKEND", "RUN", "EVIDENCE / REASON")
    lines: list[tuple[str, ...]] = [header]
    notes: list[str] = []
    for row in rows:
        if isinstance(row, tuple):
            notes.append(f"{row[0]}: {row[1]}")
            continue
        text = row.evidence or row.reason
        lines.append((row.label, row.claim_id, row.backend or "-", row.run_id or "-", _clip(text, 100)))
        # what the other backends saw, one indented line each, under the row they did not decide
        for verdict in row.backends:
            if (verdict.backend, verdict.status) == (row.backend, row.status) and row.run_id in (None, verdict.run_id):
                continue
            note = "" if verdict.current else " (other Pi version)"
            lines.append(
                (
                    f"  {verdict.label}",
                    f"  ↳{note}",
                    verdict.backend,
                    verdict.run_id,
                    _clip(verdict.evidence or verdict.reason, 100),
                )
            )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = ["  ".join([*(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True)), line[-1]]) for line in lines]
    return "\n".join(out + notes)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# --- status, report -------------------------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    project = _project(args)
    chapters = project.select(args.chapters)
    listing = project.store.list()
    _warn(listing.problems, listing.runs)
    backend = resolve_backend(project, args.backend) if args.backend is not None else None
    if backend is not None:
        check_known_backend(backend, listing.runs)
    statuses = [status for chapter in chapters for status in chapter_statuses(project, chapter, listing.runs, backend)]
    notes = _text_notes(chapters)
    if args.matrix or args.from_version or args.to_version:
        code = _matrix(args, chapters, statuses)
        return 2 if listing.unreadable else code
    if args.json:
        document: dict[str, Any] = {"claims": [status.contract() for status in statuses]}
        texts = {chapter.id: note for chapter in chapters if (note := getattr(chapter, "text_note", ""))}
        if texts:  # only when some chapter text is unavailable or no longer holds a quote
            document["chapter_text"] = texts
        _out(json.dumps(document, indent=2, ensure_ascii=False))
    elif args.summary:  # the README's table: the same on every machine, so nothing about this one
        _out(summary_markdown(statuses))
    else:
        _out(format_table(list(statuses)) + "".join(f"\n{note}" for note in notes))
        for note in _attempt_notes(project, chapters, listing.runs, backend):
            _out(f"note: {note}")
        for note in _environment_notes(project, chapters, listing.runs, backend):
            _out(f"note: {note}")
    return 2 if listing.unreadable else 0


def _matrix(args: argparse.Namespace, chapters: list[ChapterLike], statuses: list[ClaimStatus]) -> int:
    from pinb.kit.matrix import drift

    if not args.matrix:
        raise KitError("--from and --to go with --matrix")
    if bool(args.from_version) != bool(args.to_version):
        raise KitError("--matrix compares two releases with both --from A and --to B")
    for version in (args.from_version, args.to_version):
        if version:
            _known_release(version)
    rows = _matrix_rows(statuses)
    if args.from_version:
        changed = drift(rows, args.from_version, args.to_version)
        if args.json:
            lines = {claim: [c.line(args.from_version, args.to_version) for c in changes] for claim, changes in changed}
            _out(json.dumps(lines, indent=2, ensure_ascii=False))
            return 0
        _out(_drift_text(changed, args.from_version, args.to_version))
        return 0
    if args.json:
        document = {row.claim: {what: [list(cell) for cell in cells] for what, cells in row.parts} for row in rows}
        _out(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    from pinb.kit.matrix import releases

    _out(f"releases: {', '.join(releases())}")
    for row in rows:
        _out(row.line())
    return 0


def _known_release(version: str) -> None:
    from pinb.kit.matrix import releases

    if version not in releases():
        raise KitError(f"unknown release {version!r}: the matrix has {', '.join(releases())}")


def _matrix_rows(statuses: list[ClaimStatus]) -> list[MatrixRow]:
    from pinb.kit.matrix import chapter_rows

    return chapter_rows(statuses)


def _drift_text(changed: list[tuple[str, list[Change]]], old: str, new: str) -> str:
    lines = [f"{claim}  " + " · ".join(change.line(old, new) for change in changes) for claim, changes in changed]
    return "\n".join([*lines, f"{len(changed)} claim(s) changed between {old} and {new}"])


# --- drift ----------------------------------------------------------------------------------------------------


def cmd_drift(args: argparse.Namespace) -> int:
    """The corpus drift (`pinb.scenario.cli.cmd_drift`), or with `--claims` the claims' drift between two recorded
    releases: exit 0 when none changed, 1 when some did, 2 on a bad release (one line)."""
    old = args.from_version or PI_RELEASES[-1].version
    new = args.to_version or PI_MODELLED_VERSION
    if args.claims is None:
        if args.json:
            raise KitError("--json goes with --claims (the corpus drift prints its table)")
        from pinb.scenario.cli import cmd_drift as corpus_drift

        return int(corpus_drift(argparse.Namespace(**{**vars(args), "from_version": old, "to_version": new})))
    if args.recorded or args.corpus is not None:
        raise KitError("--recorded and --corpus are the corpus drift's: --claims compares the recorded runs")
    from pinb.kit.matrix import drift, recorded_releases

    project = _project(args)
    chapters = project.select([args.claims] if args.claims else [])
    listing = project.store.list()
    _warn(listing.problems, listing.runs)
    statuses = [status for chapter in chapters for status in chapter_statuses(project, chapter, listing.runs)]
    recorded = recorded_releases(statuses)
    ids = {chapter.id for chapter in chapters}
    stale = {
        run.record.backend.removeprefix("pi@")
        for run in listing.runs
        if run.record.chapter in ids and run.record.backend.startswith("pi@") and run.record.status == "completed"
    }
    for version in (old, new):
        _known_release(version)
        if version not in recorded:
            which = args.claims or "any chapter"
            why = "its runs there are STALE: their inputs changed" if version in stale else "none is recorded there"
            raise KitError(
                f"no current run of {which} on pi@{version} ({why}): record one with `pinb verify "
                f"{args.claims + ' ' if args.claims else ''}--backend pi --pi-version {version}`; current runs are "
                f"on {', '.join(f'pi@{v}' for v in sorted(recorded)) or 'no release'}"
            )
    changed = drift(_matrix_rows(statuses), old, new)
    if args.json:
        document = {
            "from": old,
            "to": new,
            "chapters": [chapter.id for chapter in chapters],
            "claims": len(statuses),
            "changed": [
                {
                    "claim": claim,
                    "changes": [{"what": c.what, "from": c.old, "to": c.new, "evidence": c.evidence} for c in changes],
                }
                for claim, changes in changed
            ],
        }
        _out(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _out(_drift_text(changed, old, new))
    return 2 if listing.unreadable else 1 if changed else 0


def _attempt_notes(
    project: Project, chapters: list[ChapterLike], runs: list[StoredRun], backend: str | None
) -> list[str]:
    """One line per chapter and backend whose newest run on current inputs did not complete."""
    from pinb.kit.status import attempt_note, chapter_evidence

    notes = []
    for chapter in chapters:
        for name, evidence in chapter_evidence(project, chapter, runs).items():
            if evidence.attempt is None or backend not in (None, name):
                continue
            stand = f"the verdicts are from run {evidence.run.record.run_id}" if evidence.run else "no verdicts"
            notes.append(f"{chapter.id} on {name}: last attempt failed: {attempt_note(evidence.attempt)}; {stand}")
    return notes


def _environment_notes(
    project: Project, chapters: list[ChapterLike], runs: list[StoredRun], backend: str | None
) -> list[str]:
    """Where a counted run was recorded in another environment than this machine's (Node and Pi aside: asking
    for them costs a process; `pinb verify --backend pi` compares them)."""
    from pinb.kit.environment import reuse_key
    from pinb.kit.reproduction import environment_notes
    from pinb.kit.status import chapter_evidence

    counted = [
        evidence.run
        for chapter in chapters
        for name, evidence in chapter_evidence(project, chapter, runs).items()
        if evidence.run is not None and backend in (None, name)
    ]
    return environment_notes(counted, reuse_key("standin"))


def cmd_report(args: argparse.Namespace) -> int:
    project = _project(args)
    if args.all:
        return _report_all(project, args)
    if args.check:
        raise KitError("--check applies to --all only")
    if args.chapter is None:
        raise KitError("name a chapter (pinb report CHAPTER) or use --all")
    chapter = project.chapter(args.chapter)
    listing = project.store.list(chapter.id)
    _warn(listing.problems, listing.runs)
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    built = report_module.build_report(project, chapter, listing.runs).model_copy(
        update={"reported_at": now.isoformat(timespec="seconds").replace("+00:00", "Z")}
    )
    if args.format == "brief":
        from pinb.kit.brief import brief_inputs, render_brief

        text = render_brief(built, brief_inputs(built, chapter.id, now))
    else:
        text = report_module.render_markdown(built) if args.format == "md" else report_module.render_json(built)
    if args.output:
        write_atomic(args.output, text)  # all or nothing: never an empty or truncated report
    else:
        _out(text, end="")
    return 0


def _report_all(project: Project, args: argparse.Namespace) -> int:
    from pinb.kit import ledger

    if args.chapter is not None or args.output or args.format != "md":
        raise KitError("--all writes every chapter's reports in both formats: give no CHAPTER, -o or --format")
    listing = project.store.list()
    _warn(listing.problems, listing.runs)
    if listing.unreadable:
        raise KitError(
            f"{len(listing.unreadable)} run record(s) cannot be read (above): the ledger is not rewritten from a "
            "store that may be missing findings; repair them or remove them with `pinb runs rm`"
        )
    if args.check:
        stale = ledger.stale(project)
        for path in stale:
            print(f"pinb: {_shown(project, path)} differs from what the runs give", file=sys.stderr)
        _out(f"{len(stale)} ledger file(s) out of date" + ("; run `pinb report --all`" if stale else ""))
        return 1 if stale else 0
    changed = ledger.refresh(project, force_reports=True)
    _out("updated " + ", ".join(_shown(project, path) for path in changed) if changed else "the ledger is current")
    return 0


# --- runs, fingerprint ----------------------------------------------------------------------------------------


def cmd_runs_list(args: argparse.Namespace) -> int:
    project = _project(args)
    chapters = [chapter.id for chapter in project.select(args.chapters)] if args.chapters else None
    listing = project.store.list()
    _warn(listing.problems)
    lines = [("RUN", "CHAPTER", "BACKEND", "STATUS", "CLAIMS", "STARTED")]
    for run in listing.runs:
        record = run.record
        if chapters is not None and record.chapter not in chapters:
            continue
        counts: dict[str, int] = {}
        for outcome in record.claims:
            counts[VERDICT[outcome.outcome]] = counts.get(VERDICT[outcome.outcome], 0) + 1
        summary = ", ".join(f"{counts[name]} {name}" for name in VERDICTS if name in counts) or "none"
        state = f"{record.status} (not counted)" if run.problem else record.status
        state = "unreadable (not counted)" if run.unreadable else state
        lines.append((record.run_id, record.chapter, record.backend or "?", state, summary, record.started_at))
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    _out("\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines))
    return 0


def cmd_runs_show(args: argparse.Namespace) -> int:
    validate_run_id(args.run_id)
    run = _project(args).store.get(args.run_id)
    _out(run.record.model_dump_json(indent=2))
    return 0


def cmd_runs_check(args: argparse.Namespace) -> int:
    runs, problems = _project(args).store.check()
    for problem in problems:
        print(f"pinb: {problem}", file=sys.stderr)
    print(f"{len(runs)} run(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


def cmd_runs_rm(args: argparse.Namespace) -> int:
    project = _project(args)
    store = project.store
    folders = [store.locate(run_id) for run_id in dict.fromkeys(args.run_ids)]  # every id checked before any removal
    for folder in folders:
        store.remove(folder)
        _out(f"removed run {folder.name} ({folder.parent.name})")
    _refresh_ledger(project)
    return 0


def _refresh_ledger(project: Project) -> None:
    """After runs were removed: the ledger files the project keeps say what the remaining runs give."""
    from pinb.kit import ledger

    weak = ledger.weaker(project)
    changed = ledger.refresh(project, keep=weak)
    if changed:
        _out("updated " + ", ".join(_shown(project, path) for path in changed))
    _held_back(project, ledger.held_back(project, weak))


def _held_back(project: Project, held: dict[Path, str]) -> None:
    """Say which ledger files were left as committed, and why (one line per reason)."""
    by_reason: dict[str, list[str]] = {}
    for path, why in held.items():
        by_reason.setdefault(why, []).append(_shown(project, path))
    for why, paths in by_reason.items():
        _out(
            f"not updated (they would be rendered without the chapter text): {', '.join(paths)}: {why}; "
            "the runs are recorded, and `pinb report --all` with the book writes them"
        )


def cmd_runs_prune(args: argparse.Namespace) -> int:
    from pinb.kit.prune import prunable

    project = _project(args)
    listing = project.store.list()
    _warn(listing.problems)
    found, suspect = prunable(project, listing)
    verb = "would remove" if args.dry_run else "removed"
    for item in found:
        if not args.dry_run:
            project.store.remove(item.path)
        _out(f"{verb} {_shown(project, item.path)}: {item.why}")
    for run in suspect:
        print(
            f"pinb: kept {_shown(project, run.path)}: {run.problem}; remove it with `pinb runs rm {run.record.run_id}`",
            file=sys.stderr,
        )
    _out(f"{len(found)} run folder(s) {verb}")
    if found and not args.dry_run:
        _refresh_ledger(project)
    return 0


def cmd_chapter_new(args: argparse.Namespace) -> int:
    """Scaffold the chapter's folder, then build its notebook with the project's `notebooks/build.py`."""
    import subprocess

    from pinb.chapters.registry import CHAPTERS_ENV, refresh
    from pinb.chapters.scaffold import new_chapter

    project = _project(args)
    into = Path(args.into).resolve() if args.into else None
    made = new_chapter(args.number, args.title, args.text, into)
    refresh()
    for path in made.files:
        _out(f"created {path}")
    env = dict(os.environ)
    if into is not None and str(into) not in env.get(CHAPTERS_ENV, "").split(os.pathsep):
        env[CHAPTERS_ENV] = os.pathsep.join(p for p in (env.get(CHAPTERS_ENV), str(into)) if p)
        _out(f"pinb finds this chapter when {CHAPTERS_ENV} names {into}")
    builder = project.root / "notebooks" / "build.py"
    command = [sys.executable, str(builder), "--chapter", made.chapter_id, "--root", str(project.root)]
    if not builder.is_file():
        _out(f"no notebooks/build.py in {project.root}: build the notebook where it is ({shlex.join(command[1:])})")
        return 0
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise KitError(f"building {made.notebook} failed: {' '.join(done.stderr.split())[-300:]}")
    _out(f"built {made.notebook}; next: add claims to {made.folder / 'ledger.yaml'} (docs/authoring.md)")
    return 0


def cmd_fingerprint(args: argparse.Namespace) -> int:
    print(fingerprint_file(args.file))
    return 0
