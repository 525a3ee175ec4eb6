"""The ``pinb`` command line.

Subcommands are contributed by the layers that own them (``pinb.kit.cli``, ``pinb.scenario.cli``); this module
only builds the parser and maps errors to exit codes: 0 ok, 1 a finding (claim contradicted, traces differ),
2 an error (one line on stderr, never a traceback for a user mistake).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from pinb import __version__
from pinb.errors import PinbError
from pinb.files import process_folder

#: Modules that expose ``add_commands(subparsers)``; each registers its subcommands with ``set_defaults(run=...)``
#: where ``run(args) -> int`` returns the exit code.
COMMAND_MODULES = ("pinb.kit.cli", "pinb.scenario.cli", "pinb.scopes.cli", "pinb.testing.cli")
#: The module that registers each top-level command, so a command imports only its own layer (``pinb scenario run``
#: never loads the kit). A command not listed here, and ``pinb --help``, load every module of ``COMMAND_MODULES``.
COMMAND_OWNERS = {
    "verify": "pinb.kit.cli",
    "status": "pinb.kit.cli",
    "report": "pinb.kit.cli",
    "runs": "pinb.kit.cli",
    "fingerprint": "pinb.kit.cli",
    "chapter": "pinb.kit.cli",
    "scenario": "pinb.scenario.cli",
    "reference": "pinb.scenario.cli",
    "drift": "pinb.kit.cli",
    "claims": "pinb.testing.cli",
    "scopes": "pinb.scopes.cli",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors too; keep it to one line
        self.exit(2, f"pinb: error: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, only with the command they name (and every command when that is unknown)."""
    parser = _Parser(prog="pinb", description="Check the runnable claims of the book Pi Agents.")
    parser.add_argument("--version", action="version", version=f"pinb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    command = _command_name(argv)
    owner = COMMAND_OWNERS.get(command) if command is not None else None
    if owner is not None:
        _register(owner, subparsers)
    if owner is None or command not in subparsers.choices:
        for name in COMMAND_MODULES:
            if name != owner:
                _register(name, subparsers)
    return parser


def _command_name(argv: Sequence[str] | None) -> str | None:
    """The first argument that is not an option: the command (the top-level options take no value)."""
    if argv is None:
        return None
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _register(name: str, subparsers: argparse._SubParsersAction) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return
    module.add_commands(subparsers)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return 2
    if getattr(args, "trust_extension_code", False):
        os.environ["PINB_TRUST_EXTENSION_CODE"] = "1"  # notebook kernels started by this command inherit it
    if sys.stdout is None:  # started with its standard output closed
        print("pinb: error: standard output is closed", file=sys.stderr)
        return 2
    process_folder()  # every temporary file of this command, and of what it starts, in one folder of its own
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)  # type: ignore[assignment]
    try:
        code = int(run(args))
        sys.stdout.flush()
        return code
    except PinbError as exc:
        print(f"pinb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pinb: interrupted", file=sys.stderr)
        return 130
    finally:
        _close_node_workers()
        sys.stdout = stdout


def _close_node_workers() -> None:
    """End the warm Node workers this command started (also done at exit; here so Ctrl-C ends them first)."""
    workers = sys.modules.get("pinb.scenario.worker")
    if workers is not None:
        workers.close_workers()


class StdoutError(PinbError):
    """Standard output cannot be written (a full disk, a closed or broken descriptor)."""


class _Stdout:
    """Standard output whose write failures end the command in one line (exit 2) instead of a traceback; a reader
    that stops early (`BrokenPipeError`) is left to the commands, for which it is no error."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._guard(lambda: self._stream.write(text))

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def _guard(self, action: Any) -> Any:
        try:
            return action()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            # from now on the interpreter's own flush at exit writes to the null device, never fails again
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
            raise StdoutError(f"cannot write to standard output: {getattr(exc, 'strerror', None) or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


if __name__ == "__main__":
    sys.exit(main())
