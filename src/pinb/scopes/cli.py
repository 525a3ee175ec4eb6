"""`pinb scopes refresh` (judge the documentation and declarations scopes on every release's tarball and write
`reference/facts/scopes/`) and `pinb scopes show` (what the committed facts say, per claim and release)."""

from __future__ import annotations

import argparse
import json
import sys


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("scopes", help="the claims' documentation and declarations scopes, per Pi release")
    verbs = p.add_subparsers(dest="scopes_command", metavar="ACTION", parser_class=type(p))
    q = verbs.add_parser(
        "refresh",
        help="fetch each release's tarball (npm pack), judge every scope on it, write reference/facts/scopes/ "
        "(needs npm and the registry)",
    )
    q.add_argument(
        "--pi-version",
        action="append",
        default=[],
        metavar="V",
        help="a release of pi-coding-agent (repeatable), or 'all': every registry release from 1.0.3 on (default: all)",
    )
    q.set_defaults(run=cmd_refresh)
    q = verbs.add_parser("show", help="the committed scope results, one line per claim scope and release")
    q.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(run=cmd_show)

    def usage(_args: argparse.Namespace) -> int:
        p.print_usage(sys.stderr)
        return 2

    p.set_defaults(run=usage)


def cmd_refresh(args: argparse.Namespace) -> int:
    from pinb.scopes.generate import generate

    generate(args.pi_version or ["all"], progress=lambda message: print(message, file=sys.stderr, flush=True))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from pinb.chapters.registry import folders
    from pinb.errors import UsageError
    from pinb.scopes.facts import load_all

    known = folders()
    for chapter in args.chapters:
        if chapter not in known:
            raise UsageError(f"unknown chapter {chapter!r} (known: {', '.join(known)})")
    wanted = {c.id for cid in (args.chapters or known) for c in known[cid].ledger.claims}
    facts = load_all()
    rows = [(f, r) for f in facts for r in f.results if r.claim in wanted]
    if args.json:
        data = [{"version": f.release.version, **r.model_dump(mode="json")} for f, r in rows]
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    if not facts:
        print("no scope facts: run `pinb scopes refresh`", file=sys.stderr)
        return 0
    for f, r in sorted(rows, key=lambda row: (row[1].claim, row[1].scope, row[1].target)):
        print(f"{r.claim}  {r.scope}:{r.target}  pi-coding-agent {f.release.version}  {r.verdict}  {r.evidence}")
    return 0
