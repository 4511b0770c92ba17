"""JSON Schema keywords as the compatibility check reads them: true and false schemas, the
types a schema allows, numeric bounds (draft-04's boolean ``exclusiveMinimum`` too), counts,
patterns, and what two schemas both holding allow."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

ALL_TYPES = frozenset(("null", "boolean", "object", "array", "number", "integer", "string"))
ANNOTATIONS = frozenset(
    (
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "readOnly",
        "writeOnly",
        "deprecated",
        "format",
        "contentEncoding",
        "contentMediaType",
        "$vocabulary",
        "$dynamicAnchor",
        "$recursiveAnchor",
    )
)
OPAQUE = ("if", "then", "else", "contains", "dependentSchemas", "unevaluatedItems")


def is_true(schema: Any) -> bool:
    return schema is True or (isinstance(schema, dict) and not (set(schema) - ANNOTATIONS))


def is_false(schema: Any) -> bool:
    if schema is False:
        return True
    if isinstance(schema, dict):
        if "not" in schema and is_true(schema["not"]):
            return True
        types = schema.get("type")
        if isinstance(types, list) and not types:
            return True
        if isinstance(schema.get("enum"), list) and not schema["enum"]:
            return True
    return False


def allowed_types(schema: dict[str, Any]) -> frozenset[str] | None:
    """The types the schema's ``type`` allows (None: any)."""
    raw = schema.get("type")
    if raw is None:
        return None
    found = frozenset([raw] if isinstance(raw, str) else raw)
    return found | {"integer"} if "number" in found else found


def number(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(value)


Bound = tuple[Fraction, bool]  # value, exclusive


def bound(schema: dict[str, Any], inclusive: str, exclusive: str, *, low: bool) -> Bound | None:
    candidates: list[Bound] = []
    plain = number(schema.get(inclusive))
    strict = schema.get(exclusive)
    if plain is not None:
        candidates.append((plain, strict is True))  # draft-04: exclusiveMinimum is a flag
    if (value := number(strict)) is not None:
        candidates.append((value, True))
    if not candidates:
        return None
    # The tighter bound wins; at equal values the exclusive one is tighter.
    if low:
        return max(candidates, key=lambda b: (b[0], b[1]))
    return min(candidates, key=lambda b: (b[0], not b[1]))


def integral(limit: Bound | None, *, low: bool) -> Bound | None:
    """The same bound for integers only, made inclusive."""
    if limit is None or not limit[1]:
        return limit
    value = limit[0]
    edge = math.floor(value) + 1 if low else math.ceil(value) - 1
    return (Fraction(edge), False)


def within(writer: Bound | None, reader: Bound, *, low: bool) -> bool:
    if writer is None:
        return False
    (wv, wx), (rv, rx) = writer, reader
    if wv != rv:
        return wv > rv if low else wv < rv
    return wx or not rx


def count(schema: dict[str, Any], name: str) -> int | None:
    value = schema.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pattern_matches(pattern: str, name: str) -> bool | None:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return None


def universal(pattern: str) -> bool:
    """Whether ``pattern`` matches every string: unanchored and matching the empty one."""
    if re.search(r"[$^]|\\[AZbBz]|\(\?[=!<]", pattern):
        return False
    return pattern_matches(pattern, "") is True


def without(schema: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in keys}


def merged(base: dict[str, Any], extra: Any) -> Any:
    """``base`` and ``extra`` both hold (writer side): a schema at least as wide as the two."""
    if not isinstance(extra, dict):
        return extra if extra is False or is_true(base) else base
    if is_true(base):
        return extra
    combined = dict(base)
    for key, value in extra.items():
        if key not in combined:
            combined[key] = value
        elif key == "required" and isinstance(value, list):
            combined[key] = list(dict.fromkeys([*combined[key], *value]))
        elif key == "properties" and isinstance(value, dict):
            combined[key] = {**combined[key], **value}
        elif key == "type":
            left = allowed_types({"type": combined[key]}) or ALL_TYPES
            right = allowed_types({"type": value}) or ALL_TYPES
            combined[key] = sorted(left & right)
        else:
            combined[key] = value
    return combined
