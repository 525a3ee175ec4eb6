"""`pinb claims …`: checks on the claims themselves (design.md §6).

- `check-judges [CHAPTER…] [--json]`: exit 0 when every runnable claim the stand-in can judge names at least one
  fault, agrees with real Pi's recorded verdict with no fault on, and moves away from it under each fault it names,
  and every fault moves a claim; exit 1 otherwise (a weak judge is a finding).
- `check-properties [CHAPTER…] [--witnesses N] [--backend B] [--json]`: every property claim on its hand-written
  witness and N seeded generated ones; exit 0 when each is OBSERVED (or a finding real Pi recorded too) with fewer
  than 20 % of its generated witnesses not exercising it, exit 1 otherwise.
- `experiment CLAIM --out DIR [--witnesses N]`: write the claim's witness scenarios as JSON files.
- `check CLAIM --scenario FILE… [--backend B] [--json]`: the property on the reader's own witness; exit 0
  OBSERVED, 1 CONTRADICTED, 3 NOT EXERCISED, 4 ERROR.
- `faults [--json]`: every named fault with its one-line deviation.
- `uncovered CHAPTER [--json]`: the chapter text's sentences and table cells no claim covers.
- `facts [CHAPTER…] [--pi-version V|all]`: read the package facts the chapters' package claims are judged from,
  live, and write their snapshots (`reference/facts/`), with when the registry was read.

Exit 2 on a user mistake (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pinb.backends import PI_MODELLED_VERSION
from pinb.claims import printable


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("claims", help="checks on the claims themselves")
    claims = p.add_subparsers(dest="claims_command", metavar="ACTION", parser_class=type(p))
    q = claims.add_parser(
        "check-judges", help="re-judge every runnable claim under the faults it names, against real Pi's verdict"
    )
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_check_judges)

    q = claims.add_parser(
        "check-properties", help="check every property claim on its hand-written and N generated witnesses"
    )
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    q.add_argument(
        "--witnesses",
        metavar="N",
        help="generated witnesses per claim, seeded so runs reproduce (default: 50 on standin, 5 on pi)",
    )
    _backend_options(q)
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_check_properties)

    q = claims.add_parser("experiment", help="write a claim's witness scenarios as JSON files")
    q.add_argument("claim", metavar="CLAIM", help="the claim id, e.g. pi-16.dispatch.registration-order")
    q.add_argument("--out", metavar="DIR", required=True, help="folder to write <scenario>.json into")
    q.add_argument(
        "--witnesses",
        metavar="N",
        default="0",
        help="also write N generated witnesses, the ones check-properties draws first (DIR/gen-K/<scenario>.json)",
    )
    q.set_defaults(run=cmd_experiment)

    q = claims.add_parser("check", help="check a claim's property on your own witness scenarios")
    q.add_argument("claim", metavar="CLAIM", help="the claim id")
    q.add_argument(
        "--scenario",
        metavar="FILE",
        action="append",
        required=True,
        help="a scenario JSON file named after the claim's scenario it replaces (repeat for each)",
    )
    _backend_options(q)
    q.add_argument("--json", action="store_true", help="print the structured observation as JSON")
    q.set_defaults(run=cmd_check)

    q = claims.add_parser("faults", help="list every named fault with its one-line deviation")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_faults)

    q = claims.add_parser(
        "uncovered",
        help="the chapter text's sentences and table cells that no claim covers (what the ledger leaves out)",
    )
    q.add_argument("chapter", metavar="CHAPTER", help="a chapter id, e.g. pi-16-chapter")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_uncovered)

    q = claims.add_parser(
        "facts",
        help="read the facts of the published packages that claims running no scenario are judged from (live: the "
        "installed release and the npm registry) and write their committed snapshots (reference/facts/)",
    )
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter with facts)")
    q.add_argument(
        "--pi-version",
        default=PI_MODELLED_VERSION,
        metavar="V",
        help=f"the Pi release (default {PI_MODELLED_VERSION}), or 'all': every installed release, oldest first",
    )
    q.set_defaults(run=cmd_facts)
    p.set_defaults(run=lambda args: _usage(p))


def _backend_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=("standin", "pi"),
        default="standin",
        help="standin (pinb's Python stand-in, default) or pi (the real Pi packages through Node)",
    )
    parser.add_argument(
        "--pi-version",
        default=PI_MODELLED_VERSION,
        metavar="VERSION",
        help=f"the Pi release for --backend pi (default {PI_MODELLED_VERSION})",
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _print_json(data: Any) -> None:
    print(printable(json.dumps(data, indent=2, ensure_ascii=False)))


def cmd_check_judges(args: argparse.Namespace) -> int:
    from pinb._async import run_sync
    from pinb.testing.check_judges import acheck_judges, render_text

    report = run_sync(acheck_judges(args.chapters))
    if args.json:
        _print_json(report.to_json())
    else:
        print(render_text(report))
    return 1 if report.problems() else 0


def _pi_ready(args: argparse.Namespace) -> None:
    from pinb.errors import UsageError

    if args.backend != "pi":
        return
    from pinb.scenario import reference

    if not reference.is_installed(args.pi_version):
        raise UsageError(
            f"Pi {args.pi_version} is not installed: run `pinb reference install --pi-version {args.pi_version}`"
        )


def cmd_check_properties(args: argparse.Namespace) -> int:
    from pinb._async import run_sync
    from pinb.testing.properties import DEFAULT_WITNESSES, check_properties, render_checks, witness_count

    count = witness_count(args.witnesses) if args.witnesses is not None else DEFAULT_WITNESSES[args.backend]
    _pi_ready(args)
    checks = run_sync(check_properties(args.chapters, args.backend, args.pi_version, count))
    problems = [problem for problem in (check.problem() for check in checks) if problem]
    if args.json:
        _print_json({"witnesses": count, "claims": [c.to_json() for c in checks], "problems": problems})
    else:
        print(printable(render_checks(checks)))
    return 1 if problems else 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from pinb.testing.properties import witness_count, write_experiment

    count = 0 if args.witnesses == "0" else witness_count(args.witnesses)
    for path in write_experiment(args.claim, Path(args.out), count):
        print(path)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from pinb._async import run_sync
    from pinb.claims import OUTCOME_OF, ClaimOutcome, structure_lines
    from pinb.testing.properties import EXIT, check_property, load_witness

    scenarios = load_witness(args.claim, args.scenario)
    _pi_ready(args)
    check = run_sync(check_property(args.claim, args.backend, args.pi_version, 0, scenarios, name="given"))
    if args.json:
        _print_json(check.to_json())
    else:
        print(printable(f"{check.status} {check.claim_id} on {check.backend}: {check.evidence}"))
        if check.result is not None:
            outcome = ClaimOutcome(
                claim_id=check.claim_id,
                outcome=OUTCOME_OF[check.status],
                evidence=check.evidence,
                **check.result.structure(),
            )
            for line in structure_lines(outcome):
                print(printable(f"    {line}"))
    return EXIT.get(check.status, 2)


def cmd_faults(args: argparse.Namespace) -> int:
    from pinb.testing.properties import fault_rows

    rows = fault_rows()
    if args.json:
        _print_json({"faults": rows})
        return 0
    width = max((len(row["fault"]) for row in rows), default=0)
    for row in rows:
        where = "" if row["declared_by"] == "pinb.testing.faults" else f" [{row['declared_by']}]"
        print(f"{row['fault'].ljust(width)}  {row['deviation']}{where}")
    print(f"{len(rows)} faults", file=sys.stderr)


def cmd_facts(args: argparse.Namespace) -> int:
    """Each chapter's `experiments.record_facts(version)` on each release asked for; a release that is not installed
    is one line and exit 2, before anything is written."""
    from pinb.backends import release_key
    from pinb.chapters.registry import folders
    from pinb.errors import UsageError
    from pinb.scenario import reference

    known = folders()
    unknown = [chapter for chapter in args.chapters if chapter not in known]
    if unknown:
        raise UsageError(f"unknown chapter {unknown[0]!r} (known: {', '.join(known)})")
    recorders = {
        chapter_id: record
        for chapter_id, found in known.items()
        if (not args.chapters or chapter_id in args.chapters)
        and (record := getattr(found.module("experiments"), "record_facts", None)) is not None
    }
    if not recorders:
        raise UsageError("no chapter asked for records package facts")
    if args.pi_version == "all":
        versions = [v for v in reference.available_versions() if reference.is_installed(v)]
        versions.sort(key=release_key)
    else:
        reference.packages_dir(args.pi_version)  # an unknown release: one line
        versions = [args.pi_version]
    missing = [v for v in versions if not reference.is_installed(v)]
    if missing:
        raise UsageError(f"Pi {missing[0]} is not installed: run `pinb reference install --pi-version {missing[0]}`")
    for version in versions:
        for chapter_id, record in recorders.items():
            path = record(version)
            print(f"{chapter_id} on Pi {version}: wrote {path.name}")
    return 0


def cmd_uncovered(args: argparse.Namespace) -> int:
    from pinb.chapters.book import TEXT_UNAVAILABLE, chapter_text
    from pinb.chapters.registry import folders
    from pinb.chapters.uncovered import uncovered
    from pinb.errors import UsageError

    known = folders()
    if args.chapter not in known:
        raise UsageError(f"unknown chapter {args.chapter!r} (known: {', '.join(known)})")
    ledger = known[args.chapter].ledger
    text = chapter_text(ledger)
    if text is None:
        raise UsageError(f"{args.chapter}: {TEXT_UNAVAILABLE}")
    found = uncovered(ledger, text.text)
    if args.json:
        print(json.dumps([{"text": f.text, "offset": f.start} for f in found], indent=2, ensure_ascii=False))
        return 0
    for fragment in found:
        print(f"- {fragment.text}")
    print(f"{len(found)} passage(s) of {text.path.name} no claim of {args.chapter} covers", file=sys.stderr)

    return 0
