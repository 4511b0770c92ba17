"""``AVRO``: an Avro schema (Avro 1.11 specification), Confluent's default type.

Parsing and validation (names, defaults against their types, duplicate symbols) use both
``fastavro`` (defaults) and the Apache ``avro`` package (names; its parsed form feeds
``avro.compatibility``, Avro's own reader/writer check, as Confluent's registry uses the Java
one). Named types of referenced schemas (``references``, transitively) are known by their full
names, so ``{"type": "com.acme.Address"}`` may name a type another subject registered.

The stored text is the schema as Avro's Java library renders it, which Confluent's registry
stores: compact JSON, attributes in a fixed order (``type``, ``name``, ``namespace`` when it
differs from the enclosing one, ``doc``, ``fields``/``symbols``/``size``/``items``/``values``,
then other properties as written, then ``aliases``), a primitive without properties as its
name, a named type defined once and referred to by name afterwards. So the same schema written
with its attributes in another order gets the same id. ``normalize=true`` also writes every name
in full, without ``namespace``.

``?format=resolved`` answers the schema with its referenced types defined inline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from yangkey.registry.errors import invalid_schema
from yangkey.registry.schemabase import Parsed, SchemaType
from yangkey.registry.store import SchemaDef

PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
NAMED = ("record", "error", "enum", "fixed")
_KNOWN = {
    "record": ("type", "name", "namespace", "doc", "fields", "aliases"),
    "enum": ("type", "name", "namespace", "doc", "symbols", "aliases", "default"),
    "fixed": ("type", "name", "namespace", "doc", "size", "aliases"),
    "array": ("type", "items"),
    "map": ("type", "values"),
    "field": ("name", "type", "doc", "default", "order", "aliases"),
}
MAX_DEPTH = 100


@dataclass(frozen=True)
class AvroSchema:
    document: Any
    """The schema's JSON, as sent."""
    schema: Any
    """The Apache ``avro`` package's parsed schema (compatibility)."""
    names: dict[str, tuple[Any, str | None]]
    """Every named type the schema defines: full name -> (definition, its namespace)."""


def _full_name(node: dict[str, Any], space: str | None) -> tuple[str, str | None]:
    name = str(node.get("name", ""))
    if "." in name:
        space = name.rpartition(".")[0]
        return name, space or None
    declared = node.get("namespace")
    if isinstance(declared, str):
        space = declared or None
    return (f"{space}.{name}" if space else name), space


def _qualified(full: str, space: str | None) -> str:
    own, _, short = full.rpartition(".")
    return short if (own or None) == space else full


class _Renderer:
    """Avro's Java ``Schema.toString()`` layout, from the JSON document."""

    def __init__(
        self,
        defined: Mapping[str, tuple[Any, str | None]],
        *,
        inline: bool,
        normalize: bool,
    ) -> None:
        self.defined = defined  # named types of references: full name -> (node, namespace)
        self.inline = inline  # define referenced types at first use (format=resolved)
        self.normalize = normalize
        self.written: set[str] = set()
        self.names: dict[str, tuple[Any, str | None]] = {}

    def resolve(self, name: str, space: str | None) -> str:
        if "." not in name and space and f"{space}.{name}" in self.known():
            return f"{space}.{name}"
        return name

    def known(self) -> set[str]:
        return set(self.defined) | set(self.names)

    def render(self, node: Any, space: str | None) -> Any:
        if isinstance(node, list):
            return [self.render(branch, space) for branch in node]
        if isinstance(node, str):
            return self.reference(node, space)
        if not isinstance(node, dict):
            raise invalid_schema(f"an Avro schema is a name, an object or a union, not {node!r}")
        kind = node.get("type")
        if isinstance(kind, str) and kind in NAMED:
            return self.named(node, "record" if kind == "error" else kind, space)
        if kind in ("array", "map"):
            key = "items" if kind == "array" else "values"
            out = {"type": kind, key: self.render(node.get(key), space)}
            return self.props(out, node, _KNOWN[kind])
        if isinstance(kind, str) and kind in PRIMITIVES:
            extra = {k: v for k, v in node.items() if k != "type"}
            return self.props({"type": kind}, node, ("type",)) if extra else kind
        if isinstance(kind, str | dict | list):
            return self.render(kind, space)  # {"type": "com.acme.Named"} and the like
        raise invalid_schema(f"an Avro schema object needs a type: {node!r}")

    def reference(self, name: str, space: str | None) -> Any:
        if name in PRIMITIVES:
            return name
        full = self.resolve(name, space)
        if self.inline and full in self.defined and full not in self.written:
            node, own = self.defined[full]
            return self.render(node, own)
        return full if self.normalize else _qualified(full, space)

    def named(self, node: dict[str, Any], kind: str, space: str | None) -> Any:
        full, own = _full_name(node, space)
        self.written.add(full)
        self.names[full] = (node, space)
        out: dict[str, Any] = {"type": node.get("type")}
        if self.normalize:
            out["name"] = full
        else:
            out["name"] = full.rpartition(".")[2]
            if own != space:
                out["namespace"] = own or ""
        if "doc" in node:
            out["doc"] = node["doc"]
        if kind == "record":
            out["fields"] = [self.field(f, own) for f in node.get("fields") or ()]
        elif kind == "enum":
            out["symbols"] = node.get("symbols")
            if "default" in node:
                out["default"] = node["default"]
        else:
            out["size"] = node.get("size")
        self.props(out, node, _KNOWN[kind])
        if "aliases" in node:
            out["aliases"] = node["aliases"]
        return out

    def field(self, node: Any, space: str | None) -> Any:
        if not isinstance(node, dict):
            raise invalid_schema(f"a record field is an object, not {node!r}")
        out: dict[str, Any] = {
            "name": node.get("name"),
            "type": self.render(node.get("type"), space),
        }
        for key in ("doc", "default"):
            if key in node:
                out[key] = node[key]
        if node.get("order", "ascending") != "ascending":
            out["order"] = node["order"]
        self.props(out, node, _KNOWN["field"])
        if "aliases" in node:
            out["aliases"] = node["aliases"]
        return out

    @staticmethod
    def props(out: dict[str, Any], node: dict[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
        out.update((k, v) for k, v in node.items() if k not in known)
        return out


def _dump(node: Any) -> str:
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"))


def _depth(node: Any, level: int = 1) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(node, dict):
        return max((_depth(v, level + 1) for v in node.values()), default=level)
    if isinstance(node, list):
        return max((_depth(v, level + 1) for v in node), default=level)
    return level


def _closure(dependencies: Mapping[str, Parsed]) -> list[AvroSchema]:
    """Referenced schemas, each after the ones it references."""
    ordered: list[AvroSchema] = []
    seen: set[int] = set()

    def visit(name: str, parsed: Parsed) -> None:
        if id(parsed) in seen:
            return
        seen.add(id(parsed))
        if parsed.definition.schema_type != "AVRO":
            raise invalid_schema(f"reference {name!r} is a {parsed.definition.schema_type} schema")
        for sub_name, sub in parsed.dependencies.items():
            visit(sub_name, sub)
        ordered.append(parsed.native)

    for name, parsed in dependencies.items():
        visit(name, parsed)
    return ordered


class AvroType(SchemaType):
    name = "AVRO"

    def parse(self, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool) -> Parsed:
        import avro.errors  # noqa: PLC0415
        import avro.name  # noqa: PLC0415
        import avro.schema  # noqa: PLC0415
        import fastavro  # noqa: PLC0415

        try:
            document = json.loads(text)
        except ValueError:
            # Confluent takes a bare primitive name unquoted too ("string").
            if text.strip() not in PRIMITIVES:
                raise invalid_schema("an Avro schema is JSON") from None
            document = text.strip()
        if _depth(document) > MAX_DEPTH:
            raise invalid_schema(f"the schema nests deeper than {MAX_DEPTH} levels")
        referenced = _closure(dependencies)
        fast_names: dict[str, Any] = {}
        names = avro.name.Names()
        defined: dict[str, tuple[Any, str | None]] = {}
        for dependency in referenced:
            fastavro.parse_schema(dependency.document, named_schemas=fast_names)
            avro.schema.make_avsc_object(dependency.document, names)
            defined.update(dependency.names)
        try:
            fastavro.parse_schema(document, named_schemas=fast_names)
            parsed = avro.schema.make_avsc_object(document, names)
        except (avro.errors.AvroException, fastavro.schema.SchemaParseException) as exc:
            raise invalid_schema(f"Avro: {exc}") from None
        except fastavro.schema.UnknownType as exc:
            raise invalid_schema(f"Avro: unknown type {exc.name!r}") from None
        renderer = _Renderer(defined, inline=False, normalize=normalize)
        body = _dump(renderer.render(document, None))
        native = AvroSchema(document, parsed, renderer.names)
        return Parsed(SchemaDef(self.name, body), native)

    def reads(self, reader: Parsed, writer: Parsed) -> list[str]:
        from avro.compatibility import (  # noqa: PLC0415
            ReaderWriterCompatibilityChecker,
            SchemaCompatibilityType,
        )

        checker = ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]
        result = checker.get_compatibility(reader=reader.native.schema, writer=writer.native.schema)
        if result.compatibility is not SchemaCompatibilityType.incompatible:
            return []
        kinds = ", ".join(sorted({i.name.upper() for i in result.incompatibilities}))
        where = ", ".join(sorted(result.locations))
        return [
            f"{{errorType:'{kinds}', description:'the {{reader}} schema cannot read data "
            f"written with the {{writer}} one: {message}', location:'{where}'}}"
            for message in sorted(str(m) for m in result.messages)
        ]

    def raw(self, text: str) -> Any:
        return orjson.loads(text)

    def formatted(self, parsed: Parsed, fmt: str) -> str:
        if fmt != "resolved":
            return parsed.definition.schema
        defined: dict[str, tuple[Any, str | None]] = {}
        for dependency in _closure(parsed.dependencies):
            defined.update(dependency.names)
        renderer = _Renderer(defined, inline=True, normalize=False)
        return _dump(renderer.render(parsed.native.document, None))
