"""The ``pinb`` command line.

Subcommands are contributed by the layers that own them (``pinb.kit.cli``, ``pinb.scenario.cli``); this module
only builds the parser and maps errors to exit codes: 0 ok, 1 a finding (claim contradicted, traces differ),
2 an error (one line on stderr, never a traceback for a user mistake).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pinb import __version__
from pinb.errors import PinbError

#: Modules that expose ``add_commands(subparsers)``; each registers its subcommands with ``set_defaults(run=...)``
#: where ``run(args) -> int`` returns the exit code.
COMMAND_MODULES = ("pinb.kit.cli", "pinb.scenario.cli")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors too; keep it to one line
        self.exit(2, f"pinb: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pinb", description="Check the runnable claims of the book Pi Agents.")
    parser.add_argument("--version", action="version", version=f"pinb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.add_commands(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(run(args))
    except PinbError as exc:
        print(f"pinb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pinb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
