"""``JSON``: a JSON Schema document (draft-04 to 2020-12), as Confluent's registry takes it.

A schema is valid JSON, an object or a boolean, no deeper than :data:`MAX_DEPTH`, and valid
against the metaschema its ``$schema`` names (draft-07 when it names none, Confluent's
default), checked with the ``jsonschema`` library.

The stored text is the schema as sent, without the whitespace between tokens (Confluent
stores Jackson's compact rendering): member order and numbers are kept exactly, so a 30-digit
``maximum`` stays what it was. Reformatting a schema therefore keeps its id; reordering its
members does not, unless the request asks ``normalize=true`` (members sorted, as Confluent's
normaliser does).

``$ref`` may point into a reference by its name (``"address.json"`` or
``"address.json#/$defs/street"``); compatibility follows such references.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import orjson

from yangkey.registry.errors import invalid_schema
from yangkey.registry.jsoncompat import reads
from yangkey.registry.jsonrefs import Scope
from yangkey.registry.schemabase import Parsed, SchemaType
from yangkey.registry.store import SchemaDef

MAX_DEPTH = 100
"""Deepest nesting of objects and arrays accepted; deeper documents are refused with 42201
(no real schema comes near; the checks are recursive)."""

DEFAULT_DIALECT = "http://json-schema.org/draft-07/schema#"

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[ \t\r\n]+|[^ \t\r\n"]+', re.DOTALL)


def compact(text: str) -> str:
    """``text`` (valid JSON) without whitespace between tokens; everything else untouched."""
    return "".join(t for t in _TOKEN.findall(text) if t[0] not in " \t\r\n")


def _sorted_json(node: Any) -> str:
    if isinstance(node, dict):
        members = sorted(node.items())
        return "{" + ",".join(f"{_sorted_json(k)}:{_sorted_json(v)}" for k, v in members) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_sorted_json(v) for v in node) + "]"
    if isinstance(node, Decimal):
        return str(node)
    return json.dumps(node, ensure_ascii=False)


def normalized(text: str) -> str:
    """Members sorted at every level, numbers as written (``normalize=true``)."""
    return _sorted_json(json.loads(text, parse_float=Decimal))


def depth(document: Any) -> int:
    deepest, pending = 0, [(document, 1)]
    while pending:
        node, level = pending.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            children = node.values() if isinstance(node, dict) else node
            pending.extend((child, level + 1) for child in children)
    return deepest


# ------------------------------------------------------------------ metaschemas


def _flat_metaschema(uri: str) -> dict[str, Any]:
    """The 2019-09/2020-12 metaschema as one document: its vocabularies' keywords merged, each
    ``$dynamicRef``/``$recursiveRef`` to the metaschema a plain ``$ref`` to the root.

    The same constraints as the official composition, without the dynamic-scope resolution
    that makes ``jsonschema`` ten times slower on it.
    """
    from jsonschema_specifications import REGISTRY  # noqa: PLC0415

    top = REGISTRY.contents(uri)
    base = uri.rsplit("/", 1)[0]
    flat: dict[str, Any] = {"type": ["object", "boolean"], "properties": {}, "$defs": {}}
    for part in [top, *(REGISTRY.contents(f"{base}/{e['$ref']}") for e in top["allOf"])]:
        flat["properties"].update(_fixed_map(part.get("properties", {})))
        flat["$defs"].update(_fixed_map(part.get("$defs", {})))
    return flat


_NAMES = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def _fixed(node: Any) -> Any:
    if isinstance(node, list):
        return [_fixed(n) for n in node]
    if not isinstance(node, dict):
        return node
    fixed: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$dynamicRef", "$recursiveRef"):
            fixed["$ref"] = "#"
        elif key in ("$dynamicAnchor", "$recursiveAnchor", "$id", "$schema", "$vocabulary"):
            continue
        elif key in _NAMES and isinstance(value, dict):
            fixed[key] = _fixed_map(value)
        else:
            fixed[key] = _fixed(value)
    return fixed


def _fixed_map(names: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _fixed(schema) for name, schema in names.items()}


@functools.cache
def _metavalidator(dialect: str) -> Any:
    import jsonschema  # noqa: PLC0415
    from jsonschema.validators import validator_for  # noqa: PLC0415

    cls = validator_for({"$schema": dialect}, default=jsonschema.Draft7Validator)
    if cls in (jsonschema.Draft201909Validator, jsonschema.Draft202012Validator):
        return jsonschema.Draft202012Validator(_flat_metaschema(cls.META_SCHEMA["$id"]))
    return cls(cls.META_SCHEMA)


def metaschema_errors(document: Any) -> Iterator[str]:
    """Why ``document`` is not a schema of its dialect (nothing when it is)."""
    dialect = document.get("$schema") if isinstance(document, dict) else None
    validator = _metavalidator(dialect if isinstance(dialect, str) else DEFAULT_DIALECT)
    if validator.is_valid(document):
        return
    import jsonschema.exceptions  # noqa: PLC0415

    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        yield f"{'#/' + where if where else '#'}: {error.message}"


# ------------------------------------------------------------------ the type


class JsonType(SchemaType):
    name = "JSON"

    def parse(self, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool) -> Parsed:
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise invalid_schema(f"not JSON: {exc}") from None
        if not isinstance(document, dict | bool):
            raise invalid_schema("a JSON Schema is an object or a boolean")
        if depth(document) > MAX_DEPTH:
            raise invalid_schema(f"the schema nests deeper than {MAX_DEPTH} levels")
        for reason in metaschema_errors(document):
            raise invalid_schema(f"not a valid JSON Schema: {reason}")
        exact = json.loads(text)  # orjson reads integers past 64 bits as floats
        docs = {name: dep.native.root for name, dep in _documents(dependencies).items()}
        scope = Scope(exact, docs)
        for ref in scope.unresolved():
            raise invalid_schema(f"$ref {ref!r} matches no reference and no local definition")
        body = normalized(text) if normalize else compact(text)
        return Parsed(SchemaDef(self.name, body), scope)

    def reads(self, reader: Parsed, writer: Parsed) -> list[str]:
        return reads(reader.native, writer.native)

    def legacy_forms(self, text: str) -> list[str]:
        # Before schemas were stored as sent, this registry stored keys sorted, no whitespace.
        try:
            return [orjson.dumps(orjson.loads(text), option=orjson.OPT_SORT_KEYS).decode()]
        except (orjson.JSONDecodeError, TypeError):
            return []

    def raw(self, text: str) -> Any:
        return orjson.loads(text)


def _documents(dependencies: Mapping[str, Parsed]) -> dict[str, Parsed]:
    found: dict[str, Parsed] = {}
    pending = list(dependencies.items())
    while pending:
        name, parsed = pending.pop()
        if parsed.definition.schema_type != "JSON":
            raise invalid_schema(f"reference {name!r} is a {parsed.definition.schema_type} schema")
        if name not in found:
            found[name] = parsed
            pending.extend(parsed.dependencies.items())
    return found
