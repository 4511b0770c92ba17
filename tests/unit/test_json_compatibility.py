"""JSON Schema compatibility, pair by pair: does the reader read every value the writer allows?

The pairs are the constructs of Karapace's JSON Schema compatibility suite (its unit tests,
read for their verdicts), rewritten here; each verdict follows from the rule. Where Karapace's
verdict does not (it calls ``false`` readable by ``true`` and a reader that accepts everything
incompatible with non-objects), the rule wins and the pair says why. Each case checks the
verdict and that an incompatible pair says where.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from yangkey.registry.errors import RegistryError
from yangkey.registry.jsoncompat import reads
from yangkey.registry.jsonrefs import Scope
from yangkey.registry.schematypes import incompatibilities, parse
from yangkey.registry.store import Reference, SchemaDef

INT = {"type": "integer"}
NUM = {"type": "number"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}
OBJ = {"type": "object"}
ARR = {"type": "array"}


def closed(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties, **extra}


def opened(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def with_default(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    return {**schema, "default": value}


def array_of(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


def tuple_of(*items: Any, rest: Any = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": list(items)}
    if rest is not None:
        schema["additionalItems"] = rest
    return schema


COMPATIBLE: list[tuple[str, Any, Any]] = [
    # (case, reader, writer)
    ("open object reads a closed one with more", OBJ, closed({"a": INT})),
    ("true reads an object", True, closed({"a": INT})),
    ("empty schema reads an object", {}, closed({"a": INT})),
    ("open object ignores a member it does not describe", opened({"b": INT}), closed({"a": INT})),
    ("new optional member in a closed object", closed({"a": INT, "b": INT}), closed({"a": INT})),
    (
        "new optional member with a default",
        closed({"a": with_default(INT, 1), "b": NUM, "c": with_default(INT, 0)}),
        closed({"a": with_default(INT, 1), "b": NUM}),
    ),
    (
        "open reader over a closed writer with a member dropped",
        opened({"b": NUM, "c": with_default(INT, 0)}),
        closed({"a": with_default(INT, 1), "b": NUM, "c": with_default(INT, 0)}),
    ),
    (
        "a default on a non-required member",
        closed({"a": INT, "b": with_default(INT, 0)}),
        closed({"a": INT}),
    ),
    (
        "members with defaults added to an empty closed object",
        closed({"a": with_default(INT, 0), "b": with_default(INT, 0)}),
        closed({}),
    ),
    ("true reads false", True, False),
    ("anything reads false", closed({"a": INT}, required=["a"]), False),
    ("anything reads not-anything", INT, {"not": {}}),
    ("not-true reads not-empty (both nothing)", {"not": True}, {"not": {}}),
    ("empty reads true", {}, True),
    ("number reads integer", NUM, INT),
    ("array of number reads array of integer", array_of(NUM), array_of(INT)),
    ("open tuple reads a closed shorter tuple", tuple_of(INT), tuple_of(INT, rest=False)),
    (
        "tuple with typed rest reads a closed tuple",
        tuple_of(INT, rest=INT),
        tuple_of(INT, rest=False),
    ),
    ("open tuple reads a longer open tuple", tuple_of(INT), tuple_of(INT, INT)),
    ("open tuple reads a longer closed tuple", tuple_of(INT), tuple_of(INT, INT, rest=False)),
    ("tuple reads a plain array of the same items", tuple_of(INT), array_of(INT)),
    ("enum grows", {"enum": ["A", "B", "C"]}, {"enum": ["A", "B"]}),
    ("oneOf grows", {"oneOf": [STR, INT]}, {"oneOf": [STR]}),
    ("oneOf reads the plain type", {"oneOf": [STR, INT]}, STR),
    ("single-branch oneOf reads the plain type", {"oneOf": [STR]}, STR),
    ("plain type reads a single-branch oneOf", STR, {"oneOf": [STR]}),
    ("plain type reads a one-type list", STR, {"type": ["string"]}),
    ("type list reads a narrower list", {"type": ["string", "integer"]}, {"type": ["string"]}),
    ("type list with null reads the type", {"type": ["string", "null"]}, STR),
    ("type list reads a plain type", {"type": ["integer", "boolean"]}, INT),
    ("longer type list reads a plain type", {"type": ["string", "null", "boolean"]}, STR),
    ("member may become nullable", opened({"a": {"type": ["string", "null"]}}), opened({"a": STR})),
    (
        "open reader reads an object with more members",
        opened({"a": INT}),
        closed({"a": INT, "b": INT}),
    ),
    ("closed reader reads an empty closed object", closed({"a": INT}), closed({})),
    ("maxLength dropped", STR, {**STR, "maxLength": 3}),
    ("maxLength raised", {**STR, "maxLength": 3}, {**STR, "maxLength": 2}),
    ("minLength dropped", STR, {**STR, "minLength": 5}),
    ("minLength lowered", {**STR, "minLength": 5}, {**STR, "minLength": 7}),
    ("pattern dropped", STR, {**STR, "pattern": "a*"}),
    # Patterns are unanchored: "a*" matches every string. Karapace calls adding it narrowing.
    ("a pattern that matches every string", {**STR, "pattern": "a*"}, STR),
    ("maximum dropped", INT, {**INT, "maximum": 13}),
    ("number maximum dropped", NUM, {**NUM, "maximum": 13}),
    ("maximum raised", {**NUM, "maximum": 13}, {**NUM, "maximum": 11}),
    ("minimum dropped", INT, {**INT, "minimum": 17}),
    ("number minimum dropped", NUM, {**NUM, "minimum": 17}),
    ("minimum lowered", {**NUM, "minimum": 17}, {**NUM, "minimum": 19}),
    ("exclusiveMaximum dropped", INT, {**INT, "exclusiveMaximum": 29}),
    ("number exclusiveMaximum dropped", NUM, {**NUM, "exclusiveMaximum": 29}),
    ("exclusiveMaximum raised", {**NUM, "exclusiveMaximum": 29}, {**NUM, "exclusiveMaximum": 23}),
    ("exclusiveMinimum dropped", NUM, {**NUM, "exclusiveMinimum": 31}),
    ("integer exclusiveMinimum dropped", INT, {**INT, "exclusiveMinimum": 31}),
    ("exclusiveMinimum lowered", {**NUM, "exclusiveMinimum": 31}, {**NUM, "exclusiveMinimum": 37}),
    (
        "integer: exclusiveMinimum 0 reads minimum 1",
        {**INT, "exclusiveMinimum": 0},
        {**INT, "minimum": 1},
    ),
    ("maxProperties dropped", OBJ, {**OBJ, "maxProperties": 43}),
    ("maxProperties raised", {**OBJ, "maxProperties": 43}, {**OBJ, "maxProperties": 41}),
    ("minProperties dropped", OBJ, {**OBJ, "minProperties": 47}),
    ("minProperties lowered", {**OBJ, "minProperties": 47}, {**OBJ, "minProperties": 53}),
    ("maxItems dropped", ARR, {**ARR, "maxItems": 61}),
    ("maxItems raised", {**ARR, "maxItems": 61}, {**ARR, "maxItems": 59}),
    ("minItems dropped", ARR, {**ARR, "minItems": 67}),
    ("minItems lowered", {**ARR, "minItems": 67}, {**ARR, "minItems": 71}),
    ("object reads pattern members", OBJ, {**OBJ, "patternProperties": {"^a*": {}}}),
    (
        "open object with any 'a' reads pattern members",
        opened({"a": {}}),
        {**OBJ, "patternProperties": {"^a*": {}}},
    ),
    (
        "pattern members read an open object",
        {**OBJ, "patternProperties": {"^a*": {}}},
        opened({"a": {}}),
    ),
    ("object reads restricted names", OBJ, {**OBJ, "propertyNames": {"pattern": "a*"}}),
    (
        "restricted names read an open object",
        {**OBJ, "propertyNames": {"pattern": "a*"}},
        opened({"a": {}}),
    ),
    (
        "oneOf of open arrays reads oneOf of closed ones",
        {"oneOf": [array_of(opened({"b": NUM, "c": with_default(INT, 0)}))]},
        {"oneOf": [array_of(closed({"a": with_default(INT, 1), "b": NUM}))]},
    ),
    (
        "inline bound reads the same bound through $ref",
        array_of({**INT, "exclusiveMinimum": 0}),
        {
            **array_of({"$ref": "#/$defs/positive"}),
            "$defs": {"positive": {**INT, "exclusiveMinimum": 0}},
        },
    ),
    (
        "$ref reads the same bound inline",
        {
            **array_of({"$ref": "#/$defs/positive"}),
            "$defs": {"positive": {**INT, "exclusiveMinimum": 0}},
        },
        array_of({**INT, "exclusiveMinimum": 0}),
    ),
    ("not-integer reads not-integer", {"not": INT}, {"not": INT}),
    ("not-integer reads strings", {"not": INT}, STR),
    ("not-number reads not-integer? no: not-integer reads not-number", {"not": INT}, {"not": NUM}),
    (
        "every type, reflexive",
        closed(
            {
                "b": BOOL,
                "i": INT,
                "n": NUM,
                "s": STR,
                "e": {"enum": ["S"]},
                "a": array_of(STR),
                "r": opened({"f": NUM}),
            },
            required=["b", "i"],
        ),
        closed(
            {
                "b": BOOL,
                "i": INT,
                "n": NUM,
                "s": STR,
                "e": {"enum": ["S"]},
                "a": array_of(STR),
                "r": opened({"f": NUM}),
            },
            required=["b", "i"],
        ),
    ),
    (
        "anyOf member with a sibling type",
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    ),
    (
        "allOf on the writer narrows to what the reader wants",
        closed({"a": INT}, required=["a"]),
        {"allOf": [closed({"a": INT}), {"required": ["a"]}]},
    ),
    ("multipleOf of a multiple", {**INT, "multipleOf": 2}, {**INT, "multipleOf": 4}),
    ("enum values all pass the reader", {**STR, "maxLength": 1}, {"enum": ["a", "b"]}),
    (
        "recursive schema, reflexive",
        {
            "$defs": {"node": opened({"next": {"$ref": "#/$defs/node"}, "v": INT})},
            "$ref": "#/$defs/node",
        },
        {
            "$defs": {"node": opened({"next": {"$ref": "#/$defs/node"}, "v": INT})},
            "$ref": "#/$defs/node",
        },
    ),
]

INCOMPATIBLE: list[tuple[str, Any, Any]] = [
    ("closed reader drops a member", closed({"b": INT}), closed({"a": INT})),
    (
        "closed reader drops a member the writer had",
        closed({"b": NUM, "c": INT}),
        closed({"a": with_default(INT, 1), "b": NUM}),
    ),
    (
        "closed reader drops a member with a default",
        closed({"b": NUM, "c": INT}),
        closed({"a": with_default(INT, 1), "b": NUM, "c": with_default(INT, 0)}),
    ),
    ("not-true reads nothing", {"not": True}, closed({"a": INT})),
    ("not-empty reads nothing", {"not": {}}, closed({"a": INT})),
    ("new required member", closed({"a": INT, "b": INT}, required=["b"]), closed({"a": INT})),
    (
        "closed reader drops a required member",
        closed({"a": INT}),
        closed({"a": INT, "b": with_default(INT, 0)}, required=["b"]),
    ),
    (
        "closed reader over an open writer",
        closed({"b": NUM, "c": INT}),
        opened({"b": NUM, "c": with_default(INT, 0)}),
    ),
    (
        "oneOf of closed arrays drops a member",
        {"oneOf": [array_of(closed({"b": NUM, "c": INT}))]},
        {"oneOf": [array_of(closed({"a": with_default(INT, 1), "b": NUM}))]},
    ),
    ("open tuple read by an array of integers", array_of(INT), tuple_of(INT)),
    ("integer narrows number", INT, NUM),
    ("array of integer narrows array of number", array_of(INT), array_of(NUM)),
    ("enum shrinks", {"enum": ["A", "B"]}, {"enum": ["A", "B", "C"]}),
    ("enum changes", {"enum": ["B", "C"]}, {"enum": ["A", "B", "C"]}),
    ("oneOf narrows number to integer", {"oneOf": [INT]}, {"oneOf": [NUM]}),
    ("oneOf loses a branch", {"oneOf": [STR]}, {"oneOf": [STR, INT]}),
    ("plain type reads only one branch of a oneOf", INT, {"oneOf": [STR, INT]}),
    ("boolean to integer", BOOL, INT),
    ("integer to boolean", INT, BOOL),
    ("boolean to string", STR, BOOL),
    ("integer to string", STR, INT),
    ("array of string to array of integer", array_of(INT), array_of(STR)),
    ("closed two-tuple reads an open one-tuple", tuple_of(INT, INT, rest=False), tuple_of(INT)),
    ("open two-tuple reads an open one-tuple", tuple_of(INT, INT), tuple_of(INT)),
    ("integer reads an enum of strings", INT, {"enum": ["A", "B"]}),
    ("enum reads integers", {"enum": ["A", "B"]}, INT),
    ("not-empty reads true", {"not": {}}, True),
    ("not-true reads true", {"not": True}, True),
    ("required members read true", closed({"a": INT, "b": INT}, required=["b"]), True),
    ("false reads not-true? no: false reads true", False, True),
    ("maxLength added", {**STR, "maxLength": 3}, STR),
    ("maxLength lowered", {**STR, "maxLength": 2}, {**STR, "maxLength": 3}),
    ("minLength added", {**STR, "minLength": 5}, STR),
    ("minLength raised", {**STR, "minLength": 7}, {**STR, "minLength": 5}),
    ("pattern added", {**STR, "pattern": "^a+$"}, STR),
    ("pattern changed", {**STR, "pattern": "a+"}, {**STR, "pattern": "a*"}),
    ("maximum added", {**INT, "maximum": 13}, INT),
    ("number maximum on integers", {**NUM, "maximum": 13}, INT),
    ("number maximum added", {**NUM, "maximum": 13}, NUM),
    ("maximum lowered", {**NUM, "maximum": 11}, {**NUM, "maximum": 13}),
    ("number minimum on integers", {**NUM, "minimum": 17}, INT),
    ("minimum added", {**NUM, "minimum": 17}, NUM),
    ("minimum raised", {**NUM, "minimum": 19}, {**NUM, "minimum": 17}),
    ("exclusiveMaximum on integers", {**NUM, "exclusiveMaximum": 29}, INT),
    ("exclusiveMaximum added", {**NUM, "exclusiveMaximum": 29}, NUM),
    ("exclusiveMaximum lowered", {**NUM, "exclusiveMaximum": 23}, {**NUM, "exclusiveMaximum": 29}),
    ("exclusiveMinimum added", {**NUM, "exclusiveMinimum": 31}, NUM),
    ("exclusiveMinimum on integers", {**NUM, "exclusiveMinimum": 31}, INT),
    ("exclusiveMinimum raised", {**NUM, "exclusiveMinimum": 37}, {**NUM, "exclusiveMinimum": 31}),
    ("minimum made exclusive", {**NUM, "exclusiveMinimum": 31}, {**NUM, "minimum": 31}),
    ("maxProperties added", {**OBJ, "maxProperties": 43}, OBJ),
    ("maxProperties lowered", {**OBJ, "maxProperties": 41}, {**OBJ, "maxProperties": 43}),
    ("minProperties added", {**OBJ, "minProperties": 47}, OBJ),
    ("minProperties raised", {**OBJ, "minProperties": 53}, {**OBJ, "minProperties": 47}),
    ("maxItems added", {**ARR, "maxItems": 61}, ARR),
    ("maxItems lowered", {**ARR, "maxItems": 59}, {**ARR, "maxItems": 61}),
    ("minItems added", {**ARR, "minItems": 67}, ARR),
    ("minItems raised", {**ARR, "minItems": 71}, {**ARR, "minItems": 67}),
    (
        "closed member 'a' reads pattern members of any value",
        closed({"a": INT}),
        {**OBJ, "patternProperties": {"^a*": {}}},
    ),
    ("object narrowed to a member", opened({"a": INT}), OBJ),
    ("closed object reads any object", closed({"a": {}}), OBJ),
    (
        "closed object with a typed member reads restricted names",
        closed({"a": INT}),
        {**OBJ, "propertyNames": {"pattern": "a*"}},
    ),
    ("nullable string narrowed to string", {"type": ["string", "null"]}, BOOL),
    (
        "nullable string member reads an integer member",
        opened({"a": {"type": ["string", "null"]}}),
        opened({"a": INT}),
    ),
    (
        "integer-or-boolean member reads a string member",
        opened({"a": {"type": ["integer", "boolean"]}}),
        opened({"a": STR}),
    ),
    ("new typed member in an open object", opened({"a": INT, "b": STR}), opened({"a": INT})),
    ("not-integer reads integers", {"not": INT}, INT),
    ("not-number reads not-integer", {"not": NUM}, {"not": INT}),
    ("not added over everything", {"not": OBJ}, {}),
    ("multipleOf added", {**INT, "multipleOf": 4}, {**INT, "multipleOf": 2}),
    ("uniqueItems added", {**ARR, "uniqueItems": True}, ARR),
    ("propertyNames added to an open object", {**OBJ, "propertyNames": {"maxLength": 3}}, OBJ),
    ("dependentRequired added", {**OBJ, "dependentRequired": {"a": ["b"]}}, OBJ),
    ("an enum value the reader rejects", {**STR, "maxLength": 1}, {"enum": ["a", "bc"]}),
    (
        "$ref to a narrower definition",
        {**array_of({"$ref": "#/$defs/small"}), "$defs": {"small": {**INT, "maximum": 3}}},
        array_of(INT),
    ),
]


def check(reader: Any, writer: Any) -> list[str]:
    return reads(Scope(reader), Scope(writer))


@pytest.mark.parametrize(("case", "reader", "writer"), COMPATIBLE, ids=[c[0] for c in COMPATIBLE])
def test_compatible_pairs(case: str, reader: Any, writer: Any) -> None:
    assert check(reader, writer) == [], case


@pytest.mark.parametrize(
    ("case", "reader", "writer"), INCOMPATIBLE, ids=[c[0] for c in INCOMPATIBLE]
)
def test_incompatible_pairs(case: str, reader: Any, writer: Any) -> None:
    problems = check(reader, writer)
    assert problems, case
    assert all(p.startswith("#") for p in problems), problems


def test_every_schema_reads_itself() -> None:
    for _, reader, writer in COMPATIBLE + INCOMPATIBLE:
        for schema in (reader, writer):
            assert check(schema, schema) == [], schema


# ------------------------------------------------------------------ through the interface


def lookup_in(store: dict[tuple[str, int], SchemaDef]) -> Any:
    return lambda ref: store.get((ref.subject, ref.version))


def json_parsed(
    schema: Any, store: dict[tuple[str, int], SchemaDef] | None = None, refs: Any = None
) -> Any:
    return parse("JSON", json.dumps(schema), refs, lookup=lookup_in(store or {}), normalize=False)


def test_levels_name_the_direction_in_their_messages() -> None:
    old = json_parsed(closed({"a": NUM}))
    new = json_parsed(closed({"a": INT}))
    backward = incompatibilities("BACKWARD", new, [old.definition], lookup_in({}))
    assert backward and "new" in backward[0] and "old" in backward[0]
    assert backward[0].index("new") > backward[0].index("old")  # "allowed by the old ... the new"
    assert incompatibilities("FORWARD", new, [old.definition], lookup_in({})) == []
    assert incompatibilities("FULL", new, [old.definition], lookup_in({})) == backward


def test_transitive_levels_check_every_version() -> None:
    v1 = json_parsed(closed({"a": INT})).definition
    v2 = json_parsed(opened({"a": INT, "b": STR})).definition
    v3 = json_parsed(closed({"b": STR}))
    assert incompatibilities("BACKWARD", v3, [v1, v2], lookup_in({})) != []
    widened = json_parsed(opened({"a": NUM}))
    assert incompatibilities("BACKWARD_TRANSITIVE", widened, [v1, v2], lookup_in({})) == []
    assert incompatibilities("BACKWARD", json_parsed(opened({"b": INT})), [v2], lookup_in({})) != []
    assert incompatibilities("FULL_TRANSITIVE", widened, [v1], lookup_in({})) != []
    assert incompatibilities("NONE", v3, [v1, v2], lookup_in({})) == []


def test_references_are_followed_into_the_referenced_document() -> None:
    store = {("address", 1): json_parsed(closed({"street": STR, "zip": INT})).definition}
    refs = [{"name": "address.json", "subject": "address", "version": 1}]
    old = json_parsed(closed({"home": {"$ref": "address.json"}}), store, refs)
    store[("address", 2)] = json_parsed(closed({"street": STR})).definition
    refs2 = [{"name": "address.json", "subject": "address", "version": 2}]
    new = json_parsed(closed({"home": {"$ref": "address.json"}}), store, refs2)
    problems = incompatibilities("BACKWARD", new, [old.definition], lookup_in(store))
    assert problems and "home" in problems[0]
    assert incompatibilities("FORWARD", new, [old.definition], lookup_in(store)) == []


def test_a_ref_that_names_no_reference_is_refused() -> None:
    with pytest.raises(RegistryError) as caught:
        json_parsed(closed({"home": {"$ref": "address.json"}}))
    assert caught.value.code == 42201 and "address.json" in caught.value.reason
    with pytest.raises(RegistryError):
        json_parsed(closed({"home": {"$ref": "#/$defs/missing"}}))


def test_generated_yang_schemas_evolve_compatibly_when_a_leaf_is_added() -> None:
    foreign = {"^[A-Za-z_][A-Za-z0-9_.-]*:": True}
    before = {**closed({"cpu": INT}), "patternProperties": foreign}
    after = {**closed({"cpu": INT, "memory": STR}), "patternProperties": foreign}
    assert check(after, before) == []
    assert check(before, after) != []  # a leaf removed: the old reader refuses it
    assert Reference("a", "b", 1).to_json()["version"] == 1
