"""The schema registry on the real broker, driven by confluent_kafka's SchemaRegistryClient:
the API, racing instances, restart, a late follower, compaction and tombstones, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from yangkey.kafka.config import TopicSpec, ensure_topics
from yangkey.kafka.log import KafkaLog, ensure_log_topic
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.registry import Registry


@dataclass
class Instance:
    registry: Registry
    server: RegistryHTTPServer
    log: KafkaLog

    @property
    def client(self) -> SchemaRegistryClient:
        # A new client each time: the client caches, and these tests ask the server.
        return SchemaRegistryClient({"url": self.server.url})

    def stop(self) -> None:
        self.server.stop()
        self.log.close()


@pytest.fixture
def start(kafka_bootstrap: str) -> Iterator[Callable[[str, str], Instance]]:
    running: list[Instance] = []

    def start_instance(topic: str, node: str) -> Instance:
        ensure_log_topic(kafka_bootstrap, topic)
        log = KafkaLog(kafka_bootstrap, topic)
        registry = Registry(log, node)
        registry.sync()
        server = RegistryHTTPServer(registry, "127.0.0.1", 0)
        server.start()
        instance = Instance(registry, server, log)
        running.append(instance)
        return instance

    yield start_instance
    for instance in running:
        if instance.server.socket.fileno() != -1:
            instance.stop()


def json_schema(*members: str, closed: bool = False) -> Schema:
    body: dict[str, object] = {
        "type": "object",
        "properties": {m: {"type": "string"} for m in members},
    }
    if closed:
        body["additionalProperties"] = False
    return Schema(json.dumps(body), "JSON")


def sr_code(call: Callable[[], object]) -> int:
    with pytest.raises(SchemaRegistryError) as caught:
        call()
    return int(caught.value.error_code)


def view(registry: Registry) -> tuple[object, ...]:
    registry.sync()
    store = registry.store
    return (
        {s: {v: (x.id, x.deleted) for v, x in vs.items()} for s, vs in store.subjects.items()},
        dict(store.schemas),
        dict(store.config),
    )


def test_the_confluent_client_against_the_registry(
    start: Callable[[str, str], Instance], topic_name: str
) -> None:
    client = start(topic_name, "A").client
    v1 = client.register_schema("if-value", json_schema("name", closed=True))
    assert client.register_schema("if-value", json_schema("name", closed=True)) == v1
    v2 = client.register_schema("if-value", json_schema("name", "mtu", closed=True))
    assert v2 != v1
    assert client.register_schema("other-value", json_schema("name", closed=True)) == v1
    assert client.get_subjects() == ["if-value", "other-value"]
    assert client.get_versions("if-value") == [1, 2]
    latest = client.get_latest_version("if-value")
    assert (latest.version, latest.schema_id) == (2, v2)
    assert json.loads(client.get_schema(v1).schema_str) == json.loads(
        json_schema("name", closed=True).schema_str
    )
    assert client.lookup_schema("if-value", json_schema("name", closed=True)).version == 1
    assert sorted((v.subject, v.version) for v in client.get_schema_versions(v1)) == [
        ("if-value", 1),
        ("other-value", 1),
    ]
    assert client.get_compatibility() == "BACKWARD"
    client.set_compatibility("if-value", "FULL")
    assert client.get_compatibility("if-value") == "FULL"
    assert client.test_compatibility("if-value", json_schema("name", "mtu", closed=True)) is True
    # FULL: a closed reader of the old version refuses the new member x.
    grown = json_schema("name", "mtu", "x", closed=True)
    assert client.test_compatibility("if-value", grown) is False

    assert sr_code(lambda: client.get_version("missing", 1)) == 40401
    assert sr_code(lambda: client.get_version("if-value", 9)) == 40402
    assert sr_code(lambda: client.get_schema(999)) == 40403
    assert sr_code(lambda: client.lookup_schema("if-value", json_schema("zzz"))) == 40403
    assert sr_code(lambda: client.register_schema("x", Schema("{nope", "JSON"))) == 42201
    closed = client.register_schema("closed-value", json_schema("a", "b", closed=True))
    assert closed > v2
    drop_b = json_schema("a", closed=True)
    assert sr_code(lambda: client.register_schema("closed-value", drop_b)) == 409

    assert client.delete_version("if-value", 1) == 1
    assert client.get_versions("if-value") == [2]
    assert sr_code(lambda: client.delete_subject("if-value", permanent=True)) == 40405
    assert client.delete_subject("if-value") == [2]
    assert "if-value" not in client.get_subjects()
    assert "if-value" in client.get_subjects(deleted=True)
    assert client.delete_subject("if-value", permanent=True) == [1, 2]
    assert "if-value" not in client.get_subjects(deleted=True)
    assert sr_code(lambda: client.get_version("if-value", 2)) == 40401
    # The id survives while another subject uses the schema.
    assert client.get_schema(v1).schema_type == "JSON"


def test_two_instances_racing_on_one_subject_agree(
    start: Callable[[str, str], Instance], topic_name: str
) -> None:
    a, b = start(topic_name, "A"), start(topic_name, "B")
    a.client.set_compatibility("raced-value", "NONE")
    schemas = [json_schema(f"m{i}") for i in range(16)]
    barrier = threading.Barrier(8)

    def register(index: int) -> tuple[int, int]:
        instance = (a, b)[index % 2]
        client = instance.client
        if index < 8:
            barrier.wait()
        # Every schema twice (once through each instance): both must get one answer.
        found = client.register_schema_full_response("raced-value", schemas[index % 16])
        return index % 16, int(found.schema_id or 0)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(register, range(32)))

    ids: dict[int, set[int]] = {}
    for schema_index, schema_id in results:
        ids.setdefault(schema_index, set()).add(schema_id)
    assert all(len(found) == 1 for found in ids.values()), ids
    assert len({next(iter(found)) for found in ids.values()}) == 16, "one id per schema"
    assert a.client.get_versions("raced-value") == list(range(1, 17)), "no gap, no duplicate"
    assert view(a.registry) == view(b.registry)
    print(f"conflicts retried: A {a.registry.conflicts}, B {b.registry.conflicts}")


def test_a_writer_that_loses_the_offset_retries_and_both_agree(
    start: Callable[[str, str], Instance], topic_name: str, kafka_bootstrap: str
) -> None:
    """Forced: B writes between A's read of the end offset and A's append."""
    a, b = start(topic_name, "A"), start(topic_name, "B")
    append = a.log.append
    raced: list[int] = []

    def racing_append(key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        if not raced:
            raced.append(b.client.register_schema("other-value", json_schema("b")))
        return append(key, value, store_end=store_end)

    a.log.append = racing_append  # type: ignore[method-assign]
    mine = a.client.register_schema("mine-value", json_schema("a"))
    assert a.registry.conflicts == 1
    assert raced == [1] and mine == 2, "A re-allocated its id after B took id 1"
    keys = [json.loads(k or b"{}") for k, _ in raw_keys(kafka_bootstrap, topic_name)]
    # A's first record is in the topic at the wrong offset; every reader ignores it.
    assert [(k["node"], k["subject"]) for k in keys] == [
        (b.registry.node, "other-value"),
        (a.registry.node, "mine-value"),
        (a.registry.node, "mine-value"),
    ]
    assert keys[1]["seq"] == keys[0]["seq"] == 0 and keys[2]["seq"] == 2
    assert view(a.registry) == view(b.registry)
    assert b.client.get_version("mine-value", 1).schema_id == 2


def test_restart_rebuilds_memory_from_the_topic(
    start: Callable[[str, str], Instance], topic_name: str
) -> None:
    first = start(topic_name, "A")
    ids = [first.client.register_schema(f"s{i}-value", json_schema(f"f{i}")) for i in range(5)]
    first.client.delete_subject("s0-value")
    first.client.set_compatibility(None, "FORWARD")
    before = view(first.registry)
    first.stop()

    again = start(topic_name, "A")
    assert view(again.registry) == before
    client = again.client
    assert client.get_subjects() == [f"s{i}-value" for i in range(1, 5)]
    assert client.get_compatibility() == "FORWARD"
    assert [client.get_schema(i).schema_type for i in ids] == ["JSON"] * 5
    # Ids continue after the replayed ones.
    assert client.register_schema("s9-value", json_schema("f9")) == max(ids) + 1


def test_a_follower_reads_the_topic_on_a_miss_and_a_late_one_replays(
    start: Callable[[str, str], Instance], topic_name: str
) -> None:
    leader = start(topic_name, "A")
    follower = start(topic_name, "B")
    schema_id = leader.client.register_schema("x-value", json_schema("x"))
    assert schema_id not in follower.registry.store.schemas, "the follower has not read it yet"
    assert follower.client.get_schema(schema_id).schema_type == "JSON"  # fall-back read
    assert follower.client.get_version("x-value", 1).schema_id == schema_id

    for i in range(20):
        leader.client.register_schema(f"late{i}-value", json_schema(f"l{i}"))
    late = start(topic_name, "C")
    assert view(late.registry) == view(leader.registry)
    assert len(late.client.get_subjects()) == 21


def raw_keys(bootstrap: str, topic: str) -> list[tuple[bytes | None, bool]]:
    """Every record in the topic now: (key, is_tombstone)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "t", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    found: list[tuple[bytes | None, bool]] = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                break
            found.append((message.key(), message.value() is None))
    finally:
        consumer.close()
    return found


def test_compaction_removes_permanently_deleted_subjects_and_replay_agrees(
    start: Callable[[str, str], Instance], topic_name: str, kafka_bootstrap: str
) -> None:
    fast_cleaning = {
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "100",
    }
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, compaction=True, configs=fast_cleaning)])
    writer = start(topic_name, "A")
    client = writer.client
    kept = client.register_schema("kept-value", json_schema("k"))
    client.register_schema("gone-value", json_schema("g1"))
    client.set_compatibility("gone-value", "NONE")
    client.register_schema("gone-value", json_schema("g2", closed=True))
    client.delete_subject("gone-value")
    client.delete_subject("gone-value", permanent=True)

    # The cleaner skips the active segment: keep valid writes flowing so segments roll.
    started = time.monotonic()
    levels = ["FULL", "NONE"]
    gone_left = -1
    while time.monotonic() - started < 90:
        client.set_compatibility("tick-value", levels[int(time.monotonic() * 3) % 2])
        records = raw_keys(kafka_bootstrap, topic_name)
        gone_left = sum(1 for k, _ in records if k is not None and b'"gone-value"' in k)
        if gone_left == 0:
            break
        time.sleep(0.5)
    assert gone_left == 0, f"compaction left {gone_left} records of the deleted subject"
    print(f"tombstoned subject compacted away after {time.monotonic() - started:.1f}s")

    replayed = start(topic_name, "B")
    assert view(replayed.registry) == view(writer.registry)
    assert replayed.client.get_subjects(deleted=True) == ["kept-value"]
    assert replayed.client.get_schema(kept).schema_type == "JSON"


def serve(bootstrap: str, topic: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "registry",
            "serve",
            "--bootstrap",
            bootstrap,
            "--port",
            "0",
            "--store-topic",
            topic,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
    return process, url


def test_the_cli_server_stops_cleanly_and_survives_a_kill(
    kafka_bootstrap: str, topic_name: str
) -> None:
    process, url = serve(kafka_bootstrap, topic_name)
    try:
        first = SchemaRegistryClient({"url": url}).register_schema(
            "cli-value", json_schema("c", closed=True)
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.communicate()

    process, url = serve(kafka_bootstrap, topic_name)
    try:
        client = SchemaRegistryClient({"url": url})
        assert client.get_schema(first).schema_type == "JSON"
        second = client.register_schema("cli-value", json_schema("c", "d", closed=True))
        process.kill()  # no clean shutdown at all
        process.wait(timeout=30)
    finally:
        process.kill()
        process.communicate()

    process, url = serve(kafka_bootstrap, topic_name)
    try:
        client = SchemaRegistryClient({"url": url})
        assert client.get_versions("cli-value") == [1, 2]
        assert client.get_latest_version("cli-value").schema_id == second
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.communicate()


def test_a_topic_of_another_registry_is_refused(kafka_bootstrap: str, topic_name: str) -> None:
    ensure_log_topic(kafka_bootstrap, topic_name)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic_name, b"{}", b'{"keytype":"NOOP","magic":0}')  # Confluent's
    producer.flush(10)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "registry",
            "serve",
            "--bootstrap",
            kafka_bootstrap,
            "--port",
            "0",
            "--topic",
            topic_name,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: topic {topic_name}: holds 1 rec")
    assert result.stdout == ""


def test_an_unreachable_broker_is_one_error_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "registry", "serve", "--bootstrap", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --bootstrap 127.0.0.1:1"), lines
    assert result.stdout == ""
