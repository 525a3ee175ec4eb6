"""Tool-argument validation with Pi's coercion rules and error text (pi-ai ``validateToolArguments`` on pi-schema).

``validate_tool_arguments(tool, tool_call)`` returns the coerced arguments or raises ``ToolArgumentsError`` whose
message is Pi's, for example::

    Validation failed for tool "word_count":
      - text: expected string, got integer

    Received arguments:
    {
      "text": 4
    }

Supported JSON Schema: ``type`` (one or a list), ``enum``, ``const``, string length / ``pattern``, number bounds and
``multipleOf``, ``properties`` / ``required`` / ``additionalProperties`` / ``patternProperties`` /
``propertyNames`` / ``min|maxProperties`` / ``dependentRequired``, ``items`` / ``prefixItems`` / ``min|maxItems`` /
``uniqueItems`` / ``contains``, ``allOf`` / ``anyOf`` / ``oneOf`` / ``not`` / ``if``-``then``-``else`` and local
``$ref`` (``#/...``). Not modelled: ``format``, ``unevaluated*``, ``$dynamicRef``, remote references. Patterns are
JavaScript regular expressions (``pinb.ai.jsregex``, with the ``u`` flag as pi-schema compiles them): ``^\\d+$``
rejects ``"12\\n"`` and ``"١٢"``, which Python's ``re`` accepts.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from pinb.ai.jsjson import js_number, js_stringify
from pinb.ai.schema_values import (
    all_unique,
    cached_regex,
    coerce_primitive,
    contains_bounds,
    contains_message,
    convert_literal,
    deep_equal,
    is_multiple,
    is_number,
    item_schema_at,
    item_schemas,
    js_same,
    json_pointer,
    list_values,
    matches_type,
    normal_number,
    or_value,
    schema_types,
    try_boolean,
    try_null,
    try_number,
    try_string,
    type_name,
)

_MISSING = object()


class ToolArgumentsError(Exception):
    """Arguments failed validation; the message is the text the model sees."""


# --- the schema -------------------------------------------------------------------------------------------------


class _Schema:
    """One root schema: checks, explains and coerces values against it."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def resolve(self, ref: str) -> Any:
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return False  # remote or anchor references are not modelled: reject values at that place
        node: Any = self.root
        for raw in ref[2:].split("/"):
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return False
        return node

    # check -------------------------------------------------------------------------------------------------------

    def ok(self, node: Any, v: Any) -> bool:
        if node is True:
            return True
        if node is False:
            return False
        if not isinstance(node, dict):
            raise ToolArgumentsError(f"A schema must be an object or a boolean, got {js_stringify(node)}")
        types = schema_types(node)
        if types and not any(matches_type(v, t) for t in types):
            return False
        if isinstance(node.get("enum"), list) and not any(deep_equal(v, e) for e in node["enum"]):
            return False
        if "const" in node and not deep_equal(v, node["const"]):
            return False
        if isinstance(v, str) and not self._string_ok(node, v):
            return False
        if is_number(v) and not self._number_ok(node, v):
            return False
        if isinstance(v, dict) and not self._object_ok(node, v):
            return False
        if isinstance(v, list | tuple) and not self._array_ok(node, v):
            return False
        if isinstance(node.get("allOf"), list) and not all(self.ok(s, v) for s in node["allOf"]):
            return False
        if isinstance(node.get("anyOf"), list) and not any(self.ok(s, v) for s in node["anyOf"]):
            return False
        if isinstance(node.get("oneOf"), list) and sum(1 for s in node["oneOf"] if self.ok(s, v)) != 1:
            return False
        if "not" in node and self.ok(node["not"], v):
            return False
        if "if" in node and ("then" in node or "else" in node):
            branch = node.get("then", True) if self.ok(node["if"], v) else node.get("else", True)
            if not self.ok(branch, v):
                return False
        return not (isinstance(node.get("$ref"), str) and not self.ok(self.resolve(node["$ref"]), v))

    def _string_ok(self, node: dict[str, Any], v: str) -> bool:
        if isinstance(node.get("minLength"), int) and len(v) < node["minLength"]:
            return False
        if isinstance(node.get("maxLength"), int) and len(v) > node["maxLength"]:
            return False
        return not (isinstance(node.get("pattern"), str) and not cached_regex(node["pattern"]).search(v))

    def _number_problems(self, node: dict[str, Any], v: float) -> list[tuple[str, str]]:
        out = []
        bounds = [
            ("minimum", lambda b: v < b, "expected >= {}"),
            ("maximum", lambda b: v > b, "expected <= {}"),
            ("exclusiveMinimum", lambda b: v <= b, "expected > {}"),
            ("exclusiveMaximum", lambda b: v >= b, "expected < {}"),
        ]
        for key, fails, message in bounds:
            bound = node.get(key)
            if is_number(bound) and fails(bound):
                out.append((key, message.format(js_number(bound))))
        divisor = node.get("multipleOf")
        if is_number(divisor) and not is_multiple(v, divisor):
            out.append(("multipleOf", f"expected a multiple of {js_number(divisor)}"))
        return out

    def _number_ok(self, node: dict[str, Any], v: float) -> bool:
        return not self._number_problems(node, v)

    def _object_ok(self, node: dict[str, Any], v: dict[str, Any]) -> bool:
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        for key in node.get("required") or ():
            if isinstance(key, str) and key not in v:
                return False
        for key, sub in properties.items():
            if key in v and not self.ok(sub, v[key]):
                return False
        patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
        additional = node.get("additionalProperties")
        for key, value in v.items():
            matched = key in properties
            for pattern, sub in patterns.items():
                if cached_regex(pattern).search(key):
                    matched = True
                    if not self.ok(sub, value):
                        return False
            if not matched and additional is not None and not self.ok(additional, value):
                return False
            if "propertyNames" in node and not self.ok(node["propertyNames"], key):
                return False
        if isinstance(node.get("minProperties"), int) and len(v) < node["minProperties"]:
            return False
        if isinstance(node.get("maxProperties"), int) and len(v) > node["maxProperties"]:
            return False
        for key, needed in (node.get("dependentRequired") or {}).items():
            if key in v and any(r not in v for r in needed):
                return False
        return True

    def _array_ok(self, node: dict[str, Any], v: list[Any] | tuple[Any, ...]) -> bool:
        prefix, rest = item_schemas(node)
        for i, item in enumerate(v):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is not None and not self.ok(sub, item):
                return False
        if isinstance(node.get("minItems"), int) and len(v) < node["minItems"]:
            return False
        if isinstance(node.get("maxItems"), int) and len(v) > node["maxItems"]:
            return False
        if node.get("uniqueItems") is True and not all_unique(v):
            return False
        if "contains" in node:
            low, high = contains_bounds(node)
            count = sum(1 for item in v if self.ok(node["contains"], item))
            if not low <= count <= high:
                return False
        return True

    # explain -----------------------------------------------------------------------------------------------------

    def walk(self, node: Any, v: Any, path: str, out: list[tuple[str, str]]) -> None:
        if node is True:
            return
        if node is False:
            out.append((path, "no value is allowed here"))
            return
        if not isinstance(node, dict) or self.ok(node, v):
            return
        start = len(out)
        types = schema_types(node)
        if types and not any(matches_type(v, t) for t in types):
            out.append((path, f"expected {' or '.join(str(t) for t in types)}, got {type_name(v)}"))
            return
        if isinstance(node.get("enum"), list) and not any(deep_equal(v, e) for e in node["enum"]):
            out.append((path, f"expected one of {list_values(node['enum'])}"))
        if "const" in node and not deep_equal(v, node["const"]):
            out.append((path, f"expected {js_stringify(node['const'])}"))
        if isinstance(v, str):
            if isinstance(node.get("minLength"), int) and len(v) < node["minLength"]:
                out.append((path, f"expected at least {node['minLength']} characters"))
            if isinstance(node.get("maxLength"), int) and len(v) > node["maxLength"]:
                out.append((path, f"expected at most {node['maxLength']} characters"))
            if isinstance(node.get("pattern"), str) and not cached_regex(node["pattern"]).search(v):
                out.append((path, f"expected to match {node['pattern']}"))
        if is_number(v):
            out.extend((path, message) for _, message in self._number_problems(node, v))
        if isinstance(v, dict):
            self._walk_object(node, v, path, out)
        if isinstance(v, list | tuple):
            self._walk_array(node, v, path, out)
        for sub in node.get("allOf") or ():
            self.walk(sub, v, path, out)
        if isinstance(node.get("anyOf"), list):
            self._walk_union(node["anyOf"], v, path, out, exactly_one=False)
        if isinstance(node.get("oneOf"), list):
            self._walk_union(node["oneOf"], v, path, out, exactly_one=True)
        if "not" in node and self.ok(node["not"], v):
            out.append((path, "must not match the schema in not"))
        if "if" in node:
            branch = node.get("then") if self.ok(node["if"], v) else node.get("else")
            if branch is not None:
                self.walk(branch, v, path, out)
        if isinstance(node.get("$ref"), str):
            target = self.resolve(node["$ref"])
            if target is False and node["$ref"] != "#":
                out.append((path, f"unresolved reference {node['$ref']}"))
            else:
                self.walk(target, v, path, out)
        del start

    def _walk_object(self, node: dict[str, Any], v: dict[str, Any], path: str, out: list[tuple[str, str]]) -> None:
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        for key in node.get("required") or ():
            if isinstance(key, str) and key not in v:
                out.append((json_pointer(path, key), "missing"))
        for key, sub in properties.items():
            if key in v:
                self.walk(sub, v[key], json_pointer(path, key), out)
        patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
        additional = node.get("additionalProperties")
        for key, value in v.items():
            matched = key in properties
            for pattern, sub in patterns.items():
                if cached_regex(pattern).search(key):
                    matched = True
                    self.walk(sub, value, json_pointer(path, key), out)
            if not matched and additional is not None:
                if additional is False:
                    out.append((json_pointer(path, key), "unknown field"))
                else:
                    self.walk(additional, value, json_pointer(path, key), out)
            if "propertyNames" in node and not self.ok(node["propertyNames"], key):
                out.append((json_pointer(path, key), "invalid property name"))
        if isinstance(node.get("minProperties"), int) and len(v) < node["minProperties"]:
            out.append((path, f"expected at least {node['minProperties']} properties"))
        if isinstance(node.get("maxProperties"), int) and len(v) > node["maxProperties"]:
            out.append((path, f"expected at most {node['maxProperties']} properties"))
        for key, needed in (node.get("dependentRequired") or {}).items():
            if key in v:
                out.extend((json_pointer(path, r), f"required when {key} is present") for r in needed if r not in v)

    def _walk_array(self, node: dict[str, Any], v: Any, path: str, out: list[tuple[str, str]]) -> None:
        prefix, rest = item_schemas(node)
        for i, item in enumerate(v):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is not None:
                self.walk(sub, item, f"{path}/{i}", out)
        if isinstance(node.get("minItems"), int) and len(v) < node["minItems"]:
            out.append((path, f"expected at least {node['minItems']} items"))
        if isinstance(node.get("maxItems"), int) and len(v) > node["maxItems"]:
            out.append((path, f"expected at most {node['maxItems']} items"))
        if node.get("uniqueItems") is True and not all_unique(v):
            out.append((path, "expected unique items"))
        if "contains" in node:
            low, high = contains_bounds(node)
            count = sum(1 for item in v if self.ok(node["contains"], item))
            if not low <= count <= high:
                out.append((path, contains_message(low, high)))

    def _walk_union(
        self, branches: list[Any], v: Any, path: str, out: list[tuple[str, str]], exactly_one: bool
    ) -> None:
        matches = sum(1 for s in branches if self.ok(s, v))
        if matches == 1 or (not exactly_one and matches > 0):
            return
        if matches > 1:
            out.append((path, "matches more than one alternative"))
            return
        tag = self._tag_of(branches)
        if tag is not None and isinstance(v, dict):
            key, values = tag
            index = next((i for i, t in enumerate(values) if js_same(t, v.get(key, _MISSING))), -1)
            if index < 0:
                out.append((json_pointer(path, key), f"expected one of {list_values(values)}"))
            else:
                self.walk(branches[index], v, path, out)
            return
        best: tuple[list[tuple[str, str]], int] | None = None
        for s in branches:
            errors: list[tuple[str, str]] = []
            self.walk(s, v, path, errors)
            if not errors:
                continue
            declared = self._declared_keys(s, v) if isinstance(v, dict) else 0
            if best is None or declared > best[1] or (declared == best[1] and len(errors[0][0]) > len(best[0][0][0])):
                best = (errors, declared)
        out.extend(best[0] if best else [(path, "matches no alternative")])

    def _deref(self, s: Any) -> Any:
        return self.resolve(s["$ref"]) if isinstance(s, dict) and isinstance(s.get("$ref"), str) else s

    def _declared_keys(self, s: Any, v: dict[str, Any]) -> int:
        node = self._deref(s)
        properties = (
            node.get("properties") if isinstance(node, dict) and isinstance(node.get("properties"), dict) else {}
        )
        return sum(1 for k in v if k in properties)

    def _tag_of(self, branches: list[Any]) -> tuple[str, list[Any]] | None:
        resolved = [self._deref(s) for s in branches]
        first = resolved[0] if resolved else None
        if not isinstance(first, dict) or not isinstance(first.get("properties"), dict):
            return None
        for key in first["properties"]:
            values = []
            for s in resolved:
                props = s.get("properties") if isinstance(s, dict) and isinstance(s.get("properties"), dict) else {}
                tag = props.get(key)
                values.append(tag.get("const", _MISSING) if isinstance(tag, dict) else _MISSING)
            primitive = all(x is not _MISSING and not isinstance(x, dict | list) for x in values)
            if primitive and len({js_stringify(x) for x in values}) == len(values):
                return key, values
        return None

    # coerce ------------------------------------------------------------------------------------------------------

    def coerce(self, value: Any) -> Any:
        return self.coerce_types(self.convert(self.root, self.drop_optional_nulls(value, self.root), 0), self.root)

    def _passes(self, node: Any, v: Any) -> bool | None:
        try:
            return self.ok(node, v)
        except (ToolArgumentsError, RecursionError):
            return None

    def drop_optional_nulls(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        if isinstance(value, list):
            return [
                item if (sub := item_schema_at(schema, i)) is None else self.drop_optional_nulls(item, sub)
                for i, item in enumerate(value)
            ]
        if not isinstance(value, dict):
            return value
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else None
        patterns = schema.get("patternProperties") if isinstance(schema.get("patternProperties"), dict) else {}
        additional = (
            schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        )
        if not patterns and additional is None and properties is None:
            return value
        properties = properties or {}
        required = set(schema.get("required") or ())
        out = dict(value)
        for key, prop in properties.items():
            if key not in value:
                continue
            is_ref = isinstance(prop, dict) and isinstance(prop.get("$ref"), str)
            if value[key] is None and key not in required and not is_ref and self._passes(prop, None) is False:
                del out[key]
                continue
            out[key] = self.drop_optional_nulls(value[key], prop)
        if patterns or additional is not None:
            for key in value:
                matched = key in properties
                for pattern, sub in patterns.items():
                    if cached_regex(pattern).search(key):
                        matched = True
                        if key in out:
                            out[key] = self.drop_optional_nulls(out[key], sub)
                if not matched and additional is not None:
                    out[key] = self.drop_optional_nulls(value[key], additional)
        return out

    def convert(self, node: Any, value: Any, depth: int) -> Any:
        if not isinstance(node, dict) or depth > 64:
            return value
        if isinstance(node.get("$ref"), str):
            return self.convert(self.resolve(node["$ref"]), value, depth + 1)
        if "const" in node:
            return convert_literal(node["const"], value)
        if isinstance(node.get("enum"), list):
            if any(js_same(member, value) for member in node["enum"]):
                return value
            for member in node["enum"]:
                candidate = convert_literal(member, value)
                if not js_same(candidate, value) and self._passes(node, candidate) is True:
                    return candidate
            return value
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return self._convert_union(node, node[key], value, depth)
        if isinstance(node.get("allOf"), list):
            for member in node["allOf"]:
                value = self.convert(member, value, depth + 1)
            return self._convert_members(node, value, depth)
        match node.get("type"):
            case "string":
                return or_value(try_string(value), value)
            case "number":
                return or_value(try_number(value), value)
            case "integer":
                result = try_number(value)
                return value if result is None else normal_number(math.trunc(result[0]))
            case "boolean":
                return or_value(try_boolean(value), value)
            case "null":
                return or_value(try_null(value), value)
            case "array":
                return self._convert_array(node, value, depth)
            case "object":
                return self._convert_object(node, value, depth)
            case None:
                if "properties" in node or "patternProperties" in node:
                    return self._convert_object(node, value, depth)
                if "items" in node or "prefixItems" in node:
                    return self._convert_array(node, value, depth)
                return value
            case _:
                return value

    def _convert_union(self, node: dict[str, Any], branches: list[Any], value: Any, depth: int) -> Any:
        if any(self._passes(b, value) is True for b in branches):
            return self._convert_members(node, value, depth)
        for branch in branches:
            candidate = self._convert_members(node, self.convert(branch, value, depth + 1), depth)
            if self._passes(node, candidate) is True:
                return candidate
        return self._convert_members(node, value, depth)

    def _convert_members(self, node: dict[str, Any], value: Any, depth: int) -> Any:
        declares = any(k in node for k in ("properties", "patternProperties", "additionalProperties"))
        return self._convert_object(node, value, depth) if declares else value

    def _convert_array(self, node: dict[str, Any], value: Any, depth: int) -> Any:
        prefix = node["items"] if isinstance(node.get("items"), list) else node.get("prefixItems")
        if isinstance(prefix, list):
            if not isinstance(value, list):
                return value
            rest = None if isinstance(node.get("items"), list) else node.get("items")
            return [
                item if (sub := prefix[i] if i < len(prefix) else rest) is None else self.convert(sub, item, depth + 1)
                for i, item in enumerate(value)
            ]
        if isinstance(value, list):
            items = node.get("items")
            return value if items is None else [self.convert(items, item, depth + 1) for item in value]
        items = node.get("items")
        return [self.convert(items, value, depth + 1) if isinstance(items, dict) else value]

    def _convert_object(self, node: dict[str, Any], value: Any, depth: int) -> Any:
        if not isinstance(value, dict):
            return value
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
        additional = node.get("additionalProperties") if isinstance(node.get("additionalProperties"), dict) else None
        out = {}
        for key, item in value.items():
            matched = key in properties
            if matched:
                item = self.convert(properties[key], item, depth + 1)
            for pattern, sub in patterns.items():
                if cached_regex(pattern).search(key):
                    matched = True
                    item = self.convert(sub, item, depth + 1)
            if not matched and additional is not None:
                item = self.convert(additional, item, depth + 1)
            out[key] = item
        return out

    def coerce_types(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        nxt = value
        for member in schema.get("allOf") or ():
            nxt = self.coerce_types(nxt, member)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                nxt = self._coerce_union(nxt, schema[key])
        types = [t for t in schema_types(schema) if isinstance(t, str)]
        union_member = len(types) > 1 and any(matches_type(nxt, t) for t in types)
        if types and not union_member:
            for t in types:
                candidate = coerce_primitive(nxt, t)
                if not js_same(candidate, nxt):
                    nxt = candidate
                    break
        if "object" in types and isinstance(nxt, dict):
            nxt = self._coerce_properties(nxt, schema)
        if "array" in types and isinstance(nxt, list):
            nxt = [
                self.coerce_types(item, sub) if isinstance(sub := item_schema_at(schema, i), dict) else item
                for i, item in enumerate(nxt)
            ]
        return nxt

    def _coerce_union(self, value: Any, branches: list[Any]) -> Any:
        if any(self._passes(b, value) is True for b in branches):
            return value
        for branch in branches:
            coerced = self.coerce_types(value, branch)
            if self._passes(branch, coerced) is True:
                return coerced
        return value

    def _coerce_properties(self, value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        patterns = schema.get("patternProperties") if isinstance(schema.get("patternProperties"), dict) else {}
        additional = (
            schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        )
        out = dict(value)
        for key, prop in properties.items():
            if key in value:
                out[key] = self.coerce_types(value[key], prop)
        for key in value:
            matched = key in properties
            for pattern, sub in patterns.items():
                if cached_regex(pattern).search(key):
                    matched = True
                    out[key] = self.coerce_types(out[key], sub)
            if not matched and additional is not None:
                out[key] = self.coerce_types(value[key], additional)
        return out


def format_validation_path(pointer: str) -> str:
    """A JSON Pointer as the dotted path the model sees: ``/edits/0/oldText`` → ``edits.0.oldText``."""
    if pointer == "":
        return "root"
    return ".".join(s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/"))


# --- the public entry points ------------------------------------------------------------------------------------


def coerce_and_check(schema: Any, value: Any) -> tuple[bool, Any, list[tuple[str, str]]]:
    """``(ok, coerced value, errors)`` with errors as ``(json pointer, message)`` pairs."""
    root = _Schema(schema)
    coerced = root.coerce(value)
    if root.ok(schema, coerced):
        return True, coerced, []
    errors: list[tuple[str, str]] = []
    root.walk(schema, coerced, "", errors)
    return False, coerced, errors or [("", "invalid")]


def validate_tool_arguments(tool: Any, tool_call: Any) -> Any:
    """The tool call's arguments coerced and validated against ``tool.parameters`` (a copy: the call is untouched).

    Raises ``ToolArgumentsError`` with Pi's message when they do not validate.
    """
    if getattr(tool_call, "arguments_error", None):
        raise ToolArgumentsError(f'Invalid arguments for tool "{tool_call.name}": {tool_call.arguments_error}')
    ok, value, errors = coerce_and_check(tool.parameters, copy.deepcopy(tool_call.arguments))
    if ok:
        return value
    lines = "\n".join(f"  - {format_validation_path(path)}: {message}" for path, message in errors)
    received = js_stringify(tool_call.arguments, indent=2)
    raise ToolArgumentsError(
        f'Validation failed for tool "{tool_call.name}":\n{lines}\n\nReceived arguments:\n{received}'
    )
