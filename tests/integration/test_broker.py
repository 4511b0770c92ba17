"""The real broker: round trips, topic creation and actual log compaction.

These run against a genuine Kafka (see conftest.kafka_broker) because what matters here
is broker behaviour: Java-compatible partitioning, headers, compaction.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
    murmur2,
)
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    ConfigResource,
    ResourceType,
)

from yangkey.errors import TopicError
from yangkey.kafka.config import TopicSpec, consumer_config, ensure_topics, producer_config
from yangkey.kafka.process import BrokerState, broker_answers

HEADERS: list[tuple[str, str | bytes | None]] = [
    ("schema-id", b"17"),
    ("content-type", b"application/yang-data+json"),
]


def _produce(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    """Produce and fail the test on any delivery error (librdkafka only reports them)."""
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err.str())

    producer = Producer(producer_config(bootstrap))
    for key, value in records:
        producer.produce(topic, value=value, key=key, headers=HEADERS, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(30) == 0, "messages still queued after 30 s"
    assert not errors, errors


def _read_all(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> list[Message]:
    """Every message currently in ``topic``, from the beginning up to the high watermark."""
    consumer = Consumer(consumer_config(bootstrap, f"g-{topic}-{time.monotonic_ns()}"))
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        done = {p for p, end in ends.items() if end == 0}
        messages: list[Message] = []
        deadline = time.monotonic() + timeout
        while len(done) < partitions and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            messages.append(msg)
            partition, offset = msg.partition(), msg.offset()
            assert partition is not None and offset is not None
            if offset + 1 >= ends[partition]:
                done.add(partition)
        assert len(done) == partitions, f"did not reach the end of {topic} within {timeout}s"
        return messages
    finally:
        consumer.close()


def test_broker_is_local_and_answers(kafka_bootstrap: str) -> None:
    assert broker_answers(kafka_bootstrap)
    if not os.environ.get("YANGKEY_TEST_BOOTSTRAP"):
        assert kafka_bootstrap.startswith("127.0.0.1:")


def test_keyed_round_trip_keeps_headers_order_and_java_partitioning(
    kafka_bootstrap: str, topic_name: str
) -> None:
    partitions = 3
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, partitions=partitions)])
    records = [(f"node-{i % 7}".encode(), f"value-{i}".encode()) for i in range(60)]
    _produce(kafka_bootstrap, topic_name, records)

    messages = _read_all(kafka_bootstrap, topic_name, partitions)

    assert sorted((m.key(), m.value()) for m in messages) == sorted(records)
    for msg in messages:
        key = msg.key()
        assert isinstance(key, bytes)
        assert msg.headers() == HEADERS
        # The broker stores what librdkafka's murmur2_random chose; Java would choose the same.
        assert msg.partition() == murmur2(key, partitions)
    per_key: dict[bytes, list[bytes]] = defaultdict(list)
    for msg in sorted(messages, key=lambda m: (m.partition(), m.offset())):
        per_key[msg.key()].append(msg.value())  # type: ignore[index,arg-type]
    for key, values in per_key.items():
        expected = [v for k, v in records if k == key]
        assert values == expected, f"order of {key!r} changed"


def test_ensure_topics_creates_compacted_topic_and_is_idempotent(
    kafka_bootstrap: str, topic_name: str
) -> None:
    spec = TopicSpec(
        topic_name, partitions=2, replication_factor=1, compaction=True, retention_seconds=3600
    )
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})

    first = ensure_topics(admin, [spec])
    second = ensure_topics(kafka_bootstrap, [spec])

    assert first.created == (topic_name,)
    assert second.created == ()
    assert second.existing == (topic_name,)
    resource = ConfigResource(ResourceType.TOPIC, topic_name)
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].value == "3600000"
    assert len(admin.list_topics(timeout=10).topics[topic_name].partitions) == 2


def test_ensure_topics_reports_what_kafka_refused(kafka_bootstrap: str, topic_name: str) -> None:
    with pytest.raises(TopicError) as caught:
        ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, replication_factor=100)])
    assert topic_name in str(caught.value)
    assert "replication" in str(caught.value).lower()


def test_auto_topic_creation_is_off(kafka_bootstrap: str, topic_name: str) -> None:
    if os.environ.get("YANGKEY_TEST_BOOTSTRAP"):
        pytest.skip("an external broker may allow auto creation")
    consumer = Consumer(
        consumer_config(kafka_bootstrap, f"g-{topic_name}", {"allow.auto.create.topics": True})
    )
    try:
        consumer.subscribe([topic_name])  # asks the broker to create it, if it would
        consumer.poll(2.0)
    finally:
        consumer.close()
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    assert topic_name not in admin.list_topics(timeout=10).topics


def test_log_compaction_leaves_the_last_value_per_key(
    kafka_bootstrap: str, topic_name: str
) -> None:
    """The current-state topics rely on this: after compaction, one record per key."""
    ensure_topics(
        kafka_bootstrap,
        [
            TopicSpec(
                topic_name,
                compaction=True,
                configs={
                    "segment.ms": "100",
                    "min.cleanable.dirty.ratio": "0.01",
                    "delete.retention.ms": "100",
                },
            )
        ],
    )
    keys = [f"/if:interfaces/interface[name='eth{i}']".encode() for i in range(5)]
    records = [(key, f"{key.decode()}#{n}".encode()) for n in range(200) for key in keys]
    last = {key: value for key, value in records}
    _produce(kafka_bootstrap, topic_name, records)

    # The cleaner never touches the active segment, and segment.ms only rolls a segment when
    # the next record arrives: keep a trickle of "tick" records flowing so the segment with
    # the final values becomes cleanable.
    producer = Producer(producer_config(kafka_bootstrap))
    started = time.monotonic()
    seen: dict[bytes, list[bytes]] = {}
    try:
        while time.monotonic() - started < 60:
            producer.produce(topic_name, key=b"tick", value=str(time.time()).encode())
            producer.flush(10)
            time.sleep(0.3)
            seen = defaultdict(list)
            for msg in _read_all(kafka_bootstrap, topic_name, 1):
                if msg.key() != b"tick":
                    seen[msg.key()].append(msg.value())  # type: ignore[index,arg-type]
            if all(len(values) == 1 for values in seen.values()) and len(seen) == len(keys):
                break
    finally:
        producer.flush(10)
    elapsed = time.monotonic() - started
    counts = {key: len(values) for key, values in seen.items()}
    assert all(n == 1 for n in counts.values()), f"not compacted after {elapsed:.0f}s: {counts}"
    assert {key: values[0] for key, values in seen.items()} == last
    print(f"compaction observed after {elapsed:.1f}s")


def test_cli_broker_follows_the_user_across_directories(tmp_path: Path) -> None:
    """``yangkey kafka start`` records its broker per user: ``status`` and ``stop`` run from
    other directories find it, and a second ``stop`` has nothing to stop (exit 1). Here a
    cluster of two (``--brokers 2``; one broker: test_readme_walkthrough): ``status`` names a
    node that is down, ``stop`` stops the others."""
    xdg = tmp_path / "xdg"
    env = {**os.environ, "XDG_STATE_HOME": str(xdg)}
    dirs = {name: tmp_path / name for name in ("a", "b", "c")}
    for path in dirs.values():
        path.mkdir()
    cli = [sys.executable, "-m", "yangkey.kafka.commands"]

    def run(*args: str, cwd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args],
            cwd=dirs[cwd],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    started = run("start", "--brokers", "2", cwd="a")
    state_dir = xdg / "yangkey" / "kafka"
    state = BrokerState.read(state_dir)
    try:
        assert started.returncode == 0, started.stderr
        bootstrap = started.stdout.strip()
        assert bootstrap.startswith("127.0.0.1:") and bootstrap.count(",") == 1
        assert state is not None and state.alive() and state.bootstrap == bootstrap
        assert [node.bootstrap for node in state.members()] == bootstrap.split(",")
        assert broker_answers(bootstrap, brokers=2)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        resource = ConfigResource(ResourceType.BROKER, "1")
        configs = admin.describe_configs([resource])[resource].result(timeout=30)
        assert configs["default.replication.factor"].value == "2"
        assert list(dirs["a"].iterdir()) == []  # nothing recorded in the working directory

        # a second start finds the running cluster: its address again, exit 0, so
        # BOOTSTRAP=$(yangkey kafka start) works every time; another size is an error
        again = run("start", cwd="b")
        assert (again.returncode, again.stdout) == (0, bootstrap + "\n"), again.stderr
        assert "already running" in again.stderr
        other = run("start", "--brokers", "3", cwd="b")
        assert other.returncode == 1 and other.stdout == ""
        assert other.stderr.startswith("error: kafka start: a broker is already running")
        assert BrokerState.read(state_dir) == state

        address = run("status", "--address", cwd="b")
        assert (address.returncode, address.stdout) == (0, bootstrap + "\n"), address.stderr
        listing = run("status", "--json", cwd="c")
        assert listing.returncode == 0, listing.stderr
        [entry] = json.loads(listing.stdout)
        assert entry["answers"] is True and entry["state_dir"] == str(state_dir.resolve())

        second = state.members()[1]
        os.kill(second.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while second.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        degraded = run("status", cwd="b")
        assert degraded.returncode == 1, degraded.stderr
        assert f"node 2 is down: pid {second.pid} has exited" in degraded.stderr
        assert "1 of 2 brokers" in degraded.stderr
    finally:
        stopped = run("stop", cwd="c")
    assert stopped.returncode == 0, stopped.stderr
    assert not state.alive()
    assert not (state_dir / "broker.json").exists()
    assert not Path(state.data_dir).exists()
    assert run("status", cwd="b").returncode == 1
    for args in (("stop",), ("status", "--bootstrap")):
        nothing = run(*args, cwd="a")
        assert nothing.returncode == 1
        assert nothing.stderr.startswith("error: kafka "), nothing.stderr
        assert len(nothing.stderr.splitlines()) == 1, nothing.stderr


def test_internal_topics_take_the_replication_the_subscriptions_file_gives(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """``internal_topics`` reaches the registry's store (``registry serve -s FILE``) and the
    shared catalog; a topic nobody set anything for keeps the broker's min.insync.replicas."""
    from confluent_kafka.admin import ConfigSource  # noqa: PLC0415

    from yangkey.config import load_subscriptions_file  # noqa: PLC0415
    from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415

    subscriptions = tmp_path / "subscriptions.yaml"
    subscriptions.write_text(
        "defaults: {min_insync_replicas: 1}\n"
        "internal_topics:\n  schema_store: {replication_factor: 1}\n",
        encoding="utf-8",
    )
    suffix = str(time.monotonic_ns())
    store, catalog, plain = f"_schemas-{suffix}", f"_catalog-{suffix}", f"_plain-{suffix}"
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "registry",
            "serve",
            "-s",
            str(subscriptions),
            "--bootstrap",
            kafka_bootstrap,
            "--port",
            "0",
            "--store-topic",
            store,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        assert serve.stdout.readline().startswith("http://127.0.0.1:"), serve.stderr
    finally:
        serve.terminate()
        serve.wait(30)
    internal = load_subscriptions_file(subscriptions).internal("catalog")
    CatalogTopic(kafka_bootstrap, catalog, replication=internal).close()
    CatalogTopic(kafka_bootstrap, plain).close()

    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in (store, catalog, plain)]
    found = {
        resource.name: future.result(timeout=30)["min.insync.replicas"]
        for resource, future in admin.describe_configs(resources).items()
    }
    topic_level = ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert found[store].source == found[catalog].source == topic_level, "set on the topic"
    assert found[store].value == found[catalog].value == "1"
    assert found[plain].source != topic_level, "the broker's"
