"""The registry's JSON Schema and Avro types: validation (a clear 42201, never a 500), the text
they store, references, formats and Avro's compatibility; and the registry driving them."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from registry_memory import MemoryLog

from yangkey.registry import jsontype
from yangkey.registry.errors import RegistryError
from yangkey.registry.registry import Registry
from yangkey.registry.schemabase import Parsed
from yangkey.registry.schematypes import formatted, incompatibilities, parse, raw
from yangkey.registry.store import RecordKey, SchemaDef, schema_value

Store = dict[tuple[str, int], SchemaDef]


def parsed(
    kind: str | None,
    text: str,
    refs: list[dict[str, Any]] | None = None,
    store: Store | None = None,
    *,
    normalize: bool = False,
) -> Parsed:
    found = store or {}
    return parse(
        kind,
        text,
        refs,
        lookup=lambda ref: found.get((ref.subject, ref.version)),
        normalize=normalize,
    )


def refused(kind: object, text: object, refs: object = None) -> str:
    with pytest.raises(RegistryError) as caught:
        parse(kind, text, refs, lookup=lambda ref: None, normalize=False)
    assert (caught.value.status, caught.value.code) == (422, 42201)
    return caught.value.reason


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


# ------------------------------------------------------------------ JSON Schema


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"type": "invalid_type"}', "#/type"),
        ('{"properties": []}', "#/properties"),
        ('{"required": 5}', "#/required"),
        ('{"type": "object", "properties": {"a": 5}}', "#/properties/a"),
        (
            '{"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": 3}',
            "#/prefixItems",
        ),
        ('{"$schema": "https://json-schema.org/draft/2020-12/schema", "items": [{}]}', "#/items"),
    ],
)
def test_json_schemas_are_checked_against_their_metaschema(text: str, where: str) -> None:
    assert where in refused("JSON", text)


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "true",
        '{"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 1, '
        '"exclusiveMinimum": true}',
        '{"type": "array", "items": [{"type": "integer"}], "additionalItems": false}',
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", '
        '"prefixItems": [{"type": "integer"}], "items": false, "$defs": {"x": {}}}',
        '{"$schema": "https://json-schema.org/draft/2019-09/schema", "$defs": {"x": {}}, '
        '"dependentRequired": {"a": ["b"]}, "unevaluatedProperties": false}',
    ],
)
def test_valid_schemas_of_every_draft_register(text: str) -> None:
    assert parsed("JSON", text).definition.schema == jsontype.compact(text)


def test_the_flattened_2020_12_metaschema_agrees_with_the_official_one() -> None:
    official = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    flat = jsontype._metavalidator("https://json-schema.org/draft/2020-12/schema")
    samples = [
        {"type": "invalid_type"},
        {"type": ["string", "null"]},
        {"properties": {"a": {"minimum": "x"}}},
        {"$defs": {"a": {"items": {"type": 3}}}},
        {"anyOf": []},
        {"anyOf": [{"type": "string"}]},
        {"$dynamicRef": "#meta"},
        {"dependentRequired": {"a": "b"}},
        {"unevaluatedItems": {"type": "integer"}},
        {"contentSchema": {"not": {"enum": 3}}},
        {"if": {"const": 1}, "then": {"minLength": -1}},
        {"propertyNames": {"maxLength": 3}},
    ]
    for sample in samples:
        assert flat.is_valid(sample) == official.is_valid(sample), sample


def test_hostile_json_input_is_a_422_not_a_500() -> None:
    assert "schemaType" in refused(5, "{}")
    assert "not JSON" in refused("JSON", '{"type": ')
    assert "object or a boolean" in refused("JSON", "5")
    assert "no 'schema'" in refused("JSON", None)
    assert "nests deeper" in refused("JSON", json.dumps(nested(300)))
    assert "not supported" in refused("XML", "<a/>")
    assert "references" in refused("JSON", "{}", {"name": "x"})


def test_deep_schemas_up_to_the_limit_register_and_compare() -> None:
    deep = parsed("JSON", json.dumps(nested(jsontype.MAX_DEPTH - 1)))
    assert incompatibilities("FULL", deep, [deep.definition], lambda ref: None) == []


def test_a_json_schema_is_stored_as_sent_without_whitespace() -> None:
    text = '{ "type" : "integer",\n  "maximum": 123456789012345678901234567890, "title": "a b" }'
    stored = parsed("JSON", text).definition.schema
    assert stored == '{"type":"integer","maximum":123456789012345678901234567890,"title":"a b"}'
    assert raw(parsed("JSON", text).definition)["title"] == "a b"
    reordered = '{"title": "a b", "maximum": 123456789012345678901234567890, "type": "integer"}'
    assert parsed("JSON", reordered).definition.schema != stored
    assert (
        parsed("JSON", reordered, normalize=True).definition.schema
        == parsed("JSON", text, normalize=True).definition.schema
        == '{"maximum":123456789012345678901234567890,"title":"a b","type":"integer"}'
    )


def test_a_tuple_after_an_array_is_compared_not_crashed() -> None:
    array = parsed("JSON", '{"type": "array", "items": {"type": "integer"}}')
    tuple_ = parsed("JSON", '{"type": "array", "items": [{"type": "integer"}]}')
    lookup = lambda ref: None  # noqa: E731
    assert incompatibilities("BACKWARD", tuple_, [array.definition], lookup) == []
    assert incompatibilities("BACKWARD", array, [tuple_.definition], lookup) != []


# ------------------------------------------------------------------ Avro

ADDRESS = {
    "namespace": "com.acme",
    "type": "record",
    "name": "Address",
    "fields": [{"type": "string", "name": "street"}],
}


def avro(schema: Any, refs: Any = None, store: Store | None = None, **kw: Any) -> Parsed:
    return parsed(None, json.dumps(schema), refs, store, **kw)


def test_avro_is_the_default_type_and_is_stored_as_avro_renders_it() -> None:
    address = avro(ADDRESS)
    assert address.definition.schema_type == "AVRO"
    assert address.definition.schema == (
        '{"type":"record","name":"Address","namespace":"com.acme",'
        '"fields":[{"name":"street","type":"string"}]}'
    )
    spaced = json.dumps(dict(reversed(list(ADDRESS.items()))), indent=3)
    assert avro(json.loads(spaced)).definition == address.definition
    assert parsed(None, '{"type": "string"}').definition.schema == '"string"'
    assert parsed(None, "string").definition.schema == '"string"'


def test_avro_renders_namespaces_props_and_named_types_once() -> None:
    schema = {
        "type": "record",
        "name": "com.acme.Outer",
        "doc": "d",
        "fields": [
            {"name": "a", "type": {"type": "fixed", "name": "F", "size": 4}, "doc": "x"},
            {"name": "b", "type": "F", "default": "abcd"},
            {
                "name": "c",
                "type": {
                    "type": "enum",
                    "name": "E",
                    "namespace": "other",
                    "symbols": ["A", "B"],
                    "default": "A",
                },
            },
            {"name": "d", "type": "other.E", "order": "descending"},
            {"name": "t", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "u", "type": ["null", {"type": "map", "values": "F"}], "default": None},
        ],
        "custom": {"k": 1},
    }
    rendered = json.loads(avro(schema).definition.schema)
    assert list(rendered) == ["type", "name", "namespace", "doc", "fields", "custom"]
    assert rendered["name"] == "Outer" and rendered["namespace"] == "com.acme"
    fields = rendered["fields"]
    assert fields[0]["type"] == {"type": "fixed", "name": "F", "size": 4}
    assert fields[1]["type"] == "F"
    assert fields[2]["type"]["namespace"] == "other"
    assert fields[3] == {"name": "d", "type": "other.E", "order": "descending"}
    assert fields[4]["type"] == {"type": "long", "logicalType": "timestamp-millis"}
    assert fields[5]["type"] == ["null", {"type": "map", "values": "F"}]
    normalized = json.loads(avro(schema, normalize=True).definition.schema)
    assert normalized["name"] == "com.acme.Outer" and "namespace" not in normalized


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {
                "type": "record",
                "name": "X",
                "fields": [{"name": "a", "type": "int", "default": "x"}],
            },
            "Default value",
        ),
        ({"type": "record", "name": "1bad", "fields": []}, "valid Avro name"),
        ({"type": "nope"}, "unknown type"),
        ({"type": "enum", "name": "E", "symbols": ["a", "a"]}, "unique"),
        ({"type": "record", "name": "X", "fields": [{"name": "a", "type": "Missing"}]}, "Missing"),
        ({"type": "record", "name": "X", "fields": 5}, "wrong kind of value"),
        ({"type": "fixed", "name": "F"}, ""),
        ({"type": "map"}, "a required field is missing: 'values'"),
        ({"type": "array", "items": 5}, "wrong kind of value"),
        (5, "wrong kind of value"),
    ],
)
def test_invalid_avro_is_a_422(schema: Any, reason: str) -> None:
    assert reason in refused(None, json.dumps(schema))


def test_avro_references_name_types_of_other_subjects() -> None:
    store: Store = {("address", 1): avro(ADDRESS).definition}
    refs = [{"name": "com.acme.Address", "subject": "address", "version": 1}]
    user = {
        "type": "record",
        "name": "User",
        "namespace": "com.acme",
        "fields": [{"name": "home", "type": "Address"}],
    }
    registered = avro(user, refs, store)
    assert json.loads(registered.definition.schema)["fields"][0]["type"] == "Address"
    lookup = lambda ref: store.get((ref.subject, ref.version))  # noqa: E731
    resolved = json.loads(formatted(registered.definition, "resolved", lookup))
    assert resolved["fields"][0]["type"]["fields"] == [{"name": "street", "type": "string"}]
    assert formatted(registered.definition, "unknown-format", lookup) == (
        registered.definition.schema
    )
    # Transitive: a schema referencing User sees Address too.
    store[("user", 1)] = registered.definition
    outer = {
        "type": "record",
        "name": "Box",
        "namespace": "com.acme",
        "fields": [{"name": "u", "type": "User"}, {"name": "a", "type": "Address"}],
    }
    avro(outer, [{"name": "com.acme.User", "subject": "user", "version": 1}], store)
    assert "not registered" in refused(None, json.dumps(user), refs)


def test_avro_compatibility_is_avros_reader_writer_check() -> None:
    def record(*fields: dict[str, Any]) -> Parsed:
        return avro({"type": "record", "name": "R", "fields": list(fields)})

    base = record({"name": "a", "type": "int"})
    lookup = lambda ref: None  # noqa: E731

    def check(level: str, new: Parsed, old: Parsed = base) -> list[str]:
        return incompatibilities(level, new, [old.definition], lookup)

    assert check("BACKWARD", record({"name": "a", "type": "long"})) == []  # int promotes
    assert check("FORWARD", record({"name": "a", "type": "long"})) != []
    assert check("BACKWARD", record({"name": "a", "type": "int"}, {"name": "b", "type": "int"}))
    with_default = record({"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 1})
    assert check("FULL", with_default) == []
    problem = check("BACKWARD", record({"name": "a", "type": "string"}))
    assert problem and "TYPE_MISMATCH" in problem[0] and "new schema" in problem[0]
    enum_ab = avro({"type": "enum", "name": "E", "symbols": ["A", "B"]})
    enum_a = avro({"type": "enum", "name": "E", "symbols": ["A"]})
    assert check("BACKWARD", enum_a, enum_ab) != [] and check("FORWARD", enum_a, enum_ab) == []
    assert check("BACKWARD", parsed("JSON", "{}"))[0].startswith("schema type changed")


# ------------------------------------------------------------------ the registry with these types


def test_the_registry_registers_looks_up_and_dedups_by_the_stored_form() -> None:
    registry = Registry(MemoryLog(), "A")
    first = registry.register("avro-value", {"schema": json.dumps(ADDRESS)})
    assert (first.version, first.definition.schema_type) == (1, "AVRO")
    spaced = {"schema": json.dumps(ADDRESS, indent=2)}
    assert registry.register("avro-value", spaced).version == 1
    assert registry.register("other", spaced).id == first.id, "same schema, same id"
    assert registry.lookup("avro-value", spaced, deleted=False).version == 1
    v2 = {**ADDRESS, "fields": [*ADDRESS["fields"], {"name": "zip", "type": "int"}]}
    with pytest.raises(RegistryError) as caught:
        registry.register("avro-value", {"schema": json.dumps(v2)})
    assert caught.value.code == 409
    assert registry.check("avro-value", "latest", {"schema": json.dumps(v2)}) != []
    registry.register("json-value", {"schemaType": "JSON", "schema": '{"type":"object"}'})
    bad = {"schemaType": "JSON", "schema": '{"type":"object","properties":{"a":5}}'}
    with pytest.raises(RegistryError) as caught:
        registry.register("json-value", bad)
    assert caught.value.code == 42201
    normalized = registry.register(
        "json-value",
        {"schemaType": "JSON", "schema": '{"type":"object","title":"t"}'},
        normalize=True,
    )
    assert normalized.definition.schema == '{"title":"t","type":"object"}'
    assert registry.formatted(normalized.definition, None) == normalized.definition.schema


def test_a_schema_stored_by_the_previous_release_keeps_its_id() -> None:
    """Before this release JSON Schemas were stored with sorted keys; re-registering one as
    sent (keys in another order) must find it, not give the same schema a second id."""
    log = MemoryLog()
    legacy = SchemaDef("JSON", '{"properties":{"a":{"type":"integer"}},"type":"object"}')
    log.append(
        RecordKey("SCHEMA", "old-value", 1, 0, "old").encode(),
        schema_value("old-value", 1, 1, legacy, deleted=False),
    )
    registry = Registry(log, "A")
    as_sent = {
        "schemaType": "JSON",
        "schema": '{"type": "object", "properties": {"a": {"type": "integer"}}}',
    }
    again = registry.register("old-value", as_sent)
    assert (again.id, again.version) == (1, 1)
    assert registry.register("new-value", as_sent).id == 1
    assert registry.lookup("old-value", as_sent, deleted=False).version == 1
    assert (
        registry.register("fresh", {"schemaType": "JSON", "schema": '{"type": "string"}'}).id == 2
    )
