"""The registry's schema types: parsing, canonical form, references and compatibility.

``JSON``: a JSON Schema document (object or boolean); stored in a canonical form (sorted
keys, no whitespace) so that the same schema written differently gets the same id.

``YANG``: the text of one YANG module or submodule. Every ``import``/``include`` must be
matched by a reference named after the imported module, pointing at a registered ``YANG``
schema of that module, so a consumer can rebuild the whole schema from the registry.

Compatibility (Confluent levels): for ``JSON``, a structural check of what a reader schema
accepts from a writer schema (types, enums, numeric bounds, closed objects, required members,
array items, ``anyOf``); ``BACKWARD`` means the new schema reads data written with the old
one, ``FORWARD`` the reverse, ``FULL`` both, ``*_TRANSITIVE`` against every live version rather
than the latest. For ``YANG``, a subject stays one module: a new version must keep the module
name and may not go back in revision date (RFC 7950 section 11 update rules are not checked).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
from yangson.exceptions import EndOfInput, UnexpectedInput, YangsonException
from yangson.statement import ModuleParser, Statement

from yangkey.registry.errors import invalid_schema
from yangkey.registry.store import Reference, SchemaDef

SCHEMA_TYPES = ("JSON", "YANG")


def parse_json_schema(text: str) -> Any:
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise invalid_schema(f"not JSON: {exc}") from None
    if not isinstance(document, dict | bool):
        raise invalid_schema("a JSON Schema is an object or a boolean")
    return document


def parse_yang_module(text: str) -> Statement:
    """The module's statement tree; yangson's parser checks the syntax."""
    parser = ModuleParser(text)
    try:
        parser.opt_separator()
        statement = parser.statement()
        if statement.keyword not in ("module", "submodule"):
            raise invalid_schema(f"expected a YANG module, found {statement.keyword!r}")
        try:
            parser.opt_separator()
        except EndOfInput:
            return statement
        raise UnexpectedInput(parser, "end of input")
    except YangsonException as exc:
        raise invalid_schema(f"YANG: {exc}") from None


def yang_dependencies(statement: Statement) -> list[str]:
    return [s.argument for kw in ("import", "include") for s in statement.find_all(kw)]


def yang_revision(statement: Statement) -> str:
    # RFC 7950 7.1.9: the newest revision comes first, but not every author obeys.
    return max((str(s.argument) for s in statement.find_all("revision")), default="")


def canonical(
    schema_type: str | None,
    text: object,
    references: object,
    *,
    resolve: Callable[[Reference], SchemaDef | None],
) -> SchemaDef:
    """Validate a request's schema and return its canonical definition.

    ``resolve`` finds the definition a reference points at (None: not registered).
    """
    kind = (schema_type or "AVRO").upper()
    if kind not in SCHEMA_TYPES:
        raise invalid_schema(
            f"schema type {kind} is not supported here (supported: {', '.join(SCHEMA_TYPES)})"
        )
    if not isinstance(text, str):
        raise invalid_schema("the request has no 'schema' string")
    refs = _references(references)
    targets: dict[str, SchemaDef] = {}
    for ref in refs:
        target = resolve(ref)
        if target is None:
            raise invalid_schema(
                f"reference {ref.name!r} names {ref.subject} version {ref.version}, "
                "which is not registered"
            )
        targets[ref.name] = target
    if kind == "JSON":
        body = orjson.dumps(parse_json_schema(text), option=orjson.OPT_SORT_KEYS).decode()
        return SchemaDef(kind, body, refs)
    statement = parse_yang_module(text)
    for dependency in yang_dependencies(statement):
        target = targets.get(dependency)
        if target is None:
            raise invalid_schema(
                f"YANG module {statement.argument} imports {dependency} but the request has no "
                f"reference named {dependency!r}"
            )
        if target.schema_type != "YANG" or yang_module_name(target.schema) != dependency:
            raise invalid_schema(f"reference {dependency!r} is not the YANG module {dependency}")
    return SchemaDef(kind, text.strip() + "\n", refs)


def yang_module_name(text: str) -> str:
    return str(parse_yang_module(text).argument)


def _references(raw: object) -> tuple[Reference, ...]:
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
        refs.append(Reference(name, subject, version))
    return tuple(refs)


# ------------------------------------------------------------------ compatibility


def incompatibilities(level: str, new: SchemaDef, previous: Sequence[SchemaDef]) -> list[str]:
    """Why ``new`` breaks ``level`` against ``previous`` (oldest first); empty: compatible."""
    if level == "NONE" or not previous:
        return []
    against: Iterable[SchemaDef] = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    problems: list[str] = []
    for old in against:
        if old.schema_type != new.schema_type:
            problems.append(f"schema type changed from {old.schema_type} to {new.schema_type}")
            continue
        if new.schema_type == "YANG":
            problems.extend(_yang_problems(old, new))
            continue
        old_doc, new_doc = orjson.loads(old.schema), orjson.loads(new.schema)
        if level.startswith(("BACKWARD", "FULL")):
            problems.extend(reads(new_doc, old_doc, "#"))
        if level.startswith(("FORWARD", "FULL")):
            problems.extend(f"(forward) {p}" for p in reads(old_doc, new_doc, "#"))
    return list(dict.fromkeys(problems))


def _yang_problems(old: SchemaDef, new: SchemaDef) -> list[str]:
    before, after = parse_yang_module(old.schema), parse_yang_module(new.schema)
    if before.argument != after.argument:
        return [f"module changed from {before.argument} to {after.argument}"]
    if yang_revision(after) < yang_revision(before):
        return [f"revision {yang_revision(after)} is older than {yang_revision(before)}"]
    return []


def reads(reader: Any, writer: Any, path: str) -> list[str]:
    """What data valid under ``writer`` that ``reader`` would reject (JSON Schema subset)."""
    if reader is True or reader == {} or writer is False:
        return []
    if reader is False:
        return [f"{path}: the reader accepts nothing"]
    if writer is True:
        writer = {}
    if "anyOf" in writer:
        return [p for branch in writer["anyOf"] for p in reads(reader, branch, path)]
    if "anyOf" in reader:
        options = [reads(branch, writer, path) for branch in reader["anyOf"]]
        return [] if any(not o for o in options) else [f"{path}: no anyOf branch reads the old"]
    problems: list[str] = []
    reader_type, writer_type = reader.get("type"), writer.get("type")
    if reader_type is not None:
        widened = reader_type == "number" and writer_type == "integer"
        if writer_type is None:
            problems.append(f"{path}: type narrowed to {reader_type}")
        elif writer_type != reader_type and not widened:
            return [f"{path}: type changed from {writer_type} to {reader_type}"]
    if "enum" in reader:
        missing = [v for v in writer.get("enum", [None]) if v not in reader["enum"]]
        if "enum" not in writer or missing:
            problems.append(f"{path}: enum no longer accepts {missing or 'every value'}")
    for bound, tighter in (
        ("minimum", operator.gt),
        ("maximum", operator.lt),
        ("minLength", operator.gt),
        ("maxLength", operator.lt),
        ("minItems", operator.gt),
        ("maxItems", operator.lt),
    ):
        if bound in reader and (bound not in writer or tighter(reader[bound], writer[bound])):
            problems.append(f"{path}: {bound} tightened to {reader[bound]}")
    if "pattern" in reader and reader["pattern"] != writer.get("pattern"):
        problems.append(f"{path}: pattern changed to {reader['pattern']!r}")
    reader_props = reader.get("properties", {})
    writer_props = writer.get("properties", {})
    closed = reader.get("additionalProperties") is False
    for name, schema in writer_props.items():
        if name in reader_props:
            problems.extend(reads(reader_props[name], schema, f"{path}/{name}"))
        elif closed:
            problems.append(f"{path}: member {name!r} removed")
    if closed and writer_type == "object" and writer.get("additionalProperties") is not False:
        problems.append(f"{path}: closed to members the old schema allowed")
    newly_required = set(reader.get("required", ())) - set(writer.get("required", ()))
    problems.extend(f"{path}: member {name!r} now required" for name in sorted(newly_required))
    if "items" in reader and isinstance(writer.get("items"), dict | bool):
        problems.extend(reads(reader["items"], writer["items"], f"{path}/items"))
    return problems
