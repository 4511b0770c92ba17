"""The Spark producer job against the real broker (conftest.kafka_broker) and a local Spark.

Every run uses its own organisation prefix, so its derived topics and dead-letter topic are
its own. The reference for "what should be in Kafka" is the core's MessageBuilder run in this
process over the same records: the job must produce exactly that multiset, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark
import pytest
import yaml
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition, murmur2
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    ResourceType,
)
from factories import unique_name
from pyspark.sql import SparkSession

from yangkey.demo.sample import generate, iter_jsonl
from yangkey.errors import BrokerError, YangkeyError
from yangkey.kafka.broker import free_port
from yangkey.kafka.config import TopicSpec, ensure_topics, producer_config
from yangkey.messages import HEADER_CONTENT_TYPE, HEADER_ERROR, HEADER_ERROR_KIND, HEADER_SOURCE
from yangkey.spark.config import JobConfig
from yangkey.spark.job import run
from yangkey.spark.planning import prepare
from yangkey.spark.progress import Summary
from yangkey.spark.source.kafka_source import resolve_offsets
from yangkey.spark.source.splitting import split_records
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
PARTITIONS = 3
Triple = tuple[str, bytes | None, bytes]


# --------------------------------------------------------------------------- helpers


@dataclass
class Setup:
    prefix: str
    subscriptions: Path
    dead_letter: str
    topics: list[str]
    """Every derived topic of the catalog, sorted."""

    def config(self, bootstrap: str, inputs: Iterable[str], **changes: Any) -> JobConfig:
        fields: dict[str, object] = {
            "subscriptions": str(self.subscriptions),
            "inputs": tuple(inputs),
            "bootstrap": bootstrap,
            "create_topics": True,
            "producer_overrides": {"linger.ms": 5},
        }
        return JobConfig.of(**{**fields, **changes})


def make_setup(directory: Path, partitions: int = PARTITIONS) -> Setup:
    prefix = unique_name("yk")
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    document["organisation_prefix"] = prefix
    document["dead_letter_topic"] = f"{prefix}-dead-letter"
    document["defaults"]["partitions"] = partitions
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "subscriptions.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    catalog = BuilderSpec.from_file(path).catalog()
    return Setup(prefix, path, catalog.dead_letter_topic, sorted(t.name for t in catalog.topics))


def reference(
    setup: Setup, records: Iterable[tuple[bytes, str]], default_node: str | None = None
) -> tuple[Counter[Triple], Tally]:
    """What the job must produce: the core's answer, computed here in one process."""
    tally = Tally()
    builder = builder_for(BuilderSpec.from_file(setup.subscriptions, default_node=default_node))
    produced: Counter[Triple] = Counter(
        (m.topic, m.key, m.value) for m in outgoing(records, builder, setup.dead_letter, tally)
    )
    return produced, tally


def consume(
    bootstrap: str, topics: Iterable[str], *, committed: bool = True, idle: float = 2.0
) -> list[Message]:
    """Everything in ``topics`` from the beginning, read_committed unless told otherwise: read
    until every partition has reached its end, then until ``idle`` seconds bring nothing new.

    The idle clock starts at the end of the log, not at the first poll: under load the first
    fetch alone can take longer than ``idle``, and a reader that gave up then saw nothing.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("test-"),
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed" if committed else "read_uncommitted",
        }
    )
    names = list(topics)
    metadata = consumer.list_topics(timeout=10)
    assignment = [
        TopicPartition(name, p, 0)
        for name in names
        for p in metadata.topics[name].partitions
    ]
    consumer.assign(assignment)
    pending = {(tp.topic, tp.partition) for tp in assignment}
    messages: list[Message] = []
    deadline = time.monotonic() + 60
    last = time.monotonic()
    try:
        while (pending and time.monotonic() < deadline) or time.monotonic() - last < idle:
            batch = consumer.consume(500, timeout=0.5)
            for message in batch:
                error = message.error()
                if error is None:
                    messages.append(message)
                elif error.code() == KafkaError._PARTITION_EOF:
                    pending.discard((message.topic(), message.partition()))
            if batch or pending:
                last = time.monotonic()
    finally:
        consumer.close()
    return messages


def triples(messages: Iterable[Message]) -> Counter[Triple]:
    return Counter((str(m.topic()), m.key(), m.value() or b"") for m in messages)


def headers_of(message: Message) -> dict[str, bytes]:
    return {name: value or b"" for name, value in (message.headers() or [])}


def sample_records(nodes: int = 4) -> list[bytes]:
    return list(generate(nodes=nodes, interfaces=4, rounds=2, seed=11).records)


def write_jsonl(path: Path, records: Iterable[bytes]) -> Path:
    path.write_bytes(b"".join(iter_jsonl(list(records))))
    return path


# --------------------------------------------------------------------------- one batch run


@dataclass
class FilesRun:
    setup: Setup
    input: Path
    summary: Summary
    expected: Counter[Triple]
    expected_tally: Tally
    messages: list[Message]


@pytest.fixture(scope="module")
def files_run(
    kafka_broker: Any, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> FilesRun:
    directory = tmp_path_factory.mktemp("files-run")
    setup = make_setup(directory)
    data = write_jsonl(directory / "notifications.jsonl", sample_records())
    expected, tally = reference(setup, split_records(data.read_bytes(), str(data)))
    config = setup.config(kafka_broker.bootstrap, [str(data)], split_size=8192)
    summary = run(config, spark)
    messages = consume(kafka_broker.bootstrap, [*setup.topics, setup.dead_letter])
    return FilesRun(setup, data, summary, expected, tally, messages)


def test_keyed_messages_land_in_derived_topics_exactly_once(files_run: FilesRun) -> None:
    got = triples(files_run.messages)
    assert files_run.summary.partitions > 1, "the input should be split over several tasks"
    assert got == files_run.expected
    keyed = [t for t in got if t[0] != files_run.setup.dead_letter]
    assert {t[0] for t in keyed} == set(files_run.setup.topics)
    assert all(t[1] is not None and t[1].count(b"\n") >= 2 for t in keyed)


def test_summary_counts_match_what_kafka_holds(files_run: FilesRun) -> None:
    summary, tally = files_run.summary, files_run.expected_tally
    assert summary.tally.records == tally.records > 50
    assert summary.tally.produced == tally.produced
    assert summary.tally.rejected == tally.rejected
    assert summary.tally.rejections >= 1
    assert summary.skipped == 0
    in_kafka = Counter(str(m.topic()) for m in files_run.messages)
    assert in_kafka == summary.tally.produced + Counter(
        {files_run.setup.dead_letter: summary.tally.rejections}
    )


def test_same_key_same_partition_as_java_murmur2(files_run: FilesRun) -> None:
    checked = 0
    partitions_by_key: dict[tuple[str, bytes], set[int]] = defaultdict(set)
    for message in files_run.messages:
        key = message.key()
        if key is None:
            continue
        assert message.partition() == murmur2(key, PARTITIONS), key
        partitions_by_key[(str(message.topic()), key)].add(int(message.partition() or 0))
        checked += 1
    assert checked > 50
    assert all(len(ps) == 1 for ps in partitions_by_key.values())
    assert any(n > 1 for n in Counter(m.key() for m in files_run.messages if m.key()).values())


def test_headers_carry_content_type_and_identity(files_run: FilesRun) -> None:
    keyed = [m for m in files_run.messages if m.key() is not None]
    types = {headers_of(m)[HEADER_CONTENT_TYPE] for m in keyed}
    assert types == {b"application/yang-data+json", b"application/yang-data+xml"}
    assert all(b"yangkey-sequence-number" in {n.encode() for n in headers_of(m)} for m in keyed)


def test_dead_letter_topic_receives_bad_input_with_reason_headers(files_run: FilesRun) -> None:
    dead = [m for m in files_run.messages if m.topic() == files_run.setup.dead_letter]
    assert len(dead) == files_run.summary.tally.rejections
    lines = files_run.input.read_bytes().split(b"\n")
    for message in dead:
        headers = headers_of(message)
        assert message.key() is None
        assert headers[HEADER_ERROR]
        assert headers[HEADER_ERROR_KIND] in {b"input", b"notification", b"no-match", b"schema"}
        path, _, line = headers[HEADER_SOURCE].decode().rpartition(":")
        assert path == str(files_run.input)
        assert lines[int(line) - 1] == message.value(), "raw bytes and position must agree"


def test_create_topics_compacts_current_state_topics(
    files_run: FilesRun, kafka_bootstrap: str
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    names = [*files_run.setup.topics, files_run.setup.dead_letter]
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in names]
    policies = {
        resource.name: future.result(timeout=20)["cleanup.policy"].value
        for resource, future in admin.describe_configs(resources).items()
    }
    for name, policy in policies.items():
        expected = "compact" if "-current-state-" in name else "delete"
        assert policy == expected, name
    metadata = admin.list_topics(timeout=10)
    assert all(len(metadata.topics[name].partitions) == PARTITIONS for name in names)


def test_directory_of_xml_documents_and_json_lines(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path / "subs")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    pretty = (
        b'<?xml version="1.0"?>\n'
        b'<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0">\n'
        b"  <eventTime>2026-11-20T10:00:00Z</eventTime>\n"
        b'  <push-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push">\n'
        b"    <id>1042</id>\n"
        b"    <datastore-contents>\n"
        b'      <interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">\n'
        b"        <interface><name>eth9</name><oper-status>up</oper-status></interface>\n"
        b"      </interfaces>\n"
        b"    </datastore-contents>\n"
        b"  </push-update>\n"
        b"</notification>\n"
    )
    (inbox / "one.xml").write_bytes(pretty)
    write_jsonl(inbox / "more.jsonl", sample_records(1))
    summary = run(setup.config(kafka_bootstrap, [str(inbox)], default_node="pe9"), spark)
    records = [
        *split_records((inbox / "more.jsonl").read_bytes(), "more"),
        (pretty, "one.xml"),
    ]
    expected, tally = reference(setup, records, default_node="pe9")
    assert summary.tally.records == tally.records
    got = triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter]))
    assert got == expected
    assert any(value == pretty and key is not None and key.startswith(b"pe9\n1042\n")
               for _, key, value in got)


# --------------------------------------------------------------------------- faults


def test_task_retry_makes_no_duplicates_visible(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records())
    expected, _ = reference(setup, split_records(data.read_bytes(), str(data)))
    config = setup.config(kafka_bootstrap, [str(data)], split_size=8192, fail_after=5)
    summary = run(config, spark)
    topics = [*setup.topics, setup.dead_letter]
    committed = consume(kafka_bootstrap, topics)
    everything = consume(kafka_bootstrap, topics, committed=False)
    assert triples(committed) == expected, "each message exactly once for read_committed"
    # The crashed first attempts really wrote: uncommitted readers see their leftovers.
    assert len(everything) >= len(committed) + 5 * summary.partitions
    assert summary.tally.messages + summary.tally.rejections == sum(expected.values())

    # The same run id again: every partition finds its commit marker and produces nothing.
    config = config.but(fail_after=None, run_id=summary.run_id)
    again = run(config, spark)
    assert again.skipped == again.partitions == summary.partitions
    assert again.tally == summary.tally
    assert triples(consume(kafka_bootstrap, topics)) == expected


def test_unreachable_broker_fails_before_spark_starts(tmp_path: Path) -> None:
    setup = make_setup(tmp_path)
    dead = f"127.0.0.1:{free_port()}"
    config = setup.config(dead, [str(tmp_path)], create_topics=False)
    with pytest.raises(BrokerError, match="cannot reach the broker"):
        prepare(config)


@pytest.mark.parametrize(
    ("delivery", "message"),
    [
        ("exactly-once", "cannot initialise transactions"),
        ("at-least-once", "could not be delivered|delivery timed out"),
    ],
)
def test_broker_outage_longer_than_delivery_timeout_fails_the_job(
    spark: SparkSession, tmp_path: Path, delivery: str, message: str
) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(1))
    dead = f"127.0.0.1:{free_port()}"
    config = setup.config(
        dead,
        [str(data)],
        create_topics=False,
        preflight=False,  # get past the driver's check: the tasks must fail on their own
        delivery=delivery,
        producer_overrides={"message.timeout.ms": 2000, "transaction.timeout.ms": 2000,
                            "socket.timeout.ms": 1000, "log_level": 0},
    )
    started = time.monotonic()
    with pytest.raises(YangkeyError, match=message) as caught:
        run(config, spark)
    assert isinstance(caught.value, BrokerError)
    assert dead in caught.value.message()
    assert caught.value.source is not None and dead in caught.value.source
    assert "(attempt 1," in caught.value.message(), "Spark retried the task before giving up"
    assert time.monotonic() - started < 60


# --------------------------------------------------------------------------- compaction


def interface_updates(nodes: int, interfaces: int, status: str) -> list[bytes]:
    return [
        json.dumps(
            {
                "ietf-yp-notification:envelope": {
                    "event-time": "2026-11-20T10:00:00Z",
                    "hostname": f"r{n}",
                    "sequence-number": 1 if status == "up" else 2,
                    "contents": {
                        "ietf-yang-push:push-update": {
                            "id": 1042,
                            "datastore-contents": {
                                "ietf-interfaces:interfaces": {
                                    "interface": [{"name": f"eth{i}", "oper-status": status}]
                                }
                            },
                        }
                    },
                }
            }
        ).encode()
        for n in range(nodes)
        for i in range(interfaces)
    ]


def test_compacted_current_state_topic_keeps_the_last_value_per_key(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    topic = next(t for t in setup.topics if t.endswith("current-state-if-interfaces-interface"))
    fast_compaction = {"segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
                       "delete.retention.ms": "100"}
    for status in ("up", "down"):
        data = write_jsonl(tmp_path / f"{status}.jsonl", interface_updates(3, 4, status))
        summary = run(
            setup.config(kafka_bootstrap, [str(data)], topic_configs=fast_compaction), spark
        )
        # Counted from the run, not read back: the cleaner may compact before any read.
        assert summary.tally.produced[topic] == 12, "each run writes the 12 keys"
        time.sleep(0.2)

    producer = Producer(producer_config(kafka_bootstrap))
    started = time.monotonic()
    seen: dict[bytes, list[bytes]] = {}
    while time.monotonic() - started < 90:
        # segment.ms rolls a segment only when a record arrives: keep a trickle going.
        producer.produce(topic, key=b"tick", value=b"")
        producer.flush(10)
        time.sleep(0.5)
        seen = defaultdict(list)
        for message in consume(kafka_bootstrap, [topic], idle=0.7):
            key = message.key()
            if key is not None and key != b"tick":
                seen[key].append(message.value() or b"")
        if len(seen) == 12 and all(len(values) == 1 for values in seen.values()):
            break
    counts = {key: len(values) for key, values in seen.items()}
    assert len(counts) == 12 and all(n == 1 for n in counts.values()), counts
    assert all(b'"oper-status": "down"' in values[0] for values in seen.values())


# --------------------------------------------------------------------------- Kafka source


def append_raw(bootstrap: str, topic: str, records: list[bytes], partitions: int = 3) -> None:
    producer = Producer(producer_config(bootstrap))
    for index, raw in enumerate(records):
        producer.produce(topic, value=raw, partition=index % partitions)
    assert producer.flush(30) == 0


def fill_raw_topic(bootstrap: str, topic: str, records: list[bytes], partitions: int = 3) -> None:
    ensure_topics(bootstrap, [TopicSpec(topic, partitions=partitions)])
    append_raw(bootstrap, topic, records, partitions)


def test_raw_kafka_topic_batch_read(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    records = sample_records()
    fill_raw_topic(kafka_bootstrap, topic_name, records)
    expected, tally = reference(setup, ((raw, "?") for raw in records))
    config = setup.config(kafka_bootstrap, [f"kafka://{topic_name}"], max_records_per_task=10)
    summary = run(config, spark)
    assert summary.partitions >= len(records) // 10
    assert summary.tally == tally
    messages = consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])
    assert triples(messages) == expected
    sources = {
        headers_of(m)[HEADER_SOURCE].decode()
        for m in messages
        if m.topic() == setup.dead_letter
    }
    assert sources and all(s.startswith(f"kafka://{topic_name}@") for s in sources)

    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "t"})
    try:
        ends = resolve_offsets(consumer, topic_name, [0, 1, 2], ("timestamp", 2**50),
                               default_high=True)
        starts = resolve_offsets(consumer, topic_name, [0, 1, 2], ("timestamp", 0),
                                 default_high=False)
    finally:
        consumer.close()
    assert sum(ends.values()) == len(records) and sum(starts.values()) == 0


def test_raw_kafka_topic_stream_with_checkpoint(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    first, second = sample_records(2), sample_records(3)[:20]
    fill_raw_topic(kafka_bootstrap, topic_name, first)
    checkpoint = tmp_path / "checkpoint"
    config = setup.config(
        kafka_bootstrap, [f"kafka://{topic_name}"], stream=True, available_now=True,
        checkpoint=str(checkpoint),
    )
    batches: list[int] = []
    summary = run(config, spark, on_batch=lambda batch_id, part: batches.append(batch_id))
    assert summary.tally.records == len(first)
    assert batches == [0]

    # A driver that died after the Kafka commits but before Spark recorded the batch: Spark
    # replays batch 0 over the same offsets, and every partition finds its commit marker.
    for name in ("0", ".0.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    replayed = run(config, spark, on_batch=lambda batch_id, part: batches.append(batch_id))
    assert batches == [0, 0]
    assert replayed.skipped == replayed.partitions == summary.partitions
    assert replayed.tally == summary.tally

    producer = Producer(producer_config(kafka_bootstrap))
    for raw in second:
        producer.produce(topic_name, value=raw, partition=0)
    assert producer.flush(30) == 0
    again = run(config, spark)
    assert again.run_id == summary.run_id, "the run id follows the checkpoint"
    assert again.tally.records == len(second), "only the new records"

    expected, _ = reference(setup, ((raw, "?") for raw in [*first, *second]))
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected


def test_file_directory_stream(kafka_bootstrap: str, spark: SparkSession, tmp_path: Path) -> None:
    setup = make_setup(tmp_path / "s")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    records = sample_records(1)
    write_jsonl(inbox / "a.jsonl", records)
    config = setup.config(
        kafka_bootstrap, [str(inbox)], stream=True, available_now=True,
        checkpoint=str(tmp_path / "checkpoint"),
    )
    summary = run(config, spark)
    expected, tally = reference(
        setup, split_records((inbox / "a.jsonl").read_bytes(), str(inbox / "a.jsonl"))
    )
    assert summary.tally == tally
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected


# --------------------------------------------------------------------------- entry points


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


def test_cli_produce_end_to_end(kafka_bootstrap: str, tmp_path: Path) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(1))
    result = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions",
         str(setup.subscriptions), "--input", str(data), "--bootstrap", kafka_bootstrap,
         "--create-topics", "--master", "local[1]", "--json"],
        capture_output=True, text=True, timeout=300, env=_env(), check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    expected, tally = reference(setup, split_records(data.read_bytes(), str(data)))
    assert summary["records"] == tally.records and summary["rejected"] == tally.rejections
    assert "created" in result.stderr
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected


def test_spark_submit_entry_point(tmp_path: Path) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(1))
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    result = subprocess.run(
        [str(submit), "--master", "local[1]", str(REPO / "yangkey" / "cli" / "spark_submit.py"),
         "--subscriptions", str(setup.subscriptions), "--input", str(data), "--dry-run",
         "--json"],
        capture_output=True, text=True, timeout=300, env=_env(), check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout[result.stdout.index("{"):])
    _, tally = reference(setup, split_records(data.read_bytes(), str(data)))
    assert summary["dry_run"] is True
    assert summary["records"] == tally.records and summary["messages"] == tally.messages

