"""Fingerprints of what a run depends on: the chapter text (prose) and the source code (Python, as its syntax).

Text (normalisation version 1), applied in this order:

1. decode as UTF-8 (a leading byte-order mark is dropped);
2. Unicode NFC, so composed and decomposed accents hash alike;
3. every run of whitespace (spaces, tabs, newlines, no-break spaces, any Unicode space) becomes one space;
4. leading and trailing whitespace is removed.

The hash is the lowercase hex sha256 of the UTF-8 bytes of the result. Re-wrapping lines or re-spacing
paragraphs therefore leaves the fingerprint unchanged; any change of a word, a letter or a punctuation mark
(curly quotes included) changes it.

Code: a Python file counts as its syntax tree without docstrings (`ast.dump`, no line numbers), so reformatting,
comments and docstrings do not change it; a YAML file counts as the data it parses to; any other file as its
bytes. Parsing is slow on a large tree, so each file's digest is cached by the sha256 of its bytes, in memory and
in `$XDG_CACHE_HOME/pinb/code-digests.json` (skipped silently where that cannot be written).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

NORMALISATION_VERSION = 1
#: Bumped whenever the code digest changes meaning, so old cache entries are not reused.
CODE_DIGEST_VERSION = 1
_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = text.removeprefix("\ufeff")
    text = unicodedata.normalize("NFC", text)
    return _WHITESPACE.sub(" ", text).strip()


def fingerprint_text(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _content_digest(name: str, data: bytes) -> str:
    """What the file means for a run: Python as syntax, YAML as data, anything else as bytes."""
    if name.endswith(".py"):
        try:
            return ast.dump(_without_docstrings(ast.parse(data)), annotate_fields=False)
        except (SyntaxError, ValueError):
            pass
    elif name.endswith((".yaml", ".yml")):
        try:
            import yaml

            return json.dumps(yaml.safe_load(data), sort_keys=True, default=str)
        except Exception:  # not YAML after all: its bytes decide
            pass
    return data.hex()


class _Cache:
    def __init__(self) -> None:
        self.memory: dict[str, str] = {}
        self.loaded = False
        self.dirty = False

    @property
    def path(self) -> Path:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "pinb" / "code-digests.json"

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(stored, dict) and stored.get("version") == CODE_DIGEST_VERSION:
            self.memory.update({str(k): str(v) for k, v in dict(stored.get("digests", {})).items()})

    def save(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"version": CODE_DIGEST_VERSION, "digests": self.memory}), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            pass


_CACHE = _Cache()


def file_digest(path: Path) -> str:
    """sha256 of what the file means (see the module docstring), cached by the sha256 of its bytes."""
    data = path.read_bytes()
    key = f"{path.suffix}:{hashlib.sha256(data).hexdigest()}"
    _CACHE.load()
    found = _CACHE.memory.get(key)
    if found is None:
        found = hashlib.sha256(_content_digest(path.name, data).encode("utf-8")).hexdigest()
        _CACHE.memory[key] = found
        _CACHE.dirty = True
    return found


def code_fingerprint(files: Mapping[str, Path]) -> str:
    """sha256 over the files (name → path), each by its name and `file_digest`, in name order."""
    digest = hashlib.sha256()
    for name in sorted(files):
        path = files[name]
        digest.update(name.encode("utf-8") + b"\0")
        digest.update((file_digest(path) if path.is_file() else "missing").encode("ascii") + b"\0")
    _CACHE.save()
    return digest.hexdigest()


__all__ = ["CODE_DIGEST_VERSION", "NORMALISATION_VERSION", "code_fingerprint", "file_digest", "fingerprint_text"]
