"""The registry's schema types behind one interface: parse, references, compatibility, formats.

Four types: ``AVRO`` (Confluent's default when a request names no ``schemaType``), ``PROTOBUF``,
``JSON`` (JSON Schema) and ``YANG`` (a module's text, this project's fourth type). Each is a
:class:`~yangkey.registry.schemabase.SchemaType` in its own module; the registry calls only the
functions here:

* :func:`parse` validates a request's ``schemaType``/``schema``/``references`` and returns a
  :class:`Parsed`: the definition to store (its text is the type's canonical form, so equal
  text means the same schema and the same id, as in Confluent's registry) and the type's parsed
  form. ``normalize`` asks for the normalised form (``?normalize=true``).
* :func:`parse_definition` parses a stored definition (cached: compatibility checks re-read the
  earlier versions of a subject on every registration).
* :func:`incompatibilities` applies a compatibility level: ``BACKWARD`` means the new schema
  reads data written with the old one, ``FORWARD`` the reverse, ``FULL`` both, ``*_TRANSITIVE``
  against every live version rather than the latest.
* :func:`formatted` answers ``?format=`` (``serialized`` for Protobuf: a base64
  ``FileDescriptorProto``, as ``confluent_kafka``'s Protobuf serdes ask for) and :func:`raw` the
  bare ``/schema`` endpoints.

References (``[{name, subject, version}]``) are resolved transitively through ``lookup`` before
a type sees the text: every type gets its dependencies already parsed, by reference name.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from yangkey.registry.avrotype import AvroType
from yangkey.registry.errors import RegistryError, invalid_schema
from yangkey.registry.jsontype import JsonType
from yangkey.registry.protobuftype import ProtobufType
from yangkey.registry.schemabase import Lookup, Parsed, SchemaType
from yangkey.registry.store import Reference, SchemaDef
from yangkey.registry.yangtype import YangType

MAX_REFERENCE_DEPTH = 32
MAX_CACHED_TEXT = 256 * 1024


_TYPES: dict[str, SchemaType] = {
    t.name: t for t in (JsonType(), ProtobufType(), AvroType(), YangType())
}
SCHEMA_TYPES = tuple(_TYPES)
"""``GET /schemas/types``: Confluent's three, then ours."""


def schema_type(name: str) -> SchemaType:
    """The type called ``name`` (a 42201 error naming the supported ones otherwise)."""
    found = _TYPES.get(name)
    if found is None:
        raise invalid_schema(
            f"schema type {name} is not supported here (supported: {', '.join(SCHEMA_TYPES)})"
        )
    return found


def type_name(raw: object) -> str:
    """The request's ``schemaType``: AVRO when absent, as Confluent's registry has it."""
    if raw is None:
        return "AVRO"
    if not isinstance(raw, str):
        raise invalid_schema(f"schemaType must be a string, not {type(raw).__name__}")
    return raw.upper()


def references(raw: object) -> tuple[Reference, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise invalid_schema("'references' must be a list")
    refs: list[Reference] = []
    for item in raw:
        if not isinstance(item, dict):
            raise invalid_schema("a reference is an object with name, subject and version")
        name, subject, version = item.get("name"), item.get("subject"), item.get("version")
        if not (isinstance(name, str) and isinstance(subject, str) and isinstance(version, int)):
            raise invalid_schema("a reference needs a string name and subject and an int version")
        if isinstance(version, bool):
            raise invalid_schema("a reference's version is an integer")
        refs.append(Reference(name, subject, version))
    if len({r.name for r in refs}) != len(refs):
        raise invalid_schema("two references have the same name")
    return tuple(refs)


# ------------------------------------------------------------------ parsing, with a cache


class _ParsedCache:
    """Recently parsed schemas, by stored definition (registrations compare against earlier
    versions) and by request (clients re-register the same schema at every start)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Parsed] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Parsed | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, parsed: Parsed) -> None:
        with self._lock:
            self._items[key] = parsed
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_CACHE = _ParsedCache()


def _dependencies(refs: Iterable[Reference], lookup: Lookup, depth: int) -> dict[str, Parsed]:
    if depth > MAX_REFERENCE_DEPTH:
        raise invalid_schema(f"references nest deeper than {MAX_REFERENCE_DEPTH} levels")
    found: dict[str, Parsed] = {}
    for ref in refs:
        target = lookup(ref)
        if target is None:
            raise invalid_schema(
                f"reference {ref.name!r} names {ref.subject} version {ref.version}, "
                "which is not registered"
            )
        found[ref.name] = _parse_definition(target, lookup, depth + 1)
    return found


def _parse_definition(definition: SchemaDef, lookup: Lookup, depth: int) -> Parsed:
    cached = _CACHE.get(definition)
    if cached is not None:
        return cached
    kind = schema_type(definition.schema_type)
    dependencies = _dependencies(definition.references, lookup, depth)
    parsed = _guarded(kind, definition.schema, dependencies, normalize=False)
    # The stored text is canonical already; keep the definition as stored.
    parsed = Parsed(definition, parsed.native, dependencies)
    _CACHE.put(definition, parsed)
    return parsed


def _guarded(
    kind: SchemaType, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool
) -> Parsed:
    """``kind.parse``, with whatever a third-party parser raises turned into a 42201."""
    try:
        return kind.parse(text, dependencies, normalize=normalize)
    except RegistryError:
        raise
    except RecursionError:
        raise invalid_schema(f"{kind.name} schema nests too deeply") from None
    # A parser's own lookups on a document missing a field or holding the wrong kind of
    # value: its bare message ("'values'") would not say which.
    except KeyError as exc:
        raise invalid_schema(f"{kind.name}: a required field is missing: {exc}") from None
    except (TypeError, AttributeError) as exc:
        reason = f"{kind.name}: a field holds the wrong kind of value ({exc})"
        raise invalid_schema(reason) from None
    except Exception as exc:  # parsers raise anything on hostile input; never a 500
        raise invalid_schema(f"{kind.name}: {exc}") from None


def parse(
    raw_type: object, text: object, raw_references: object, *, lookup: Lookup, normalize: bool
) -> Parsed:
    """Validate a request's schema and return what to store (see the module docstring)."""
    kind = schema_type(type_name(raw_type))
    if not isinstance(text, str) or not text.strip():
        raise invalid_schema("the request has no 'schema' string")
    refs = references(raw_references)
    if normalize:
        refs = tuple(sorted(set(refs), key=lambda r: (r.name, r.subject, r.version)))
    # A reference names an immutable subject version, so the same request parses the same way
    # for as long as its references resolve to the same definitions.
    targets = tuple(lookup(ref) for ref in refs)
    key = ("request", kind.name, text, refs, targets, normalize)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    dependencies = _dependencies(refs, lookup, 0)
    parsed = _guarded(kind, text, dependencies, normalize=normalize)
    definition = SchemaDef(kind.name, parsed.definition.schema, refs)
    aliases = tuple(
        SchemaDef(kind.name, legacy, refs)
        for legacy in kind.legacy_forms(text)
        if legacy != definition.schema
    )
    result = Parsed(definition, parsed.native, dependencies, aliases)
    if len(text) <= MAX_CACHED_TEXT:
        _CACHE.put(key, result)
    return result


def parse_definition(definition: SchemaDef, lookup: Lookup) -> Parsed:
    """A stored definition, parsed (and cached)."""
    return _parse_definition(definition, lookup, 0)


# ------------------------------------------------------------------ compatibility


def _directed(messages: list[str], reader: str, writer: str) -> list[str]:
    return [m.replace("{reader}", reader).replace("{writer}", writer) for m in messages]


def incompatibilities(
    level: str, new: Parsed, previous: Sequence[SchemaDef], lookup: Lookup
) -> list[str]:
    """Why ``new`` breaks ``level`` against ``previous`` (oldest first); empty: compatible."""
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    problems: list[str] = []
    kind = schema_type(new.definition.schema_type)
    for definition in against:
        if definition.schema_type != new.definition.schema_type:
            problems.append(
                f"schema type changed from {definition.schema_type} to {new.definition.schema_type}"
            )
            continue
        old = parse_definition(definition, lookup)
        problems.extend(kind.evolves(old, new))
        try:
            if level.startswith(("BACKWARD", "FULL")):
                problems.extend(_directed(kind.reads(new, old), "new", "old"))
            if level.startswith(("FORWARD", "FULL")):
                problems.extend(_directed(kind.reads(old, new), "old", "new"))
        except RecursionError:
            problems.append("the schemas nest too deeply to compare")
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ formats


def formatted(definition: SchemaDef, fmt: str | None, lookup: Lookup) -> str:
    """The text of ``definition`` in format ``fmt`` (None or empty: as stored)."""
    if not fmt:
        return definition.schema
    kind = schema_type(definition.schema_type)
    return kind.formatted(parse_definition(definition, lookup), fmt)


def raw(definition: SchemaDef) -> Any:
    """The bare schema (``GET .../schema``): a JSON document for JSON and Avro, else text."""
    return schema_type(definition.schema_type).raw(definition.schema)
