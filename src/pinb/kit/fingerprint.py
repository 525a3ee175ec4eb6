"""Fingerprints the kit records: the chapter text (`pinb.fingerprints`, where the normalisation is described), a
file's bytes, and pinb's whole source for chapters that do not say which code their verdicts depend on.

This does not reproduce the fingerprints printed in the book's research briefs: their normalisation is not
published, and neither NFC/NFKC, whitespace collapsing, line or paragraph joins, quote folding, case folding nor
dropping the title or footer lines reproduces them from the plain-text snapshot. pinb's fingerprints are pinb's.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from pinb.errors import KitError
from pinb.files import CHAPTER_TEXT_LIMIT, FileError, open_regular, read_text
from pinb.fingerprints import NORMALISATION_VERSION, fingerprint_text, normalise


def fingerprint_file(path: str | Path) -> str:
    try:
        text = read_text(path, limit=CHAPTER_TEXT_LIMIT, what="chapter text")
    except FileError as exc:
        raise KitError(str(exc)) from None
    return fingerprint_text(text)


def sha256_file(path: str | Path) -> str:
    """The file's sha256; `NotRegularFile` (an `OSError`) for anything but a regular file."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """sha256 over all of pinb's own Python source (each file's path and bytes, in path order).

    A run's outcomes come from pinb's code (the experiments, the judges, the stand-in) as much as from the notebook,
    and the version number does not change when that code does; this does.
    """
    import pinb

    root = Path(pinb.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


__all__ = [
    "NORMALISATION_VERSION",
    "code_fingerprint",
    "fingerprint_file",
    "fingerprint_text",
    "normalise",
    "sha256_file",
]
