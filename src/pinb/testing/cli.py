"""`pinb claims check-judges [CHAPTER…] [--json]` (design.md §6) and `pinb claims uncovered CHAPTER [--json]`.

Exit 0: every runnable claim the stand-in can judge names at least one fault, is OBSERVED without it and not
OBSERVED under each; every fault catches out a claim. Exit 1 otherwise (a weak judge is a finding). Exit 2 on a
user mistake.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("claims", help="checks on the claims themselves")
    claims = p.add_subparsers(dest="claims_command", metavar="ACTION", parser_class=type(p))
    q = claims.add_parser("check-judges", help="re-judge every runnable claim under the stand-in faults it names")
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_check_judges)
    q = claims.add_parser(
        "uncovered",
        help="the chapter text's sentences and table cells that no claim covers (what the ledger leaves out)",
    )
    q.add_argument("chapter", metavar="CHAPTER", help="a chapter id, e.g. pi-16-chapter")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_uncovered)
    p.set_defaults(run=lambda args: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_check_judges(args: argparse.Namespace) -> int:
    from pinb._async import run_sync
    from pinb.testing.check_judges import acheck_judges, render_text

    report = run_sync(acheck_judges(args.chapters))
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render_text(report))
    return 1 if report.problems() else 0


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
