"""Typed instance tables through the real pipeline: producer -> Kafka -> ``yangkey ingest`` ->
chdb, for a producer that sends the instance feed header and one that does not (ingest then
computes it), JSON and XML: the same instance rows either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, Message, Producer
from factories import RECENT_DAY, unique_name

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest import ingest
from yangkey.clickhouse.tables import topic_tables
from yangkey.kafka.config import TopicSpec as KafkaTopic
from yangkey.kafka.config import ensure_topics, producer_config
from yangkey.messages import HEADER_INSTANCES
from yangkey.producer import MessageBuilder, ProducerKnobs

DATABASE = "yk_typed_ingest"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"


def catalog_for(tmp_path: Path, prefix: str) -> Catalog:
    path = tmp_path / "subscriptions.yaml"
    path.write_text(
        f"organisation_prefix: {prefix}\n"
        f"dead_letter_topic: {prefix}-dead-letter\n"
        "subscriptions:\n"
        "  - id: 1042\n"
        "    xpath: /ietf-interfaces:interfaces/interface\n"
        "    type: on-change-sync\n"
    )
    return load_catalog(path)


def json_update(host: str, seq: int, status: str) -> bytes:
    return json.dumps({"ietf-yp-notification:envelope": {
        "event-time": f"{RECENT_DAY}T10:00:0{seq}Z", "hostname": host, "sequence-number": seq,
        "contents": {"ietf-yang-push:push-update": {"id": 1042, "datastore-contents": {
            "ietf-interfaces:interfaces": {"interface": [
                {"name": "eth0", "oper-status": status, "if-index": 1},
                {"name": "eth1", "oper-status": "up", "if-index": 2},
            ]}}}},
    }}).encode()


def xml_update(host: str, seq: int, status: str) -> bytes:
    return (
        f'<envelope xmlns="{NS_ENV}"><event-time>{RECENT_DAY}T10:00:0{seq}Z</event-time>'
        f"<hostname>{host}</hostname><sequence-number>{seq}</sequence-number><contents>"
        f'<push-update xmlns="{NS_YP}"><id>1042</id><datastore-contents>'
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name>'
        f"<oper-status>{status}</oper-status><if-index>1</if-index></interface>"
        "<interface><name>eth1</name><oper-status>up</oper-status><if-index>2</if-index>"
        "</interface></interfaces></datastore-contents></push-update></contents></envelope>"
    ).encode()


def test_ingest_fills_the_instance_tables(
    kafka_broker: Any, tmp_path: Path, chdb_conn: ChdbConnection
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    catalog = catalog_for(tmp_path, unique_name("typed"))
    topic = catalog.topics[0].name
    ensure_topics(bootstrap, [KafkaTopic(topic, partitions=2, compaction=True),
                              KafkaTopic(catalog.dead_letter_topic, partitions=1)])
    with_feed = MessageBuilder(
        catalog, ProducerKnobs.from_catalog(catalog, instances=True), strict=True
    )
    no_feed = MessageBuilder(
        catalog, ProducerKnobs.from_catalog(catalog, instances=False), strict=True
    )
    # pe-json: JSON from a producer with the feed; pe-xml: XML from a producer without it
    sent = [
        (with_feed, json_update("pe-json", 1, "up")),
        (no_feed, xml_update("pe-xml", 1, "up")),
        (with_feed, json_update("pe-json", 2, "down")),
        (no_feed, xml_update("pe-xml", 2, "down")),
    ]
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err.str())

    producer = Producer(producer_config(bootstrap))
    for builder, raw in sent:
        messages = builder.build(raw, "test")
        assert isinstance(messages, list), messages
        for message in messages:
            assert (message.header(HEADER_INSTANCES) is not None) == (builder is with_feed)
            producer.produce(message.topic, value=message.value, key=message.key,
                             headers=list(message.headers), on_delivery=on_delivery)
    assert producer.flush(30) == 0 and not errors, errors

    result = ingest(catalog, bootstrap, "", group=f"g-{topic}",
                    database=DATABASE, connection=chdb_conn)
    assert sum(result.messages.values()) == 4
    tables = topic_tables(topic, DATABASE)
    history = chdb_conn.query(
        f"SELECT node, instance_path, name, `oper-status`, `if-index`, operation "
        f"FROM {qualified(DATABASE, tables.ihist)} ORDER BY node, instance_path, event_time"
    )
    assert len(history) == 8
    by_node = {
        node: [{k: v for k, v in row.items() if k != "node"} for row in history
               if row["node"] == node]
        for node in ("pe-json", "pe-xml")
    }
    assert by_node["pe-json"] == by_node["pe-xml"]
    now = chdb_conn.query(
        f"SELECT node, name, `oper-status` FROM {qualified(DATABASE, tables.instances)} "
        "ORDER BY node, name"
    )
    assert now == [
        {"node": node, "name": name, "oper-status": status}
        for node in ("pe-json", "pe-xml")
        for name, status in (("eth0", "down"), ("eth1", "up"))
    ]
