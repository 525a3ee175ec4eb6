"""The declarations scope: a type's shape as Pi's `.d.ts` declare it, and whether it has the fields a claim names.

The shape is read by `reference/declarations.mjs`, which runs the TypeScript compiler API (the `typescript` package
pinned in `reference/typescript/`) over every `.d.ts` of a release's `dist/`: the checker resolves inherited and
intersected members, and a union type is reported with its variants and the property that tells them apart.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pinb.errors import ReferenceError_

_STRICT = ConfigDict(frozen=True, extra="forbid")
DECLARATIONS_TIMEOUT_S = 300


class Member(BaseModel):
    model_config = _STRICT

    name: str
    optional: bool
    type: str


class Variant(BaseModel):
    model_config = _STRICT

    name: str
    value: str | None
    members: tuple[Member, ...]


class Shape(BaseModel):
    """A declared type: where it is, what kind, its members (for a union: the ones every variant has)."""

    model_config = _STRICT

    file: str
    line: int
    kind: str
    """`interface`, `type` or `union`."""
    discriminant: str | None = None
    members: tuple[Member, ...]
    variants: tuple[Variant, ...] = ()

    @property
    def described(self) -> str:
        if self.kind != "union":
            return self.kind
        if self.discriminant:
            values = ", ".join(f'"{v.value}"' for v in self.variants if v.value is not None)
            return f"a union on {self.discriminant} ({values})"
        return f"a union of {len(self.variants)} types"


def read_shapes(typescript_dir: Path, package_dir: Path, symbols: list[str], node: Path) -> dict[str, Shape | None]:
    """The shapes of `symbols` in the unpacked package at `package_dir` (None for a symbol it does not declare)."""
    script = Path(__file__).resolve().parents[3] / "reference" / "declarations.mjs"
    command = [str(node), str(script), str(typescript_dir), str(package_dir), *symbols]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=DECLARATIONS_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise ReferenceError_(
            f"reading the declarations of {package_dir.name} took over {DECLARATIONS_TIMEOUT_S} s"
        ) from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise ReferenceError_(f"reading the declarations of {package_dir}: {last}")
    raw = json.loads(out.stdout)
    return {name: (Shape.model_validate(raw[name]) if raw.get(name) else None) for name in symbols}


class FieldCheck(BaseModel):
    """The fields a claim names against one declared type."""

    model_config = _STRICT

    symbol: str
    status: str
    """`matches` (every named field declared, optional where the chapter writes `?`), `differs`, or `absent`."""
    file: str = ""
    line: int | None = None
    shape: str = ""
    """What kind of type it is, in words: `interface`, `a union on messageType ("user", "custom")`."""
    declared: tuple[str, ...] = ()
    """Its fields as the chapter would write them (`images?` for an optional one)."""
    missing: tuple[str, ...] = ()
    """Named by the chapter, declared by no variant."""
    optionality: tuple[str, ...] = ()
    """Named fields whose optionality differs, in words."""
    in_variants: tuple[str, ...] = ()
    """Named fields only some variants of a union declare: `prompt only in the messageType "user" variant`."""


def _written(member: Member) -> str:
    return member.name + ("?" if member.optional else "")


def check_fields(symbol: str, fields: tuple[str, ...], shape: Shape | None) -> FieldCheck:
    """Whether `shape` declares the `fields` a claim names (the field `type` every event has is not listed)."""
    if shape is None:
        return FieldCheck(symbol=symbol, status="absent")
    common = {m.name: m for m in shape.members}
    missing: list[str] = []
    optionality: list[str] = []
    in_variants: list[str] = []
    for written in fields:
        name, optional = written.rstrip("?"), written.endswith("?")
        member = common.get(name)
        if member is None:
            holders = [v for v in shape.variants if any(m.name == name for m in v.members)]
            if not holders:
                missing.append(name)
                continue
            which = " and ".join(f'"{v.value}"' if v.value is not None else v.name for v in holders)
            key = f"{shape.discriminant} " if shape.discriminant else ""
            in_variants.append(f"{name} only in the {key}{which} variant{'s' if len(holders) > 1 else ''}")
            member = next(m for m in holders[0].members if m.name == name)
        if member.optional != optional:
            said = "optional" if optional else "required"
            optionality.append(
                f"{name} is {'optional' if member.optional else 'required'}, the chapter writes it {said}"
            )
    status = "matches" if not (missing or optionality or in_variants) else "differs"
    return FieldCheck(
        symbol=symbol,
        status=status,
        file=shape.file,
        line=shape.line,
        shape=shape.described,
        declared=tuple(_written(m) for m in shape.members if m.name != "type"),
        missing=tuple(missing),
        optionality=tuple(optionality),
        in_variants=tuple(in_variants),
    )


__all__ = ["FieldCheck", "Member", "Shape", "Variant", "check_fields", "read_shapes"]
