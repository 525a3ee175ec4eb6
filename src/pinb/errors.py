"""The one error tree of pinb.

Exceptions are for misuse at a boundary (a wrong argument, a prompt while busy, a malformed file).
Failures inside the agent loop are data (error messages, error tool results), never exceptions.
The CLI turns every ``PinbError`` into one line on stderr and exit code 2.
"""

from __future__ import annotations


class PinbError(Exception):
    """Base class of every error pinb raises on purpose. Its message says what to do instead."""


class UsageError(PinbError):
    """A caller used an API or command the wrong way (bad argument, unknown name, wrong state)."""


class AgentBusyError(UsageError):
    """The agent is already processing; Pi's wording is kept in the message."""


class FauxScriptError(UsageError):
    """A scripted faux response is malformed."""


class ToolDefinitionError(UsageError):
    """A tool lacks a name, a schema or an ``execute`` callable."""


class ExtensionError(UsageError):
    """An extension registered something invalid (unknown event name, wrong result shape...)."""


class SessionFileError(PinbError):
    """A session file is malformed or refers to an entry that does not exist."""


class ScenarioError(PinbError):
    """A scenario file is malformed or fails the contract."""


class ReferenceError_(PinbError):
    """The real-Pi reference bridge cannot run (no Node, no registry, unknown version, Node crash)."""


class ExperimentFault(PinbError):
    """The experiment did not complete (its process was killed, ran out of memory or overran its time limit).

    A fault is never a result: the claim being checked is ERROR and the error propagates, so the run is failed
    and the findings of earlier runs stay."""


class KitError(PinbError):
    """The notebook kit cannot do what was asked (unknown chapter, bad notebook, unwritable run store...)."""
