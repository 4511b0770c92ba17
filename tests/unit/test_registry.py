"""The registry without a broker: the store fed records, the write protocol over an in-memory
log (races injected between a writer's read and its append), schema types, compatibility, and
the JSON Schema generated from YANG checked against real RFC 7951 data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jsonschema
import orjson
import pytest
from registry_memory import MemoryLog

from yangkey.registry.errors import RegistryError
from yangkey.registry.jsonschema import branch_schema
from yangkey.registry.registry import Registry
from yangkey.registry.store import RecordKey, SchemaDef, Store, config_value, schema_value
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription


def json_schema(properties: dict[str, object], **extra: object) -> dict[str, object]:
    return {"schema": orjson.dumps({"type": "object", "properties": properties, **extra}).decode()}


STRING = {"type": "string"}
INT = {"type": "integer"}
FOO_V1 = {**json_schema({"a": INT}, additionalProperties=False), "schemaType": "JSON"}
FOO_V2 = {**json_schema({"a": INT, "b": STRING}, additionalProperties=False), "schemaType": "JSON"}


def state(registry: Registry) -> tuple[object, ...]:
    store = registry.store
    subjects = {
        s: {v: (st.id, st.deleted) for v, st in versions.items()}
        for s, versions in store.subjects.items()
    }
    return subjects, dict(store.schemas), dict(store.config)


# ------------------------------------------------------------------ the store fed records


def key(seq: int, node: str, subject: str = "foo", version: int = 1) -> bytes:
    return RecordKey("SCHEMA", subject, version, seq, node).encode()


def value(version: int, schema_id: int, text: str = "{}", *, deleted: bool = False) -> bytes:
    return schema_value("foo", version, schema_id, SchemaDef("JSON", text), deleted=deleted)


def test_a_record_whose_seq_is_not_its_offset_lost_a_race_and_is_ignored() -> None:
    store = Store()
    store.apply(0, key(0, "A"), value(1, 1))
    store.apply(1, key(0, "B"), value(1, 2, '{"b":1}'))  # B also wrote for offset 0
    assert store.versions("foo") == [1]
    assert store.subjects["foo"][1].id == 1
    assert 2 not in store.schemas
    assert store.ignored == 1
    assert store.end == 2


def test_the_seed_lifecycle_soft_then_permanent_delete() -> None:
    store = Store()
    store.apply(0, key(0, "A", version=1), value(1, 1))
    store.apply(1, key(1, "A", version=2), value(2, 2, '{"x":1}'))
    store.apply(2, key(2, "A", version=1), value(1, 1, deleted=True))
    store.apply(3, key(3, "A", version=2), value(2, 2, '{"x":1}', deleted=True))
    assert store.versions("foo") == []
    assert store.versions("foo", deleted=True) == [1, 2]
    assert store.subject_names() == [] and store.subject_names(deleted=True) == ["foo"]
    # Permanent delete recreates every key that wrote the versions, with no sequence check.
    for offset, (seq, version) in enumerate([(0, 1), (1, 2), (2, 1), (3, 2)], start=4):
        store.apply(offset, key(seq, "A", version=version), None)
    assert store.subjects == {}
    assert store.schemas == {}
    assert store.next_id == 3, "ids are never handed out twice"


def test_a_late_tombstone_of_an_old_registration_spares_a_new_one() -> None:
    store = Store()
    store.apply(0, key(0, "A"), value(1, 1))
    store.apply(1, key(1, "A"), value(1, 1, deleted=True))
    store.apply(2, key(0, "A"), None)
    store.apply(3, key(1, "A"), None)
    store.apply(4, key(4, "B"), value(1, 2, '{"again":1}'))  # version 1 registered anew
    store.apply(5, key(0, "A"), None)  # a second instance's duplicate permanent delete
    assert store.versions("foo") == [1]
    assert store.subjects["foo"][1].id == 2


def test_config_records_and_foreign_keys() -> None:
    store = Store()
    store.apply(0, b'{"keytype":"NOOP","magic":0}', b"{}")
    store.apply(1, b"not json", b"x")
    store.apply(2, RecordKey("CONFIG", None, None, 2, "A").encode(), config_value("FULL"))
    store.apply(3, RecordKey("CONFIG", "foo", None, 3, "A").encode(), config_value("NONE"))
    assert store.compatibility("foo") == "NONE"
    assert store.compatibility("bar") == "FULL"
    store.apply(4, RecordKey("CONFIG", "foo", None, 4, "A").encode(), config_value(None))
    assert store.compatibility("foo") == "FULL"
    assert store.compatibility("foo", fallback=False) is None
    assert store.ignored == store.foreign == 2


# ------------------------------------------------------------------ the write protocol


def test_register_is_idempotent_and_ids_are_shared_across_subjects() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    first = registry.register("foo", FOO_V1)
    assert (first.id, first.version) == (1, 1)
    assert registry.register("foo", FOO_V1).version == 1
    assert registry.register("bar", FOO_V1).id == 1, "same schema, same id"
    second = registry.register("foo", FOO_V2)
    assert (second.id, second.version) == (2, 2)
    assert len(log.records) == 3


def test_contended_writes_on_different_subjects_retry_at_the_next_offset() -> None:
    log = MemoryLog()
    a, b = Registry(log, "A"), Registry(log, "B")
    log.before_append = lambda: b.register("bar", FOO_V2)  # B wins offset 0
    registered = a.register("foo", FOO_V1)
    assert a.conflicts == 1
    assert [RecordKey.decode(k).seq for _, k, _ in log.records] == [0, 0, 2]  # type: ignore[union-attr]
    assert (registered.id, registered.version) == (2, 1), "A re-allocated its id on retry"
    b.sync()
    assert state(a) == state(b)
    assert b.version("foo", 1).id == 2


def test_contended_writes_of_the_same_schema_agree_on_one_version() -> None:
    log = MemoryLog()
    a, b = Registry(log, "A"), Registry(log, "B")
    log.before_append = lambda: b.register("foo", FOO_V1)
    assert a.register("foo", FOO_V1).id == b.version("foo", "latest").id == 1
    a.sync()
    assert a.store.versions("foo") == [1], "A saw B's write on re-read and wrote nothing more"
    assert len(log.records) == 2  # B's win and A's ignored attempt


def test_restart_after_compaction_rebuilds_the_same_state() -> None:
    log = MemoryLog()
    a = Registry(log, "A")
    a.register("foo", FOO_V1)
    a.register("foo", FOO_V2)
    a.register("gone", {**json_schema({"g": STRING}), "schemaType": "JSON"})
    a.set_compatibility("foo", "full")
    a.set_compatibility("gone", "NONE")
    a.delete_version("foo", 1, permanent=False)
    assert a.delete_subject("gone", permanent=False) == [1]
    assert a.delete_subject("gone", permanent=True) == [1]
    log.compact()
    assert not [k for _, k, _ in log.records if k and b'"gone"' in k], "all of it tombstoned"
    assert a.store.compatibility("gone", fallback=False) is None
    restarted = Registry(log, "A2")
    restarted.sync()
    assert state(restarted) == state(a)
    assert restarted.subjects() == ["foo"]
    assert restarted.versions("foo", deleted=True) == [1, 2]
    # Ids keep counting after compaction removed the highest one's records... unless they
    # were the last records: the next id comes from what survives.
    assert restarted.register("new", FOO_V1).id == 1


def test_permanent_delete_needs_a_soft_delete_first() -> None:
    registry = Registry(MemoryLog(), "A")
    registry.register("foo", FOO_V1)
    with pytest.raises(RegistryError) as caught:
        registry.delete_subject("foo", permanent=True)
    assert caught.value.code == 40405
    with pytest.raises(RegistryError) as caught:
        registry.delete_version("foo", 1, permanent=True)
    assert caught.value.code == 40407
    registry.delete_version("foo", 1, permanent=False)
    with pytest.raises(RegistryError) as caught:
        registry.delete_version("foo", 1, permanent=False)
    assert caught.value.code == 40406
    assert registry.delete_version("foo", 1, permanent=True) == 1
    with pytest.raises(RegistryError) as caught:
        registry.versions("foo", deleted=True)
    assert caught.value.code == 40401


def test_errors_carry_confluent_codes() -> None:
    registry = Registry(MemoryLog(), "A")
    registry.register("foo", FOO_V1)
    cases: list[tuple[Callable[[], object], int]] = [
        (lambda: registry.version("nope", 1), 40401),
        (lambda: registry.version("foo", 7), 40402),
        (lambda: registry.schema(99), 40403),
        (lambda: registry.lookup("foo", FOO_V2, deleted=False), 40403),
        (lambda: registry.version("foo", "x"), 42202),
        (lambda: registry.register("foo", {"schema": "{", "schemaType": "JSON"}), 42201),
        (lambda: registry.register("foo", {"schema": "{}"}), 42201),  # AVRO: not served here
        (lambda: registry.set_compatibility(None, "SIDEWAYS"), 42203),
        (lambda: registry.compatibility("foo", fallback=False), 40408),
    ]
    for call, code in cases:
        with pytest.raises(RegistryError) as caught:
            call()
        assert caught.value.code == code


# ------------------------------------------------------------------ compatibility


def test_an_incompatible_registration_is_refused_with_409() -> None:
    registry = Registry(MemoryLog(), "A")
    registry.register(
        "foo", {**json_schema({"a": INT}, additionalProperties=False), "schemaType": "JSON"}
    )
    with pytest.raises(RegistryError) as caught:
        registry.register("foo", {**json_schema({"a": STRING}), "schemaType": "JSON"})
    assert (caught.value.status, caught.value.code) == (409, 409)
    registry.set_compatibility("foo", "NONE")
    assert (
        registry.register("foo", {**json_schema({"a": STRING}), "schemaType": "JSON"}).version == 2
    )


# ------------------------------------------------------------------ YANG schemas

BASE = """module ex-base { namespace "urn:ex:base"; prefix b;
  revision 2024-01-01; typedef percent { type uint8 { range "0..100"; } } }"""
USER = """module ex-user { namespace "urn:ex:user"; prefix u;
  import ex-base { prefix b; }
  revision 2024-02-01;
  container load { leaf cpu { type b:percent; } } }"""


def test_yang_modules_with_references_to_their_imports() -> None:
    registry = Registry(MemoryLog(), "A")
    base = registry.register("ex-base", {"schema": BASE, "schemaType": "YANG"})
    with pytest.raises(RegistryError) as caught:
        registry.register("ex-user", {"schema": USER, "schemaType": "YANG"})
    assert caught.value.code == 42201 and "ex-base" in caught.value.reason
    wrong = [{"name": "ex-base", "subject": "other", "version": 1}]
    registry.register("other", {**json_schema({}), "schemaType": "JSON"})
    with pytest.raises(RegistryError):
        registry.register("ex-user", {"schema": USER, "schemaType": "YANG", "references": wrong})
    refs = [{"name": "ex-base", "subject": "ex-base", "version": base.version}]
    user = registry.register("ex-user", {"schema": USER, "schemaType": "YANG", "references": refs})
    assert registry.schema(user.id).references[0].subject == "ex-base"
    assert registry.referenced_by("ex-base", 1) == [user.id]
    with pytest.raises(RegistryError) as caught:
        registry.register("ex-user", {"schema": "module broken {", "schemaType": "YANG"})
    assert caught.value.code == 42201
    with pytest.raises(RegistryError) as caught:  # a subject stays one module
        registry.register("ex-user", {"schema": BASE, "schemaType": "YANG"})
    assert caught.value.code == 409


# ------------------------------------------------------------------ JSON Schema from YANG

IF_XPATH = "/ietf-interfaces:interfaces/interface"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "notifications"


def topic_schema(xpath: str) -> dict[str, object]:
    schema = SchemaContext.cached(())
    compiled = compile_subscription(xpath, schema)
    return branch_schema(schema, compiled.branches[0], compiled.modules, title="t")


def test_generated_schema_accepts_the_fixture_data_and_rejects_wrong_types() -> None:
    raw = orjson.loads((FIXTURES / "restconf-interfaces.json").read_bytes())
    data = raw["ietf-restconf:notification"]["ietf-yang-push:push-update"]["datastore-contents"]
    document = topic_schema(IF_XPATH)
    jsonschema.Draft202012Validator.check_schema(document)
    validator = jsonschema.Draft202012Validator(document)
    validator.validate(data)
    interface = {
        "name": "eth0",
        "type": "iana-if-type:ethernetCsmacd",
        "enabled": True,
        "ietf-ip:ipv4": {"mtu": 1500, "address": [{"ip": "192.0.2.1", "prefix-length": 24}]},
        "statistics": {
            "in-octets": "18446744073709551615",
            "discontinuity-time": "2026-11-20T10:00:00Z",
        },
    }
    validator.validate({"ietf-interfaces:interfaces": {"interface": [interface]}})
    bad = [
        {**interface, "enabled": "yes"},
        {**interface, "statistics": {"in-octets": 5}},  # uint64 is a string in RFC 7951
        {**interface, "ipv4": {}},  # a member from another module must be qualified
        {"type": "iana-if-type:other"},  # list entries carry their key
    ]
    for entry in bad:
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"ietf-interfaces:interfaces": {"interface": [entry]}})


def test_ancestors_hold_only_the_path_and_their_keys() -> None:
    document = topic_schema(f"{IF_XPATH}[name='eth0']/ietf-ip:ipv4/address")
    validator = jsonschema.Draft202012Validator(document)
    path = {"name": "eth0", "ietf-ip:ipv4": {"address": [{"ip": "10.0.0.1", "netmask": "x"}]}}
    validator.validate({"ietf-interfaces:interfaces": {"interface": [path]}})
    for entry in (
        {**path, "mtu": 1},  # a sibling of the path: not this topic
        {**path, "ietf-ip:ipv4": {"address": [{"ip": "10.0.0.1", "prefix-length": 33}]}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"ietf-interfaces:interfaces": {"interface": [entry]}})
