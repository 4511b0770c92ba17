"""``produce --schema-registry`` on the real broker with yangkey's own registry beside it: every
keyed message carries the id of its topic's value schema, which a consumer resolves with
confluent_kafka's SchemaRegistryClient to exactly that topic's schema, and the schema validates
the message's data; a learned subscription's topic is registered by the executor that learns it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from confluent_kafka.schema_registry import SchemaRegistryClient
from factories import unique_name
from pyspark.sql import SparkSession
from test_spark_job import EXAMPLE, consume, headers_of, sample_records, write_jsonl

from yangkey.kafka.config import TopicSpec, ensure_topics
from yangkey.messages import HEADER_SCHEMA_ID
from yangkey.registry.client import RegistrySettings, learned_topic_schema, topic_schemas
from yangkey.registry.running import running_registry
from yangkey.spark.config import JobConfig
from yangkey.spark.job import run
from yangkey.spark.transform import BuilderSpec

LEARNED_ID = 9001
LEARNED = {"id": LEARNED_ID, "xpath-filter": "/ietf-interfaces:interfaces/interface/oper-status"}


def learned_notification(node: str, status: str) -> bytes:
    update = {
        "id": LEARNED_ID,
        "datastore-contents": {
            "ietf-interfaces:interfaces": {"interface": [{"name": "eth0", "oper-status": status}]}
        },
    }
    return json.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": node},
                "telemetry-message-metadata": {"yang-push-subscription": LEARNED},
                "payload": {
                    "ietf-yp-notification:envelope": {
                        "event-time": "2026-11-20T10:00:00Z",
                        "contents": {"ietf-yang-push:push-update": update},
                    }
                },
            }
        }
    ).encode()


def datastore_contents(value: bytes) -> Any:
    """The push-update's datastore contents of a JSON notification, else None."""
    try:
        document = json.loads(value)
    except ValueError:
        return None
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            update = item.get("ietf-yang-push:push-update")
            if isinstance(update, dict) and "datastore-contents" in update:
                return update["datastore-contents"]
            stack.extend(item.values())
    return None


@pytest.fixture
def registry_url(kafka_bootstrap: str) -> Iterator[str]:
    with running_registry(kafka_bootstrap, unique_name("_schemas-")) as server:
        yield server.url


def test_every_message_carries_its_topic_schema_id(
    kafka_bootstrap: str, spark: SparkSession, registry_url: str, tmp_path: Path
) -> None:
    prefix = unique_name("sid")
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    document.update(
        organisation_prefix=prefix, dead_letter_topic=f"{prefix}-dead-letter", learn=True
    )
    document["defaults"]["partitions"] = 2
    subscriptions = tmp_path / "subscriptions.yaml"
    subscriptions.write_text(yaml.safe_dump(document), encoding="utf-8")
    catalog = BuilderSpec.from_file(subscriptions).catalog()
    expected = topic_schemas(catalog)
    (learned_topic,) = catalog.learn(LEARNED_ID, LEARNED, "test").topics
    expected[learned_topic] = str(learned_topic_schema(catalog, learned_topic))
    # Topics of learned subscriptions are not created by --create-topics.
    ensure_topics(kafka_bootstrap, [TopicSpec(learned_topic, partitions=1)])

    records = [*sample_records(nodes=2), learned_notification("pe9", "up")]
    records.append(learned_notification("pe9", "down"))
    data = write_jsonl(tmp_path / "in.jsonl", records)
    config = JobConfig.of(
        subscriptions=str(subscriptions),
        inputs=(str(data),),
        bootstrap=kafka_bootstrap,
        create_topics=True,
        producer_overrides={"linger.ms": 5},
        schema_registry=RegistrySettings(registry_url),
        split_size=2048,  # several tasks: each must find the ids the driver registered
    )
    summary = run(config, spark)
    assert summary.partitions > 1
    assert summary.tally.produced[learned_topic] == 2

    client = SchemaRegistryClient({"url": registry_url})
    assert set(client.get_subjects()) == {f"{topic}-value" for topic in expected}
    messages = consume(kafka_bootstrap, [*expected, catalog.dead_letter_topic])
    # Values are whole notifications; where the subscription selects whole list entries, the
    # push-update's data is exactly what the topic's schema describes. (The generator's
    # hardware updates carry leaves beyond the serial-num branch, which its closed schema
    # rightly refuses.)
    interfaces = f"{prefix}-current-state-if-interfaces-interface"
    validated: Counter[str] = Counter()
    for message in messages:
        topic = str(message.topic())
        header = headers_of(message).get(HEADER_SCHEMA_ID)
        if topic == catalog.dead_letter_topic:
            assert header is None, "a dead letter has no value schema"
            continue
        assert header is not None, f"no {HEADER_SCHEMA_ID} header on {topic}"
        schema = client.get_schema(int(header))
        assert schema.schema_type == "JSON"
        assert json.loads(str(schema.schema_str)) == json.loads(expected[topic]), topic
        data_part = datastore_contents(message.value() or b"")
        if topic in (learned_topic, interfaces) and data_part is not None:
            jsonschema.Draft202012Validator(json.loads(expected[topic])).validate(data_part)
            validated[topic] += 1
    assert Counter(str(m.topic()) for m in messages if m.topic() in expected) == Counter(
        {topic: count for topic, count in summary.tally.produced.items() if count}
    )
    assert validated[learned_topic] == 2
    assert validated[interfaces] > 0

    ids = {int(headers_of(m)[HEADER_SCHEMA_ID]) for m in messages if m.topic() in expected}
    assert len(ids) == len({t for t in expected if summary.tally.produced[t]}), "one id a topic"

    # A second run (another run id) finds every subject and registers nothing new.
    versions = {subject: client.get_versions(subject) for subject in client.get_subjects()}
    rerun = run(config.but(run_id="again"), spark)
    assert rerun.tally.records == summary.tally.records
    fresh = SchemaRegistryClient({"url": registry_url})
    assert {s: fresh.get_versions(s) for s in fresh.get_subjects()} == versions
