"""The registry's Protobuf type: text and base64 descriptors in, validation as protoc does it,
imports as references, the serialized format, and Confluent's compatibility rules one by one."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from yangkey.registry.errors import RegistryError
from yangkey.registry.schemabase import Parsed
from yangkey.registry.schematypes import formatted, incompatibilities, parse
from yangkey.registry.store import SchemaDef

Store = dict[tuple[str, int], SchemaDef]


def proto(text: str, refs: Any = None, store: Store | None = None, **kw: Any) -> Parsed:
    found = store or {}
    return parse(
        "PROTOBUF",
        text,
        refs,
        lookup=lambda ref: found.get((ref.subject, ref.version)),
        normalize=kw.get("normalize", False),
    )


def refused(text: str, refs: Any = None) -> str:
    with pytest.raises(RegistryError) as caught:
        proto(text, refs)
    assert caught.value.code == 42201
    return caught.value.reason


HEADER = 'syntax = "proto3";\npackage acme;\n'
ORDER = (
    HEADER
    + """
import "google/protobuf/timestamp.proto";
// An order, as sent.
message Order {
  message Line { string sku = 1; int32 qty = 2; }
  enum State { NEW = 0; PAID = 1 [deprecated = true]; }
  int64 id = 1;
  repeated Line lines = 2;
  map<string, int32> counts = 3;
  oneof payment { string card = 4; string iban = 5; }
  State state = 6;
  google.protobuf.Timestamp at = 7;
  optional string note = 8;
  reserved 9, 11 to 12;
}
"""
)


def test_text_is_stored_as_sent_and_served_as_a_descriptor() -> None:
    order = proto(ORDER)
    assert order.definition.schema == ORDER.strip() + "\n"
    serialized = formatted(order.definition, "serialized", lambda ref: None)
    descriptor = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    message = descriptor.message_type[0]
    assert [f.name for f in message.field] == [
        "id",
        "lines",
        "counts",
        "card",
        "iban",
        "state",
        "at",
        "note",
    ]
    lines = next(f for f in message.field if f.name == "lines")
    assert lines.type_name == ".acme.Order.Line"
    assert next(f for f in message.field if f.name == "at").type_name == (
        ".google.protobuf.Timestamp"
    )
    counts_entry = next(n for n in message.nested_type if n.name == "CountsEntry")
    assert counts_entry.options.map_entry
    assert [o.name for o in message.oneof_decl] == ["payment", "_note"]
    # The descriptor registers too (what confluent_kafka sends), and reads back as text.
    again = proto(serialized)
    assert "message Order" in again.definition.schema
    assert "map<string, int32> counts = 3;" in again.definition.schema
    assert incompatibilities("FULL", again, [order.definition], lambda ref: None) == []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (HEADER + "message A { Nope b = 1; }", "Nope"),
        (HEADER + "message A { int32 a = 1; int32 b = 1; }", "duplicate field number"),
        (HEADER + "message A { int32 a = ; }", "syntax error"),
        ("message { int32 a = 1; }", "syntax error"),
        ("garbage", "syntax error"),
        (HEADER + 'import "other.proto";\nmessage A {}', "has no reference"),
        (HEADER + "message A { int32 a = 1 [no_such_option = true]; }", "unknown option"),
        ('edition = "2023";\nmessage A {}', "editions"),
    ],
)
def test_invalid_protobuf_is_a_422(text: str, reason: str) -> None:
    assert reason in refused(text)


def test_imports_are_references_transitively() -> None:
    store: Store = {}
    store[("money", 1)] = proto(HEADER + "message Money { int64 cents = 1; }").definition
    price = HEADER + 'import "money.proto";\nmessage Price { Money amount = 1; }'
    refs = [{"name": "money.proto", "subject": "money", "version": 1}]
    store[("price", 1)] = proto(price, refs, store).definition
    line = HEADER + 'import "price.proto";\nmessage Line { Price price = 1; }'
    registered = proto(line, [{"name": "price.proto", "subject": "price", "version": 1}], store)
    assert "Line" in registered.definition.schema
    assert "no reference" in refused(HEADER + 'import "money.proto";\nmessage X { Money m = 1; }')


def test_normalize_orders_fields_by_number() -> None:
    text = HEADER + "message A { string b = 2; int32 a = 1; }"
    normalized = proto(text, normalize=True).definition.schema
    assert normalized.index("int32 a = 1") < normalized.index("string b = 2")
    assert proto(text).definition.schema == text.strip() + "\n"


# ------------------------------------------------------------------ Confluent's rules


def verdict(old: str, new: str, level: str = "BACKWARD") -> list[str]:
    before, after = proto(HEADER + old), proto(HEADER + new)
    return incompatibilities(level, after, [before.definition], lambda ref: None)


RULES: list[tuple[str, str, str, str | None]] = [
    # (case, old, new, the incompatible change's errorType or None when compatible)
    ("add a field", "message M { int32 a = 1; }", "message M { int32 a = 1; string b = 2; }", None),
    (
        "remove a field",
        "message M { int32 a = 1; string b = 2; }",
        "message M { int32 a = 1; }",
        None,
    ),
    ("rename a field", "message M { int32 a = 1; }", "message M { int32 renamed = 1; }", None),
    ("int32 to int64", "message M { int32 a = 1; }", "message M { int64 a = 1; }", None),
    ("uint64 to bool", "message M { uint64 a = 1; }", "message M { bool a = 1; }", None),
    ("string to bytes", "message M { string a = 1; }", "message M { bytes a = 1; }", None),
    ("fixed32 to sfixed32", "message M { fixed32 a = 1; }", "message M { sfixed32 a = 1; }", None),
    (
        "enum to int32",
        "enum E { X = 0; } message M { E a = 1; }",
        "message M { int32 a = 1; }",
        None,
    ),
    (
        "string becomes repeated",
        "message M { string a = 1; }",
        "message M { repeated string a = 1; }",
        None,
    ),
    (
        "add a message",
        "message M { int32 a = 1; }",
        "message M { int32 a = 1; } message N {}",
        None,
    ),
    ("move a message", "message M {} message N {}", "message N {} message M {}", None),
    (
        "add and remove enums and values",
        "enum E { A = 0; } message M {}",
        "enum F { B = 0; C = 1; } message M {}",
        None,
    ),
    (
        "add a oneof",
        "message M { int32 a = 1; }",
        "message M { int32 a = 1; oneof o { string b = 2; } }",
        None,
    ),
    (
        "remove a whole oneof",
        "message M { int32 a = 1; oneof o { string b = 2; } }",
        "message M { int32 a = 1; }",
        None,
    ),
    (
        "move a field out of its oneof",
        "message M { oneof o { string b = 2; int32 c = 3; } }",
        "message M { string b = 2; oneof o { int32 c = 3; } }",
        None,
    ),
    (
        "add a field to a oneof",
        "message M { oneof o { string b = 2; } }",
        "message M { oneof o { string b = 2; int32 c = 3; } }",
        None,
    ),
    ("change the package", "message M {}", "message M {}", "PACKAGE_CHANGED"),
    ("remove a message", "message M {} message N {}", "message M {}", "MESSAGE_REMOVED"),
    (
        "int32 to string",
        "message M { int32 a = 1; }",
        "message M { string a = 1; }",
        "FIELD_SCALAR_KIND_CHANGED",
    ),
    (
        "int32 to sint32",
        "message M { int32 a = 1; }",
        "message M { sint32 a = 1; }",
        "FIELD_SCALAR_KIND_CHANGED",
    ),
    (
        "float to double",
        "message M { float a = 1; }",
        "message M { double a = 1; }",
        "FIELD_SCALAR_KIND_CHANGED",
    ),
    # Confluent compares labels only where both are written (proto3's implicit one is not).
    (
        "optional int32 becomes repeated",
        "message M { optional int32 a = 1; }",
        "message M { repeated int32 a = 1; }",
        "FIELD_NUMERIC_LABEL_CHANGED",
    ),
    (
        "scalar to message",
        "message N {} message M { int32 a = 1; }",
        "message N {} message M { N a = 1; }",
        "FIELD_KIND_CHANGED",
    ),
    (
        "message to map",
        "message N {} message M { N a = 1; }",
        "message N {} message M { map<string, N> a = 1; }",
        "FIELD_KIND_CHANGED",
    ),
    (
        "another message type",
        "message N {} message O {} message M { N a = 1; }",
        "message N {} message O {} message M { O a = 1; }",
        "FIELD_NAMED_TYPE_CHANGED",
    ),
    (
        "map value type",
        "message M { map<string, int32> a = 1; }",
        "message M { map<string, string> a = 1; }",
        "FIELD_SCALAR_KIND_CHANGED",
    ),
    (
        "remove one member of a oneof",
        "message M { oneof o { string b = 2; int32 c = 3; } }",
        "message M { oneof o { string b = 2; } }",
        "ONEOF_FIELD_REMOVED",
    ),
    (
        "two fields into one oneof",
        "message M { string b = 2; int32 c = 3; }",
        "message M { oneof o { string b = 2; int32 c = 3; } }",
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
    ),
    (
        "a field into an existing oneof",
        "message M { oneof o { string b = 2; } int32 c = 3; }",
        "message M { oneof o { string b = 2; int32 c = 3; } }",
        "FIELD_MOVED_TO_EXISTING_ONEOF",
    ),
    (
        "a nested message's field changes kind",
        "message M { message N { int32 x = 1; } N n = 1; }",
        "message M { message N { string x = 1; } N n = 1; }",
        "FIELD_SCALAR_KIND_CHANGED",
    ),
]


@pytest.mark.parametrize(("case", "old", "new", "expected"), RULES, ids=[r[0] for r in RULES])
def test_confluent_protobuf_rules(case: str, old: str, new: str, expected: str | None) -> None:
    if expected == "PACKAGE_CHANGED":
        before, after = proto(HEADER + old), proto(HEADER.replace("acme", "other") + new)
        problems = incompatibilities("BACKWARD", after, [before.definition], lambda ref: None)
    else:
        problems = verdict(old, new)
    if expected is None:
        assert problems == [], case
    else:
        assert any(expected in p for p in problems), problems


def test_required_fields_in_proto2() -> None:
    two = 'syntax = "proto2";\npackage acme;\n'

    def check(old: str, new: str) -> list[str]:
        before, after = proto(two + old), proto(two + new)
        return incompatibilities("BACKWARD", after, [before.definition], lambda ref: None)

    added = check(
        "message M { optional int32 a = 1; }",
        "message M { optional int32 a = 1; required int32 b = 2; }",
    )
    assert any("REQUIRED_FIELD_ADDED" in p for p in added)
    removed = check("message M { required int32 a = 1; }", "message M {}")
    assert any("REQUIRED_FIELD_REMOVED" in p for p in removed)


def test_directions_and_references() -> None:
    store: Store = {}
    store[("n", 1)] = proto(HEADER + "message N { int32 x = 1; }").definition
    store[("n", 2)] = proto(HEADER + "message N { string x = 1; }").definition
    user = HEADER + 'import "n.proto";\nmessage M { N n = 1; }'
    v1 = proto(user, [{"name": "n.proto", "subject": "n", "version": 1}], store)
    v2 = proto(user, [{"name": "n.proto", "subject": "n", "version": 2}], store)
    lookup = lambda ref: store.get((ref.subject, ref.version))  # noqa: E731
    problems = incompatibilities("BACKWARD", v2, [v1.definition], lookup)
    assert any("FIELD_NAMED_TYPE_CHANGED" in p for p in problems)
    assert incompatibilities("BACKWARD", v1, [v1.definition], lookup) == []
    # Removing a message is backward-incompatible; adding one is not, in either direction.
    grown = proto(HEADER + "message M {} message X {}")
    small = proto(HEADER + "message M {}")
    assert incompatibilities("BACKWARD", small, [grown.definition], lookup)
    assert incompatibilities("FORWARD", small, [grown.definition], lookup) == []
    assert incompatibilities("FORWARD", grown, [small.definition], lookup)
