"""The embedded ingest bridge against a real Kafka broker: Kafka -> chdb -> queries.

Covers: committed offsets (a second run reads nothing), read_committed (an aborted
transaction never shows), poison messages and dead-letter records in the errors table,
at-least-once replays (a new consumer group re-reads everything: current state unchanged),
missing topics, and --follow.

chdb holds one data path per process: one connection for the whole module, closed at its end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from confluent_kafka import KafkaError, Message, Producer
from factories import topic_spec

from yangkey.catalog import TopicSpec
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest import ingest
from yangkey.clickhouse.ingest.loop import IngestLoop
from yangkey.clickhouse.progress import IngestProgress
from yangkey.clickhouse.queries import current_state, history
from yangkey.clickhouse.tables import topic_tables
from yangkey.kafka.config import TopicSpec as KafkaTopic
from yangkey.kafka.config import ensure_topics, producer_config
from yangkey.messages import MessageKey
from yangkey.xpath import quote

DATABASE = "yk_ingest"


@dataclass(frozen=True)
class FakeCatalog:
    topics: tuple[TopicSpec, ...]
    dead_letter_topic: str


def spec(name: str) -> TopicSpec:
    return topic_spec(name, compaction=True, partitions=3)


def iface_key(node: str, name: str) -> bytes:
    xpath = f"/ietf-interfaces:interfaces/interface[name={quote(name)}]"
    return MessageKey.of(node, 1042, [xpath]).encode()


Headers = list[tuple[str, str | bytes | None]]


def headers(event_time: str, seq: int, gen: int = 1) -> Headers:
    return [
        ("content-type", b"application/yang-data+json"),
        ("yangkey-event-time", event_time.encode()),
        ("yangkey-sequence-number", str(seq).encode()),
        ("yangkey-generation", str(gen).encode()),
        ("yangkey-subscription-type", b"on-change-sync"),
    ]


def produce(
    bootstrap: str, records: list[tuple[str, bytes | None, bytes, Headers]]
) -> None:
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err.str())

    producer = Producer(producer_config(bootstrap))
    for topic, key, value, hdrs in records:
        producer.produce(topic, value=value, key=key, headers=hdrs, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not errors, errors


def produce_aborted(bootstrap: str, topic: str, key: bytes, value: bytes) -> None:
    producer = Producer({**producer_config(bootstrap), "transactional.id": f"abort-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=value, key=key, headers=headers("2030-01-01T00:00:00Z", 99))
    producer.flush(30)
    producer.abort_transaction(30)


def quiet(_line: str) -> None:
    pass


def test_ingest_end_to_end(
    kafka_broker: Any, topic_name: str, chdb_conn: ChdbConnection
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    dead_letter = f"{topic_name}-dl"
    missing = f"{topic_name}-never-created"
    ensure_topics(bootstrap, [KafkaTopic(topic_name, partitions=3, compaction=True),
                              KafkaTopic(dead_letter, partitions=1)])
    eth0, eth1, pipe = iface_key("pe1", "eth0"), iface_key("pe1", "eth1"), iface_key("pe2", "a | b")
    produce(bootstrap, [
        (topic_name, eth0, b'{"oper":"up"}', headers("2026-11-20T10:00:00Z", 1)),
        (topic_name, eth1, b'{"oper":"up"}', headers("2026-11-20T10:00:00Z", 2)),
        (topic_name, pipe, b'{"oper":"up"}', headers("2026-11-20T10:00:00Z", 3)),
        (topic_name, eth0, b'{"oper":"down"}', headers("2026-11-20T10:00:05.5Z", 4)),
        # poison: a key that is not UTF-8; a key that is not three lines
        (topic_name, b"\xff\xfe\xfd", b"\x00\x01garbage", headers("2026-11-20T10:00:00Z", 5)),
        (topic_name, b"just-one-line", b"{}", headers("2026-11-20T10:00:00Z", 6)),
        (dead_letter, None, b"<notification>bad</notification>", [
            ("yangkey-error", b"no matching instances"),
            ("yangkey-error-kind", b"no-match"),
            ("yangkey-source", b"raw@0:42"),
        ]),
    ])
    produce_aborted(bootstrap, topic_name, eth1, b'{"aborted":true}')
    catalog = FakeCatalog(topics=(spec(topic_name), spec(missing)), dead_letter_topic=dead_letter)

    group = f"g-{topic_name}"
    result = ingest(catalog, bootstrap, "", group=group, batch_size=3,
                    events=IngestProgress(log=quiet),
                    database=DATABASE, connection=chdb_conn)
    assert result.messages == {topic_name: 6, dead_letter: 1}  # the aborted one never arrives
    assert result.missing_topics == [missing]
    assert result.decode_errors == 1  # the non-UTF-8 key, flagged by the bridge
    assert result.errors == {topic_name: 2, dead_letter: 1}
    assert result.batches >= 3

    state = current_state(chdb_conn, DATABASE)
    assert {(r["message_key"], r["payload"]) for r in state} == {
        (eth0.decode(), '{"oper":"down"}'),
        (eth1.decode(), '{"oper":"up"}'),
        (pipe.decode(), '{"oper":"up"}'),
    }
    piped = next(r for r in state if r["node"] == "pe2")
    assert piped["xpaths"] == ["/ietf-interfaces:interfaces/interface[name='a | b']"]
    errors = chdb_conn.query(
        f"SELECT kafka_topic, error_kind, error, source, raw_message "
        f"FROM {qualified(DATABASE, 'errors')} ORDER BY kafka_topic, error_kind"
    )
    kinds = [(e["kafka_topic"] == dead_letter, e["error_kind"]) for e in errors]
    assert kinds == [(False, "decode"), (False, "key"), (True, "rejected:no-match")]
    assert errors[0]["raw_message"].startswith("\x00\x01garbage")
    assert errors[2]["source"] == "raw@0:42"

    # offsets were committed: a second run with the same group reads nothing
    again = ingest(catalog, bootstrap, "", group=group, database=DATABASE,
                   connection=chdb_conn)
    assert again.total == 0

    # at-least-once: a new group replays everything; answers do not change
    replay = ingest(catalog, bootstrap, "", group=f"{group}-replay", database=DATABASE,
                    connection=chdb_conn)
    assert replay.messages[topic_name] == 6
    assert current_state(chdb_conn, DATABASE) == state
    page = history(chdb_conn, DATABASE, key=eth0.decode())
    assert [r["payload"] for r in page.rows] == ['{"oper":"up"}', '{"oper":"down"}']

    # --follow keeps consuming until told to stop
    produce(bootstrap, [
        (topic_name, eth1, b'{"oper":"testing"}', headers("2026-11-20T10:01:00Z", 7)),
    ])
    deadline = time.monotonic() + 8
    followed = IngestLoop(
        chdb_conn, [topic_name], bootstrap, database=DATABASE, follow=True, group=group,
        poll_timeout=0.5, should_stop=lambda: time.monotonic() > deadline,
    ).run()
    assert followed.messages == {topic_name: 1}
    now = {r["message_key"]: r["payload"] for r in current_state(chdb_conn, DATABASE)}
    assert now[eth1.decode()] == '{"oper":"testing"}'


def test_rows_older_than_retention_are_counted_as_expired(
    kafka_broker: Any, topic_name: str, chdb_conn: ChdbConnection
) -> None:
    """The history TTL drops a row whose event time is past the topic's retention (at its
    next merge): ingest counts it as expired, and the errors table keeps it with its payload."""
    bootstrap: str = kafka_broker.bootstrap
    ensure_topics(bootstrap, [KafkaTopic(topic_name, partitions=1)])
    eth0, eth1 = iface_key("pe1", "eth0"), iface_key("pe1", "eth1")
    produce(bootstrap, [
        (topic_name, eth0, b'{"ancient":true}', headers("2000-01-01T00:00:00Z", 1)),
        (topic_name, eth1, b'{"recent":true}', headers("2099-01-01T00:00:00Z", 2)),
    ])
    one_day = replace(spec(topic_name), compaction=False, retention_seconds=86400)
    catalog = FakeCatalog(topics=(one_day,), dead_letter_topic=f"{topic_name}-dl")
    database = "yk_expired"
    result = ingest(catalog, bootstrap, "", group=f"g-{topic_name}",
                    events=IngestProgress(log=quiet),
                    database=database, connection=chdb_conn, dead_letter=False)
    assert result.messages == {topic_name: 2}
    assert result.expired == {topic_name: 1}
    assert result.errors == {}
    history_table = qualified(database, topic_tables(topic_name, database).history)
    chdb_conn.command(f"OPTIMIZE TABLE {history_table} FINAL")  # the merge the TTL acts in
    page = history(chdb_conn, database, topic=topic_name)
    assert [r["payload"] for r in page.rows] == ['{"recent":true}']
    expired = chdb_conn.query(
        f"SELECT error_kind, kafka_offset, raw_message FROM {qualified(database, 'errors')}"
    )
    assert expired == [
        {"error_kind": "expired", "kafka_offset": 0, "raw_message": '{"ancient":true}'}
    ]


def test_older_replay_without_event_time_cannot_win(
    kafka_broker: Any, topic_name: str, chdb_conn: ChdbConnection
) -> None:
    """No event-time header: the Kafka timestamp is the event time shown, but a replay of an
    old notification is written later (newer timestamp, higher offset) with its original
    sequence number; current state keeps the newer notification."""
    bootstrap: str = kafka_broker.bootstrap
    ensure_topics(bootstrap, [KafkaTopic(topic_name, partitions=1, compaction=True)])
    eth0 = iface_key("pe1", "eth0")

    def no_time(seq: int) -> Headers:
        return [h for h in headers("unused", seq) if h[0] != "yangkey-event-time"]

    produce(bootstrap, [(topic_name, eth0, b'{"oper":"up"}', no_time(7))])
    time.sleep(0.05)
    produce(bootstrap, [(topic_name, eth0, b'{"oper":"down"}', no_time(8))])
    time.sleep(0.05)
    produce(bootstrap, [(topic_name, eth0, b'{"oper":"up"}', no_time(7))])  # the replay
    catalog = FakeCatalog(topics=(spec(topic_name),), dead_letter_topic=f"{topic_name}-dl")
    database = "yk_replay"
    result = ingest(catalog, bootstrap, "", group=f"g-{topic_name}", database=database,
                    connection=chdb_conn, dead_letter=False)
    assert result.messages == {topic_name: 3} and result.errors == {}
    (state,) = current_state(chdb_conn, database, topic=topic_name)
    assert state["payload"] == '{"oper":"down"}' and state["kafka_offset"] == 1
    replay = history(chdb_conn, database, topic=topic_name, order="offset").rows[2]
    assert replay["event_time"] > state["event_time"]  # the replay's timestamp is newer
