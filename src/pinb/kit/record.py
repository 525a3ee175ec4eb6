"""The run record (design.md §4): one `run.json` per execution of a chapter notebook.

A record describes the artefacts next to it (the executed notebook above all) and is derivable from them: the
claim outcomes are read back from the notebook's pinb outputs, never typed in.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pinb.kit.claims import BACKEND_RE, ClaimOutcome, backend_family, validate_chapter_id

RECORD_FILE = "run.json"
EXECUTED_NOTEBOOK = "executed.ipynb"
#: `20261130T195500Z-3f9a1c`: UTC second, then 6 random hex digits; sorts by start time.
RUN_ID_RE = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")

RunStatus = Literal["completed", "failed", "error", "interrupted"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class NotebookRef(BaseModel):
    model_config = _FROZEN

    #: The source notebook, relative to the project root (POSIX separators).
    path: str
    #: The notebook's fingerprint (`pinb.kit.notebook.notebook_fingerprint`: its cells' types, sources and tags),
    #: not the file's bytes: outputs a Jupyter session saved into it do not change it.
    sha256: str


class Artifact(BaseModel):
    model_config = _FROZEN

    #: Relative to the run folder, e.g. `executed.ipynb`.
    path: str
    sha256: str
    #: `notebook` (the executed notebook), `trace` (a scenario trace), `file` (anything else the notebook wrote).
    kind: Literal["notebook", "trace", "file"] = "file"


class Environment(BaseModel):
    model_config = _FROZEN

    python: str
    platform: str
    pinb: str
    papermill: str | None = None
    nbclient: str | None = None
    ipykernel: str | None = None
    pydantic: str | None = None
    nbformat: str | None = None
    #: The kernel's command line (its interpreter should be the one that ran pinb).
    kernel: tuple[str, ...] = ()
    #: `git rev-parse HEAD` of the project, `None` outside a git work tree.
    git_commit: str | None = None
    #: Whether tracked or untracked files differed from `git_commit` when the run started.
    git_dirty: bool | None = None
    #: For `pi@…` runs: the Node version and every resolved `@earendil-works/*` package version.
    node: str | None = None
    pi_packages: dict[str, str] = Field(default_factory=dict)
    #: Why something above could not be determined (e.g. the reference bridge is not installed).
    notes: tuple[str, ...] = ()


class Inputs(BaseModel):
    """What a run's result depends on: equal inputs mean a new run would check the same thing."""

    model_config = _FROZEN

    #: The source notebook's fingerprint (see `NotebookRef.sha256`).
    notebook_sha256: str
    pinb_version: str
    text_fingerprint: str
    backend: str
    parameters: dict[str, Any]
    #: `code_fingerprint()` of the pinb that ran (empty in records written before it was kept: never current).
    pinb_code: str = ""
    #: The environment that can change an outcome (`pinb.kit.environment.reuse_key`): `pinb verify` re-uses a run
    #: only where it is equal. It does not make a run stale (see `same_content`): the committed evidence reads the
    #: same on every machine, and `pinb status` says where this machine's environment differs.
    environment: dict[str, str] = Field(default_factory=dict)

    def same_content(self, other: Inputs) -> bool:
        """Equal apart from the environment: the same notebook, pinb, chapter text, backend and parameters."""
        return self.model_dump(exclude={"environment"}) == other.model_dump(exclude={"environment"})

    def environment_differences(self, other: Inputs) -> list[str]:
        """`python 3.11.7 → 3.12.1` for each entry of the environment that differs from `self` (a past run) to now."""
        names = dict.fromkeys([*other.environment, *self.environment])  # python and platform first
        return [
            f"{name} {self.environment.get(name, 'unknown')} → {other.environment.get(name, 'none')}"
            for name in names
            if self.environment.get(name) != other.environment.get(name)
        ]

    def differences(self, other: Inputs) -> list[str]:
        """Human phrases naming what changed from `self` (a past run) to `other` (now), the environment aside."""
        changes = []
        if self.notebook_sha256 != other.notebook_sha256:
            changes.append("the notebook changed")
        if self.pinb_version != other.pinb_version:
            changes.append(f"pinb {self.pinb_version} → {other.pinb_version}")
        if self.pinb_code != other.pinb_code:
            changes.append("pinb's code changed")
        if self.text_fingerprint != other.text_fingerprint:
            changes.append(_text_change(self.text_fingerprint, other.text_fingerprint))
        if self.backend != other.backend:
            changes.append(f"backend {self.backend} → {other.backend}")
        if self.parameters != other.parameters:
            changes.append("different parameters")
        return changes


#: Warning prefixes that mean claim outputs were lost: the run may have checked claims its record does not show.
UNREADABLE_NOTEBOOK = "cannot read the executed notebook"
MALFORMED_OUTPUT = "malformed claim output ignored"


class RunRecord(BaseModel):
    model_config = _FROZEN

    schema_version: int = 1
    run_id: str
    chapter: str
    notebook: NotebookRef
    parameters: dict[str, Any]
    backend: str
    command: str
    started_at: str
    finished_at: str
    status: RunStatus
    #: One line saying why a run is not `completed` (the failing cell's error, the timeout, the dead kernel).
    failure: str | None = None
    environment: Environment
    claims: tuple[ClaimOutcome, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    #: The inputs the cache and the STALE status compare.
    inputs: Inputs
    #: Problems found while collecting outcomes (unknown claim ids, a backend mismatch...).
    warnings: tuple[str, ...] = ()

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        if not RUN_ID_RE.match(value):
            raise ValueError(f"invalid run id {value!r}")
        return value

    @field_validator("chapter")
    @classmethod
    def _chapter(cls, value: str) -> str:
        validate_chapter_id(value)
        return value

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str) -> str:
        if not BACKEND_RE.match(value):
            raise ValueError(f"invalid backend {value!r}")
        return value

    @property
    def backend_family(self) -> str:
        return backend_family(self.backend)

    def lost_outcomes(self) -> tuple[str, ...]:
        """The warnings saying some claim outputs could not be read (then a missing outcome is not a skip)."""
        return tuple(w for w in self.warnings if w.startswith(UNREADABLE_NOTEBOOK) or MALFORMED_OUTPUT in w)

    def outcome(self, claim_id: str) -> ClaimOutcome | None:
        """The last outcome recorded for a claim in this run (a notebook checks a claim once; the last wins)."""
        found = None
        for item in self.claims:
            if item.claim_id == claim_id:
                found = item
        return found


def _text_change(before: str, now: str) -> str:
    """An empty fingerprint means the chapter text was not available: not a change of the text."""
    if not now:
        return "the chapter text is not available here, so it could not be compared"
    if not before:
        return "that run had no chapter text to fingerprint"
    return "the chapter text changed"
