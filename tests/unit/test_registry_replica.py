"""The registry's replica of its store topic without a broker (issue 31): a changed store is
replayed, never written from; ids are never reused, even after compaction; instances given
one node id still write different keys; the store being away leaves reads working; modes and
imports; subject names. Over the in-memory log of test_registry."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import orjson
import pytest
from registry_memory import MemoryLog
from test_registry import FOO_V1, FOO_V2, INT, STRING, json_schema, state

from yangkey.kafka.log import KafkaLog, LogUnavailable, RecordTooLarge
from yangkey.registry.errors import RegistryError
from yangkey.registry.registry import Registry


def code(call: object) -> int:
    assert callable(call)
    with pytest.raises(RegistryError) as caught:
        call()
    return caught.value.code


def schema(name: str) -> dict[str, object]:
    return {**json_schema({name: STRING}), "schemaType": "JSON"}


# ------------------------------------------------------------------ a changed store


def test_a_recreated_topic_is_replayed_and_never_written_from_stale_memory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = MemoryLog()
    old = Registry(log, "A")
    for i in range(3):
        old.register(f"s{i}", schema(f"f{i}"))
    assert old.store.end == 3

    log.recreate()  # deleted and created again: empty, a new topic id
    fresh = Registry(log, "B")
    assert fresh.register("fresh", schema("other")).id == 1
    assert log.next_offset == 1, "the new topic is shorter than what the old one read"

    with caplog.at_level(logging.ERROR, logger="yangkey.registry"):
        found = old.register("later", schema("later"))
    # The old instance replayed the new topic before deciding: the id follows the new
    # topic's, not its memory's (which would have said 4).
    assert (found.id, found.version) == (2, 1)
    assert old.reloads == 1
    assert "store topic was created again" in caplog.text or "went back" in caplog.text
    assert state(old) == state(_replay(log))
    assert old.schema(1) == fresh.schema(1), "one id, one schema, on every instance"
    assert code(lambda: old.schema(3)) == 40403, "the old memory is gone"


def test_a_topic_recreated_to_the_same_length_is_noticed_by_its_id() -> None:
    log = MemoryLog()
    old = Registry(log, "A")
    old.register("a", schema("a"))
    old.register("b", schema("b"))
    log.recreate()
    other = Registry(log, "B")
    other.register("x", schema("x"))
    other.register("y", schema("y"))
    assert log.next_offset == old.store.end == 2, "offsets alone show nothing"

    # A write checks the topic id first: no record decided from the old memory lands.
    assert old.register("z", schema("z")).id == 3
    assert old.reloads == 1
    assert {s for s in old.subjects()} == {"x", "y", "z"}
    assert state(old) == state(_replay(log))


def test_the_watch_notices_a_reset_without_any_request() -> None:
    log = MemoryLog()
    old = Registry(log, "A")
    old.register("a", schema("a"))
    log.recreate()
    Registry(log, "B").register("b", schema("b"))
    stop = old.watch(interval=0.05)
    try:
        deadline = time.monotonic() + 5
        while old.reloads == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop()
    assert old.reloads == 1
    assert old.cached_schema(1) is not None and old.cached_version("b", 1) is not None
    assert old.cached_version("a", 1) is None


def test_records_of_another_registry_appearing_stop_writes_not_reads() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    first = registry.register("a", schema("a"))
    log.append(b'{"keytype":"NOOP","magic":0}', b"{}")  # Confluent's registry writes here
    assert registry.subjects() == ["a"]  # reads go on, from the records that are ours
    with pytest.raises(RegistryError) as refused:
        registry.register("b", schema("b"))
    assert refused.value.code == 50001
    assert "not this registry's" in refused.value.reason
    assert registry.schema(first.id).schema_type == "JSON"


# ------------------------------------------------------------------ ids never reused


def test_a_hard_deleted_id_is_never_given_to_another_schema_even_after_compaction() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    for name in ("a", "b", "c"):
        registry.register(name, schema(name))
    deleted = registry.version("c", 1).definition
    registry.delete_subject("c", permanent=False)
    registry.delete_subject("c", permanent=True)
    log.compact()
    assert not any(b'"c"' in (k or b"") and v for _, k, v in log.records), "c is gone"

    restarted = Registry(log, "B")
    restarted.sync()
    assert code(lambda: restarted.schema(3)) == 40403
    assert restarted.register("d", schema("d")).id == 4, "3 stays retired"
    # The same schema as the deleted one gets its old id back (Karapace, Confluent).
    again = restarted.register("c2", schema("c"))
    assert (again.id, again.definition) == (3, deleted)


def test_an_imported_id_cannot_take_a_retired_one() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    registry.register("a", schema("a"))
    registry.delete_subject("a", permanent=False)
    registry.delete_subject("a", permanent=True)
    log.compact()
    registry = Registry(log, "B")
    registry.set_mode(None, "IMPORT")
    refused = {**schema("other"), "id": 1, "version": 1}
    assert code(lambda: registry.register("x", refused)) == 42205
    assert registry.register("x", {**schema("a"), "id": 1, "version": 1}).id == 1


# ------------------------------------------------------------------ a shared node id


def test_instances_given_one_node_id_write_different_keys_and_compaction_keeps_both() -> None:
    log = MemoryLog()
    a, b = Registry(log, "same"), Registry(log, "same")
    assert a.node != b.node and a.node.startswith("same-")
    a.set_compatibility("s", "NONE")
    a.sync()
    # Both decide version 1 of "s" at the same offset; b's record lands second and loses.
    b.sync()
    log.before_append = lambda: a.register("s", schema("x"))
    b.register("s", schema("y"))
    log.compact()
    replayed = _replay(log)
    assert [replayed.version("s", v).definition for v in (1, 2)] == [
        a.schema(a.version("s", 1).id),
        b.schema(b.version("s", 2).id),
    ], "the winner's record survived compaction, and so did the retry"


# ------------------------------------------------------------------ the store away


def test_reads_come_from_memory_and_writes_fail_at_once_while_the_store_is_away() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    found = registry.register("a", FOO_V1)
    log.down = True
    assert registry.subjects() == ["a"]
    assert registry.versions("a") == [1]
    assert registry.schema(found.id).schema_type == "JSON"
    assert code(lambda: registry.schema(99)) == 40403, "a miss is 'not found', not a 500"
    assert registry.lookup("a", FOO_V1, deleted=False).id == found.id
    started = time.monotonic()
    assert code(lambda: registry.register("a", FOO_V2)) == 50003
    assert code(lambda: registry.register("b", FOO_V2)) == 50003
    assert time.monotonic() - started < 1, "no waiting once the store is known away"
    assert registry.unavailable is not None

    log.down = False
    registry._failed_at = 0  # as if RETRY_AFTER had passed
    assert registry.register("a", FOO_V2).version == 2
    assert registry.unavailable is None


def test_the_logs_errors_reach_clients_as_the_registrys_codes() -> None:
    # KafkaLog raises broker errors (yangkey.kafka.log); the replica maps them to Confluent's
    # codes: a write too large 422/42209, a read that did not finish in time 500/50002.
    log = MemoryLog()
    registry = Registry(log, "A")
    registry.register("a", FOO_V1)

    def too_large(key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        raise RecordTooLarge("the record is too large for _schemas")

    log.append = too_large  # type: ignore[method-assign]
    assert code(lambda: registry.register("b", FOO_V2)) == 42209

    def slow(store: object, high: int, *, timeout: float | None = None) -> None:
        raise LogUnavailable("_schemas read to offset 0, end is 1", timed_out=True)

    log.read_to = slow  # type: ignore[method-assign]
    log.next_offset += 1  # a record the replica has not read yet
    with pytest.raises(RegistryError) as caught:
        registry.sync()
    assert (caught.value.code, caught.value.status) == (50002, 500)


# ------------------------------------------------------------------ modes


def test_read_only_mode_refuses_writes_and_deletes_and_config_changes() -> None:
    registry = Registry(MemoryLog(), "A")
    registry.register("a", FOO_V1)
    assert registry.mode(None, fallback=True) == "READWRITE"
    assert registry.set_mode(None, "readonly") == "READONLY"
    for call in (
        lambda: registry.register("a", FOO_V2),
        lambda: registry.delete_subject("a", permanent=False),
        lambda: registry.delete_version("a", 1, permanent=False),
        lambda: registry.set_compatibility("a", "NONE"),
    ):
        assert code(call) == 42205
    assert registry.lookup("a", FOO_V1, deleted=False).version == 1  # reads still work
    assert registry.set_mode("a", "READWRITE") == "READWRITE"  # a subject may override
    assert registry.register("a", FOO_V2).version == 2
    assert registry.mode("a", fallback=False) == "READWRITE"
    assert code(lambda: registry.mode("b", fallback=False)) == 40409
    assert registry.mode("b", fallback=True) == "READONLY"
    assert registry.delete_mode("a") == "READWRITE"
    assert code(lambda: registry.delete_mode("a")) == 40401
    assert code(lambda: registry.set_mode(None, "SOMETIMES")) == 42204


def test_import_mode_takes_given_ids_and_versions_only() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    registry.register("a", FOO_V1)
    assert code(lambda: registry.set_mode(None, "IMPORT")) == 42205, "subjects exist"
    registry.set_mode("imported", "IMPORT")  # a new subject may import
    assert code(lambda: registry.register("imported", schema("x"))) == 42205, "needs an id"
    assert code(lambda: registry.register("a", {**FOO_V2, "id": 50})) == 42205, "not import"
    got = registry.register("imported", {**schema("x"), "id": 100, "version": 7})
    assert (got.id, got.version) == (100, 7)
    # Incompatible with version 7, but imports are not checked.
    closed = {**json_schema({"y": INT}, additionalProperties=False), "schemaType": "JSON"}
    assert registry.register("imported", {**closed, "id": 101, "version": 8}).version == 8
    other = {**schema("z"), "id": 100, "version": 9}
    assert code(lambda: registry.register("imported", other)) == 42205, "id 100 is taken"
    assert code(lambda: registry.register("imported", {**schema("z"), "id": 0.5})) == 42201
    registry.delete_mode("imported")
    assert registry.register("b", schema("b")).id == 102, "new ids follow imported ones"
    assert state(_replay(log)) == state(registry)


# ------------------------------------------------------------------ subjects and texts


def test_subject_names_are_checked_as_confluent_does() -> None:
    registry = Registry(MemoryLog(), "A")
    for bad in ("a\nb", "nul\x00", "esc\x1b[31m", "del\x7f", "c1\x85", "__GLOBAL", "__EMPTY"):
        assert code(lambda bad=bad: registry.register(bad, FOO_V1)) == 42208, repr(bad)
        assert code(lambda bad=bad: registry.set_compatibility(bad, "NONE")) == 42208
    assert registry.register("../../etc/passwd", FOO_V1).version == 1  # just a name
    assert registry.register("ünïcødé ✓", FOO_V1).version == 1


def test_confluent_message_texts() -> None:
    registry = Registry(MemoryLog(), "A")
    registry.register("s", FOO_V1)

    def reason(call: object) -> str:
        assert callable(call)
        with pytest.raises(RegistryError) as caught:
            call()
        return caught.value.reason

    assert reason(lambda: registry.version("s", 15)) == "Version 15 not found."
    registry.delete_version("s", 1, permanent=False)
    assert reason(lambda: registry.delete_version("s", 1, permanent=False)) == (
        "Subject 's' Version 1 was soft deleted.Set permanent=true to delete permanently"
    )
    registry.register("t", FOO_V1)
    registry.delete_subject("t", permanent=False)
    assert reason(lambda: registry.delete_subject("t", permanent=False)) == (
        "Subject 't' was soft deleted.Set permanent=true to delete permanently"
    )
    # Compatibility against a version of a subject that does not exist: 40402 (Confluent).
    assert code(lambda: registry.check("nobody", "1", FOO_V1)) == 40402
    assert registry.check("nobody", "latest", FOO_V1) == []


def _replay(log: MemoryLog) -> Registry:
    registry = Registry(log, "R")
    registry.sync()
    return registry


def test_the_store_records_modes_and_ids_as_json() -> None:
    log = MemoryLog()
    registry = Registry(log, "A")
    registry.set_mode("m", "READONLY")
    registry.register("gone", FOO_V1)
    registry.delete_subject("gone", permanent=False)
    registry.delete_subject("gone", permanent=True)
    keys = [orjson.loads(k or b"null") for _, k, _ in log.records]
    assert keys[0]["keytype"] == "MODE" and keys[0]["subject"] == "m"
    assert {"keytype": "ID", "id": 1} in keys
    replayed = _replay(log)
    assert replayed.mode("m", fallback=False) == "READONLY"
    assert replayed.store.next_id == 2


def test_while_the_watch_follows_a_store_found_away_no_request_waits_for_it() -> None:
    """Item 7 on a 3-broker cluster: once the store is known away, reads answer from memory
    and writes are refused without touching the log (where each attempt waits its timeout);
    the watch alone tries it, and clears the state when the store is back."""
    log = MemoryLog()
    registry = Registry(log, "A")
    found = registry.register("a", FOO_V1)
    asked: list[str] = []
    end_offset = log.end_offset

    def counted(timeout: float | None = None, *, store_end: int = 0) -> int:
        asked.append(threading.current_thread().name)
        return end_offset(timeout, store_end=store_end)

    log.end_offset = counted  # type: ignore[method-assign]
    stop = registry.watch(interval=0.05)
    try:
        log.down = True
        until(lambda: registry.unavailable is not None)
        registry._failed_at = 0  # past RETRY_AFTER: without the watch, requests would try
        asked.clear()
        assert registry.subjects() == ["a"]
        assert registry.lookup("a", FOO_V1, deleted=False).id == found.id
        assert code(lambda: registry.register("b", FOO_V2)) == 50003
        assert "MainThread" not in asked, "no request asked the store"
        until(lambda: "registry-watch" in asked)  # the watch does

        log.down = False
        until(lambda: registry.unavailable is None)
        assert registry.register("b", FOO_V2).version == 1
    finally:
        stop()


def until(condition: Callable[[], bool], seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.01)
    return True


def test_a_reader_rebuilding_its_clients_leaves_the_writers_producer_alone() -> None:
    """Readers and the writer run in different threads: a reader's rebuild after a failure
    must not close the producer a writer may be waiting on (nor the writer's the consumer)."""
    log = KafkaLog("127.0.0.1:1", "_schemas", overrides={"log_level": 0})
    closed: list[str] = []

    class Producer:
        def purge(self) -> None:
            closed.append("purge")

        def flush(self, timeout: float) -> int:
            return 0

        def close(self) -> None:
            closed.append("close")

    try:
        consumer = log.consumer
        log._producer = Producer()  # type: ignore[assignment]
        log._failed("the store is away")
        log._heal(5)
        assert log.consumer is not consumer, "the reading clients are new"
        assert closed == [], "the producer was left alone"
        log._write_failed("no acknowledgement")
        assert closed == ["purge", "close"] and log._producer is None
        assert not log._broken, "the readers were left alone"
    finally:
        log.close()
