"""Where a claim is checked: one `Backend` value, and the one table of the Pi releases pinb knows.

A backend is `standin` (pinb's Python stand-in of Pi) or `pi@<version>` (the published npm packages, run through
Node). Everything that names, parses or limits a backend goes through here; everything that needs a Pi version
reads `PI_RELEASES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pinb.errors import UsageError

Family = Literal["standin", "pi"]
Layer = Literal["agent", "app", "package"]
FAMILIES: tuple[Family, ...] = ("standin", "pi")


@dataclass(frozen=True)
class PiRelease:
    """A published Pi release pinb can run, and which parts of Pi its reference package set has."""

    version: str
    layers: frozenset[str]
    """`agent` (pi-agent-core), `app` (pi-coding-agent), `package` (facts about the published packages)."""
    note: str = ""
    corpus: bool = True
    """Whether the scenario corpus's traces are recorded on it (`pinb reference refresh`); the other releases are
    in the release matrix (`pinb verify --pi-version all`) only."""


#: Newest first; the first is the release the stand-in models and the default of the `pi` backend, the last the
#: published release nearest the book's pin (`BOOK_PINNED_VERSION`). Every registry release from that one on is here
#: (`pinb reference install --pi-version all` installs them all).
PI_RELEASES: tuple[PiRelease, ...] = (
    PiRelease("1.6.0", frozenset({"agent", "app", "package"}), "the release the stand-in models"),
    *(
        PiRelease(
            version,
            frozenset({"agent", "app", "package"}),
            "in the release matrix (behaviour and package facts); the corpus traces are recorded on 1.6.0 and 1.0.3",
            False,
        )
        for version in ("1.5.2", "1.5.0", "1.4.0", "1.3.0")
    ),
    PiRelease(
        "1.0.3",
        frozenset({"agent", "package"}),
        "@earendil-works/pi-coding-agent 1.0.3 has no package set of its release: its dependency "
        "@earendil-works/chord@^1.0.3 was not on the npm registry when this set was pinned (2026-11-30), and the "
        "chord 1.5.0 and 1.6.1 listed since (read 2026-12-06) install it beside 1.6 packages, a set never released, "
        "so layer app runs on Pi 1.3.0 and later only",
    ),
)
PI_MODELLED_VERSION = PI_RELEASES[0].version
#: The version the book's text pins; it was not on the npm registry as of 2026-11-30 (a local source can supply it).
BOOK_PINNED_VERSION = "1.0.4"

#: A backend as run records name it.
LABEL_RE = re.compile(r"^(standin|pi@[0-9A-Za-z.+-]+)$")


def pi_release(version: str) -> PiRelease | None:
    return next((release for release in PI_RELEASES if release.version == version), None)


@dataclass(frozen=True)
class Backend:
    """`standin`, or `pi` at one version."""

    family: Family
    pi_version: str | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise UsageError(f"unknown backend {self.family!r}: use 'standin' or 'pi'")
        if self.family == "standin" and self.pi_version is not None:
            object.__setattr__(self, "pi_version", None)
        if self.family == "pi" and not self.pi_version:
            raise UsageError("the pi backend needs a Pi version, e.g. pi@1.6.0")

    @classmethod
    def parse(cls, text: str, pi_version: str | None = None) -> Backend:
        """`standin`, `pi` (at `pi_version`, default the modelled release) or `pi@<version>`."""
        if text == "pi":
            return cls("pi", pi_version or PI_MODELLED_VERSION)
        if not isinstance(text, str) or not LABEL_RE.match(text):
            raise UsageError(f"invalid backend {text!r}: use 'standin', 'pi' or 'pi@<version>'")
        family, _, version = text.partition("@")
        return cls("pi" if family == "pi" else "standin", version or None)

    @property
    def label(self) -> str:
        """As run records name it: `standin` or `pi@1.6.0`."""
        return "standin" if self.family == "standin" else f"pi@{self.pi_version}"

    def __str__(self) -> str:
        return self.label

    @property
    def release(self) -> PiRelease | None:
        return pi_release(self.pi_version) if self.pi_version else None

    def supports(self, layer: str) -> tuple[bool, str]:
        """Whether this backend can run an experiment on `layer`; the reason when it cannot."""
        release = self.release
        if layer == "package":
            if self.family != "pi":
                return False, "package facts come from the real published packages; the stand-in has none"
            if release is not None and "package" not in release.layers:
                return False, f"no package facts are recorded for this release ({release.note})"
            return True, ""
        if self.family == "pi" and release is not None and layer not in release.layers:
            what = "only pi-agent-core and pi-ai (no application layer)" if layer == "app" else f"no {layer} layer"
            return False, f"the {self.label} reference set has {what}: {release.note}"
        return True, ""


def release_key(version: str) -> tuple[int, ...]:
    """`1.10.2` or `pi@1.10.2` → (1, 10, 2): releases compare by their numbers, not as text."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("@", 1)[-1]))


def is_label(text: str) -> bool:
    """Whether `text` is a backend as run records name it."""
    return isinstance(text, str) and bool(LABEL_RE.match(text))


__all__ = [
    "BOOK_PINNED_VERSION",
    "FAMILIES",
    "LABEL_RE",
    "PI_MODELLED_VERSION",
    "PI_RELEASES",
    "Backend",
    "PiRelease",
    "is_label",
    "pi_release",
    "release_key",
]
