"""The chapter prose fingerprint: sha256 of the chapter text after a documented normalisation.

Normalisation (version 1), applied in this order:

1. decode as UTF-8 (a leading byte-order mark is dropped);
2. Unicode NFC, so composed and decomposed accents hash alike;
3. every run of whitespace (spaces, tabs, newlines, no-break spaces, any Unicode space) becomes one space;
4. leading and trailing whitespace is removed.

The hash is the lowercase hex sha256 of the UTF-8 bytes of the result. Re-wrapping lines or re-spacing
paragraphs therefore leaves the fingerprint unchanged; any change of a word, a letter or a punctuation mark
(curly quotes included) changes it.

This does not reproduce the fingerprints printed in the book's research briefs: their normalisation is not
published, and neither NFC/NFKC, whitespace collapsing, line or paragraph joins, quote folding, case folding nor
dropping the title or footer lines reproduces them from the plain-text snapshot. pinb's fingerprints are pinb's.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from pathlib import Path

from pinb.errors import KitError

NORMALISATION_VERSION = 1
_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = text.removeprefix("\ufeff")
    text = unicodedata.normalize("NFC", text)
    return _WHITESPACE.sub(" ", text).strip()


def fingerprint_text(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def fingerprint_file(path: str | Path) -> str:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KitError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KitError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    return fingerprint_text(text)


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """sha256 over pinb's own Python source (each file's path and bytes, in path order).

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
