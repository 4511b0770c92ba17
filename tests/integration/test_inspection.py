"""``yangkey kafka topics``, ``yangkey tail`` and ``yangkey doctor`` against the real broker
(issue 34 item 5): what a user sees of the topics the pipeline writes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from factories import unique_name
from test_ingest_crash import produce_all, write_subscriptions

from yangkey.catalog import load_catalog
from yangkey.demo.sample import generate
from yangkey.kafka.config import TopicSpec, ensure_topics
from yangkey.kafka.log import KafkaLog, ensure_log_topic
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.registry import Registry
from yangkey.spark.preflight import topic_specs

pytestmark = pytest.mark.integration


def yangkey(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "yangkey.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def pipeline_topics(kafka_broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The example catalog's topics with the sample's keyed messages in them."""
    bootstrap: str = kafka_broker.bootstrap
    prefix = unique_name("insp")
    subscriptions = write_subscriptions(tmp_path_factory.mktemp("insp"), prefix)
    catalog = load_catalog(subscriptions)
    specs = topic_specs(catalog, None)
    ensure_topics(bootstrap, specs)
    builder = MessageBuilder(catalog)
    messages: list[KeyedMessage] = []
    for index, raw in enumerate(generate(nodes=2, interfaces=3, rounds=1, seed=7).records):
        built = builder.build(raw, f"sample:{index}")
        if not isinstance(built, Rejection):
            messages.extend(built)
    positions = produce_all(bootstrap, messages)
    return bootstrap, specs, messages, positions


def test_topics_lists_layout_policy_and_counts(pipeline_topics: Any) -> None:
    bootstrap, specs, messages, _positions = pipeline_topics
    result = yangkey("kafka", "topics", "--bootstrap", bootstrap, "--format", "json")
    assert result.returncode == 0, result.stderr
    listed = {row["name"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert not any(name.startswith("__") for name in listed)  # internal ones need --internal
    for spec in specs:
        row = listed[spec.name]
        assert row["partitions"] == spec.partitions
        assert row["replication"] == 1
        assert row["cleanup_policy"] == ("compact" if spec.compaction else "delete")
        # a plain (non-transactional) producer: the offsets held are the messages
        assert row["messages"] == sum(1 for m in messages if m.topic == spec.name)
    assert any(spec.compaction for spec in specs) and not all(spec.compaction for spec in specs)
    piped = yangkey("kafka", "topics", "--bootstrap", bootstrap)  # piped: TSV
    lines = piped.stdout.splitlines()
    assert lines[0].split("\t") == [
        "name",
        "partitions",
        "replication",
        "cleanup_policy",
        "messages",
    ]
    assert len(lines) == len(listed) + 1


def test_tail_shows_key_headers_and_decoded_value(pipeline_topics: Any) -> None:
    bootstrap, _specs, messages, positions = pipeline_topics
    topic = messages[0].topic
    produced = [m for m in messages if m.topic == topic]
    at = {(p, o): m for m, (t, p, o) in zip(messages, positions, strict=True) if t == topic}
    result = yangkey(
        "tail", topic, "--bootstrap", bootstrap, "--from-beginning", "-e", "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    shown = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(shown) == len(produced)
    by_key = {m.key.decode(): m for m in produced if m.key is not None}
    for record in shown:
        message = at[(record["partition"], record["offset"])]
        assert record["key"] == message.key.decode()
        if message.header("content-type") == "application/yang-data+xml":
            # the sample's XML notifications, pretty-printed (the same elements, indented)
            assert record["value_format"] == "xml"
            assert record["value"].startswith("<notification")
            assert "\n  <eventTime>" in record["value"]
        else:
            assert record["value_format"] == "json"
            assert record["value"] == json.loads(message.value)
        assert record["headers"] == [[n, v.decode()] for n, v in message.headers]
        assert record["timestamp"].endswith("Z")

    counted = yangkey("tail", topic, "--bootstrap", bootstrap, "--from-beginning", "-c", "2")
    assert counted.returncode == 0, counted.stderr
    text = counted.stdout
    assert text.count(f"── {topic} [") == 2
    key_lines = [line for line in text.splitlines() if line.startswith("key:")]
    assert len(key_lines) == 2
    assert all(
        line.removeprefix("key:").strip() in {k.replace("\n", "\\n") for k in by_key}
        for line in key_lines
    )
    assert "headers: content-type=application/yang-data+" in text
    assert "value:   json" in text or "value:   xml" in text
    assert '\n  "' in text or "\n  <" in text  # pretty-printed: indented


def test_tail_follows_new_messages_and_decodes_xml(kafka_broker: Any) -> None:
    bootstrap: str = kafka_broker.bootstrap
    topic = unique_name("t-tail-xml-")
    ensure_topics(bootstrap, [TopicSpec(topic)])
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, key=b"old", value=b"before the tail started")
    assert producer.flush(30) == 0
    tail = subprocess.Popen(
        [sys.executable, "-m", "yangkey.cli", "tail", topic, "-b", bootstrap, "-c", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        xml = (
            b'<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0">'
            b"<eventTime>2026-11-26T10:00:00Z</eventTime><x>1</x></notification>"
        )
        deadline = time.monotonic() + 60
        while tail.poll() is None and time.monotonic() < deadline:
            producer.produce(topic, key=b"new", value=xml)  # until the tail, at the end, sees one
            producer.flush(30)
            try:
                tail.wait(2)
            except subprocess.TimeoutExpired:
                continue
        out, err = tail.communicate(timeout=30)
    finally:
        if tail.poll() is None:
            tail.kill()
            tail.wait(30)
    assert tail.returncode == 0, err
    assert "before the tail started" not in out  # new messages only by default
    assert "key:     new" in out
    assert "value:   xml" in out
    assert "\n  <eventTime>2026-11-26T10:00:00Z</eventTime>" in out  # indented


@pytest.fixture
def registry_url(kafka_broker: Any) -> Iterator[str]:
    bootstrap: str = kafka_broker.bootstrap
    topic = unique_name("_schemas-tail-")
    ensure_log_topic(bootstrap, topic)
    log = KafkaLog(bootstrap, topic)
    registry = Registry(log, "tail")
    registry.sync()
    server = RegistryHTTPServer(registry, "127.0.0.1", 0)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        log.close()


RECORD = {
    "type": "record",
    "name": "Counter",
    "namespace": "net.example",
    "fields": [{"name": "ifname", "type": "string"}, {"name": "in_octets", "type": "long"}],
}


def test_tail_decodes_registry_framed_avro_by_schema_id(
    kafka_broker: Any, registry_url: str
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    topic = unique_name("t-tail-avro-")
    ensure_topics(bootstrap, [TopicSpec(topic)])
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(RECORD))
    value = {"ifname": "GigabitEthernet0/0/0", "in_octets": 2**40 + 7}
    framed = serialize(value, SerializationContext(topic, MessageField.VALUE))
    assert framed is not None and framed[0] == 0
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, key=b"pe1", value=framed)
    assert producer.flush(30) == 0
    schema_id = int.from_bytes(framed[1:5], "big")

    decoded = yangkey(
        "tail",
        topic,
        "-b",
        bootstrap,
        "--from-beginning",
        "-c",
        "1",
        "--format",
        "json",
        "--schema-registry",
        registry_url,
    )
    assert decoded.returncode == 0, decoded.stderr
    record = json.loads(decoded.stdout)
    assert record["value_format"] == "avro"
    assert record["schema_id"] == schema_id
    assert record["value"] == value

    without = yangkey("tail", topic, "-b", bootstrap, "--from-beginning", "-c", "1")
    assert without.returncode == 0, without.stderr
    assert f"(schema id {schema_id}: no --schema-registry given)" in without.stdout


def test_tail_of_a_missing_topic_is_one_error_line(kafka_broker: Any) -> None:
    result = yangkey("tail", "no-such-topic-here", "-b", kafka_broker.bootstrap, "-e")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: kafka://{kafka_broker.bootstrap}/no-such-topic-here: no such topic "
        "(`yangkey kafka topics` lists them)"
    ]


HOLDER = """
import sys, time
from chdb import session
s = session.Session(sys.argv[1])
s.query("SELECT 1")
print("ready", flush=True)
time.sleep(300)
"""


def test_doctor_passes_and_fails_on_what_it_is_pointed_at(
    kafka_broker: Any, registry_url: str, tmp_path: Path
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    good = yangkey(
        "doctor",
        "-b",
        bootstrap,
        "--embedded",
        str(tmp_path / "ch"),
        "--schema-registry",
        registry_url,
        "--format",
        "json",
    )
    checks = {c["name"]: c for c in map(json.loads, good.stdout.splitlines())}
    assert good.returncode == 0, good.stdout + good.stderr
    assert checks["bootstrap"]["status"] == "ok"
    assert "1 broker(s) answer" in checks["bootstrap"]["detail"]
    assert "(--bootstrap)" in checks["bootstrap"]["detail"]
    assert checks["registry"]["status"] == "ok"
    assert checks["clickhouse"]["status"] == "warn"  # not created yet
    assert {"java", "kafka jars", "[kafka]", "[clickhouse]", "native", "profile"} <= set(checks)

    directory = tmp_path / "held"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        bad = yangkey(
            "doctor",
            "-b",
            "127.0.0.1:1",
            "--embedded",
            str(directory),
            "--schema-registry",
            "http://127.0.0.1:1",
        )
    finally:
        holder.kill()
        holder.wait(30)
    assert bad.returncode == 1
    lines = {line.split()[1]: line for line in bad.stdout.splitlines()}
    assert lines["bootstrap"].startswith("fail")
    assert "127.0.0.1:1 (--bootstrap) does not answer" in lines["bootstrap"]
    assert " -> " in lines["bootstrap"]  # the fix
    assert lines["clickhouse"].startswith("fail") and f"pid {holder.pid}" in lines["clickhouse"]
    assert lines["registry"].startswith("fail")
    assert bad.stderr.strip() == (
        "error: doctor: 3 check(s) failed: bootstrap, clickhouse, registry"
    )


def test_tail_stops_on_ctrl_c_without_a_traceback(kafka_broker: Any) -> None:
    bootstrap: str = kafka_broker.bootstrap
    topic = unique_name("t-tail-int-")
    ensure_topics(bootstrap, [TopicSpec(topic)])
    tail = subprocess.Popen(
        [sys.executable, "-m", "yangkey.cli", "tail", topic, "-b", bootstrap],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(5)  # following, nothing to print
        assert tail.poll() is None
        tail.send_signal(signal.SIGINT)
        out, err = tail.communicate(timeout=15)
    finally:
        if tail.poll() is None:
            tail.kill()
            tail.wait(30)
    assert tail.returncode == 0, err
    assert (out, err) == ("", "")
