"""YAML 1.2 with the core schema, as Pi reads front matter (the ``yaml`` npm package's ``parse``, 2.x defaults).

Pi 1.6.0 parses skill and prompt-template front matter with ``parse`` from the ``yaml`` package, whose default is
YAML 1.2's core schema: ``yes``, ``on``, ``y`` are strings (YAML 1.1, and so PyYAML, reads them as booleans), so
are ``2024-01-01``, ``1_000`` and ``0b101``; ``0o17`` is octal and ``017`` decimal; ``<<`` is an ordinary key;
a key given twice is an error. ``load_yaml12`` parses with ruamel.yaml (YAML 1.2 syntax) and resolves plain
scalars by the core schema only.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import BaseResolver

__all__ = ["load_yaml12"]

_NULL: Final = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL: Final = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT: Final = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT: Final = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)

_TAG = "tag:yaml.org,2002:"


class _CoreResolver(BaseResolver):
    """Implicit tags of the YAML 1.2 core schema only (no timestamps, merge keys, ``=``, 1.1 booleans)."""

    def __init__(self, version: Any = None, loader: Any = None, loadumper: Any = None) -> None:
        super().__init__(loadumper if loadumper is not None else loader)

    @property
    def processing_version(self) -> tuple[int, int]:
        return (1, 2)


_CoreResolver.add_implicit_resolver(_TAG + "null", _NULL, ["~", "n", "N", ""])
_CoreResolver.add_implicit_resolver(_TAG + "bool", _BOOL, list("tTfF"))
_CoreResolver.add_implicit_resolver(_TAG + "int", _INT, list("-+0123456789"))
_CoreResolver.add_implicit_resolver(_TAG + "float", _FLOAT, list("-+0123456789."))


class _CoreConstructor(SafeConstructor):
    """Values as the core schema defines them (JavaScript numbers: an integer is exact only below 2**53)."""

    def construct_yaml_bool(self, node: ScalarNode) -> bool:
        return str(self.construct_scalar(node)).lower() == "true"

    def construct_yaml_int(self, node: ScalarNode) -> Any:
        text = str(self.construct_scalar(node))
        if text.startswith(("0o", "0x")):
            value = int(text[2:], 8 if text[1] == "o" else 16)
            return value if value < 2**53 else float(value)
        value = int(text)  # leading zeros are decimal in YAML 1.2: 017 is 17
        return value if abs(value) < 2**53 else float(value)  # a JavaScript number

    def construct_yaml_float(self, node: ScalarNode) -> float:
        text = str(self.construct_scalar(node)).lower()
        if text.endswith(".inf"):
            return -math.inf if text.startswith("-") else math.inf
        if text == ".nan":
            return math.nan
        return float(text)


for _name in ("bool", "int", "float"):
    _CoreConstructor.add_constructor(_TAG + _name, getattr(_CoreConstructor, f"construct_yaml_{_name}"))


def load_yaml12(text: str) -> Any:
    """The value of one YAML 1.2 document (core schema); raises ruamel.yaml's errors for invalid YAML."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = _CoreResolver
    yaml.Constructor = _CoreConstructor
    # Pi hands the parser the text up to the closing `---` without its final line break; a block scalar
    # (`description: |`) still ends in one there, as the yaml package reads it.
    return yaml.load(text + "\n")
