"""Issue 12.3 — the shared subscription catalog, pure parts: record format, replay (first writer
wins, seq = offset, node in the key), generation allocation, tombstones, the topics it implies,
and a Catalog that writes through it and learns from it. The log is an in-memory list with
Kafka's one guarantee (an append lands at the next offset); the broker tests are in
tests/integration/test_catalog_topic.py."""

from __future__ import annotations

import json
from dataclasses import replace

import orjson

from yangkey.catalog import build_catalog
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.clickhouse.tables import topic_tables
from yangkey.config import parse_subscriptions
from yangkey.messages import HEADER_GENERATION, HEADER_INSTANCES, KeyedMessage, Rejection
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.shared_catalog import (
    CatalogState,
    RecordKey,
    SharedBranch,
    SharedCatalog,
    SharedSubscription,
    topic_specs,
)

IF = "/ietf-interfaces:interfaces/interface"
DNS = "/ietf-system:system/dns-resolver/search"
FILE = f"""
learn: true
organisation_prefix: netops
subscriptions:
  - id: 1042
    xpath: {IF}
    type: on-change-sync
    compaction: true
    generation: 3
    partitions: 4
    retention: 2d
"""


class MemoryLog:
    """A single partition: records at consecutive offsets, read in order."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def read(self, store: CatalogState) -> None:
        for offset in range(store.end, len(self.records)):
            store.apply(offset, *self.records[offset])

    def append(self, key: bytes, value: bytes | None) -> int:
        self.records.append((key, value))
        return len(self.records) - 1


class RacingLog(MemoryLog):
    """The first append of ``loser`` is preceded by ``before()``: another writer's record
    lands at the offset the loser expected."""

    def __init__(self, shared: MemoryLog) -> None:
        super().__init__()
        self.records = shared.records
        self.before: list[object] = []

    def append(self, key: bytes, value: bytes | None) -> int:
        while self.before:
            self.before.pop()()  # type: ignore[operator]
        return super().append(key, value)


def learned(sub_id: int = 777, xpath: str = DNS, topic: str = "t-dns") -> SharedSubscription:
    return SharedSubscription(
        id=sub_id,
        origin="learned",
        filter=xpath,
        subtree=False,
        xpath=xpath,
        content_id="cid-1",
        generation=1,
        subscription_type="periodic",
        compaction=False,
        branches=(SharedBranch(topic, xpath, xpath, "leaf-list"),),
        partitions=3,
        retention_seconds=3600,
    )


def telemetry(sub_id: int, xpath_filter: str | None, names: list[str]) -> bytes:
    subscription: dict[str, object] = {"id": sub_id}
    if xpath_filter is not None:
        subscription["xpath-filter"] = xpath_filter
        subscription["yang-library-content-id"] = "cid-1"
    contents = {"ietf-system:system": {"dns-resolver": {"search": names}}}
    return json.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": "tm-1"},
                "telemetry-message-metadata": {"yang-push-subscription": subscription},
                "payload": {
                    "ietf-yp-notification:envelope": {
                        "event-time": "2026-11-20T10:00:00Z",
                        "contents": {
                            "ietf-yang-push:push-update": {
                                "id": sub_id,
                                "datastore-contents": contents,
                            }
                        },
                    }
                },
            }
        }
    ).encode()


# --------------------------------------------------------------------------- records


def test_record_round_trips_and_digest_ignores_learned_generation() -> None:
    record = learned()
    again = SharedSubscription.from_json(orjson.loads(record.encode()))
    assert again == record
    assert replace(record, generation=5).digest == record.digest
    assert replace(record, content_id="cid-2").digest != record.digest
    filed = replace(record, origin="file")
    assert replace(filed, generation=5).digest != filed.digest
    replicated = replace(record, replication_factor=3, min_insync_replicas=2)
    assert SharedSubscription.from_json(orjson.loads(replicated.encode())) == replicated
    # A record written before min_insync_replicas existed: the broker's setting.
    older = {k: v for k, v in orjson.loads(replicated.encode()).items()
             if k != "min_insync_replicas"}
    assert SharedSubscription.from_json(older).min_insync_replicas is None


# --------------------------------------------------------------------------- replay


def test_racing_writers_first_wins_loser_finds_it() -> None:
    log = MemoryLog()
    a, b = SharedCatalog(log, "A"), SharedCatalog(RacingLog(log), "B")
    b.sync()
    assert isinstance(b.log, RacingLog)
    b.log.before.append(lambda: a.publish(learned()))
    won = b.publish(learned())
    assert won.writer == "A" and won.generation == 1
    assert b.conflicts == 1 and a.conflicts == 0
    # B's losing write is in the log (seq 0 at offset 1) and every reader ignores it.
    assert len(log.records) == 2
    late = SharedCatalog(log, "C")
    (only,) = late.records()
    assert only.writer == "A" and late.state.ignored == 1


def test_racing_writers_different_filters_get_successive_generations() -> None:
    log = MemoryLog()
    a, b = SharedCatalog(log, "A"), SharedCatalog(RacingLog(log), "B")
    b.sync()
    assert isinstance(b.log, RacingLog)
    b.log.before.append(lambda: a.publish(learned(xpath=IF, topic="t-if")))
    won = b.publish(learned())
    assert (won.writer, won.generation, b.conflicts) == ("B", 2, 1)
    assert [(r.writer, r.generation) for r in SharedCatalog(log, "C").find(777)] == [
        ("A", 1),
        ("B", 2),
    ]


def test_same_filter_named_by_another_file_keeps_its_generation() -> None:
    log = MemoryLog()
    SharedCatalog(log, "A").publish(learned(xpath=IF, topic="t-if"))
    SharedCatalog(log, "A").publish(learned())
    other = SharedCatalog(log, "B").publish(learned(topic="other-prefix-dns"))
    assert (other.writer, other.generation, other.topics) == ("B", 2, ("other-prefix-dns",))
    assert len(SharedCatalog(log, "C").find(777)) == 3


def test_publishing_a_known_subscription_writes_nothing() -> None:
    log = MemoryLog()
    SharedCatalog(log, "A").publish(learned())
    assert SharedCatalog(log, "B").publish(learned()).writer == "A"
    assert len(log.records) == 1


def test_replay_ignores_foreign_garbage_and_mismatched_records() -> None:
    state = CatalogState()
    good = learned()
    state.apply(0, b"not json", b"{}")
    state.apply(1, orjson.dumps({"keytype": "SCHEMA", "seq": 1, "node": "x"}), b"{}")
    state.apply(2, RecordKey(good.digest, 777, 2, "A").encode(), b"{broken")
    state.apply(3, RecordKey("other-digest", 777, 3, "A").encode(), good.encode())
    state.apply(4, RecordKey(good.digest, 778, 4, "A").encode(), good.encode())
    assert state.records == {} and state.ignored == 5 and state.end == 5
    state.apply(5, RecordKey(good.digest, 777, 5, "A").encode(), good.encode())
    assert list(state.records) == [good.digest]


def test_tombstone_of_the_winning_key_removes_the_subscription() -> None:
    state = CatalogState()
    record = learned()
    state.apply(0, RecordKey(record.digest, 777, 0, "A").encode(), record.encode())
    state.apply(1, RecordKey(record.digest, 777, 0, "B").encode(), None)  # the loser's key
    assert record.digest in state.records
    state.apply(2, RecordKey(record.digest, 777, 0, "A").encode(), None)
    assert state.records == {}


def test_topic_specs_merge_by_name() -> None:
    one = learned()
    two = replace(learned(sub_id=778), partitions=6, retention_seconds=60,
                  replication_factor=3, min_insync_replicas=2)
    (spec,) = topic_specs([one, two])
    assert spec.name == "t-dns" and spec.subscription_ids == (777, 778)
    assert spec.partitions == 6 and spec.retention_seconds == 3600
    assert (one.replication_factor, one.min_insync_replicas) == (-1, None)  # the broker's
    assert (spec.replication_factor, spec.min_insync_replicas) == (3, 2)


# --------------------------------------------------------------------------- the catalog


def test_attach_publishes_the_file_subscriptions_with_their_sizes() -> None:
    log = MemoryLog()
    catalog = build_catalog(parse_subscriptions(FILE))
    catalog.attach(SharedCatalog(log, "A"))
    (record,) = SharedCatalog(log, "reader").records()
    assert (record.id, record.origin, record.generation) == (1042, "file", 3)
    assert record.topics == catalog.entries[0].topics
    assert (record.partitions, record.retention_seconds, record.compaction) == (4, 172800, True)
    # A second producer with the same file adds nothing.
    build_catalog(parse_subscriptions(FILE)).attach(SharedCatalog(log, "B"))
    assert len(log.records) == 1


def test_learned_by_one_producer_is_known_to_another_without_metadata() -> None:
    log = MemoryLog()
    first = build_catalog(parse_subscriptions(FILE))
    first.attach(SharedCatalog(log, "A"))
    second = build_catalog(parse_subscriptions(FILE))
    second.attach(SharedCatalog(log, "B"))
    # Without metadata and before anyone learned it: rejected as before.
    refused = MessageBuilder(second).build(telemetry(777, None, ["a.example"]), "t:0")
    assert isinstance(refused, Rejection) and "777" in refused.reason
    built = MessageBuilder(first).build(telemetry(777, DNS, ["a.example"]), "t:1")
    assert isinstance(built, list)
    (record,) = SharedCatalog(log, "reader").find(777)
    assert (record.origin, record.content_id, record.writer) == ("learned", "cid-1", "A")
    assert record.topics == ("netops-sys-system-dns-resolver-search",)
    # The second producer's message carries no metadata: it learns from the shared catalog.
    adopted = MessageBuilder(second).build(telemetry(777, None, ["b.example"]), "t:2")
    assert isinstance(adopted, list)
    (message,) = adopted
    assert isinstance(message, KeyedMessage)
    assert message.topic == record.topics[0]
    assert message.key == b"tm-1\n777\n" + DNS.encode() + b"[.='b.example']"
    assert message.header(HEADER_GENERATION) == "1"


def test_a_new_filter_for_a_learned_id_is_the_next_generation() -> None:
    log = MemoryLog()
    catalog = build_catalog(parse_subscriptions(FILE))
    catalog.attach(SharedCatalog(log, "A"))
    builder = MessageBuilder(catalog)
    assert isinstance(builder.build(telemetry(777, DNS, ["a"]), "t:1"), list)
    other = telemetry(777, "/ietf-system:system/dns-resolver", ["a"])
    (message,) = builder.build(other, "t:2")  # type: ignore[misc]
    assert message.header(HEADER_GENERATION) == "2"
    assert [r.generation for r in SharedCatalog(log, "reader").find(777)] == [1, 2]


def test_learning_off_never_reads_the_shared_catalog() -> None:
    log = MemoryLog()
    sharing = build_catalog(parse_subscriptions(FILE))
    sharing.attach(SharedCatalog(log, "A"))
    assert isinstance(MessageBuilder(sharing).build(telemetry(777, DNS, ["a"]), "t:1"), list)
    closed = build_catalog(parse_subscriptions(FILE.replace("learn: true", "learn: false")))
    closed.attach(SharedCatalog(log, "B"))
    refused = MessageBuilder(closed).build(telemetry(777, None, ["a"]), "t:2")
    assert isinstance(refused, Rejection) and "learning is off" in refused.reason


def test_adopting_from_the_shared_catalog_counts_toward_the_bound() -> None:
    log = MemoryLog()
    writer = build_catalog(parse_subscriptions(FILE))
    writer.attach(SharedCatalog(log, "A"))
    builder = MessageBuilder(writer)
    for sub_id in (777, 778):
        assert isinstance(builder.build(telemetry(sub_id, DNS, ["a"]), f"t:{sub_id}"), list)
    bounded = FILE.replace("learn: true", "learn: true\nlimits:\n  max_learned_subscriptions: 1")
    reader = build_catalog(parse_subscriptions(bounded))
    reader.attach(SharedCatalog(log, "B"))
    assert isinstance(MessageBuilder(reader).build(telemetry(777, None, ["a"]), "t:1"), list)
    refused = MessageBuilder(reader).build(telemetry(778, None, ["a"]), "t:2")
    assert isinstance(refused, Rejection) and "limit of 1 learned" in refused.reason


# --------------------------------------------------------------------------- typed tables


def test_ingest_feeds_a_learned_topic_as_its_producer_does() -> None:
    """A topic known only from the shared catalog gets typed columns and a feed recompiled from
    the record against the local schema: the header ingest computes is the producer's."""
    log = MemoryLog()
    producer = build_catalog(parse_subscriptions(FILE))
    producer.attach(SharedCatalog(log, "A"))
    knobs = ProducerKnobs.from_catalog(producer, instances=True)
    sent = MessageBuilder(producer, knobs).build(telemetry(777, DNS, ["a.example", "b"]), "t:1")
    assert isinstance(sent, list)
    (message,) = sent
    assert isinstance(message, KeyedMessage)
    topic = "netops-sys-system-dns-resolver-search"

    feeds = CatalogFeeds(build_catalog(parse_subscriptions(FILE)))
    assert topic not in feeds.typed
    assert feeds.learn(SharedCatalog(log, "ingest").records()) == []
    assert [c.name for c in feeds.typed[topic].columns] == ["search"]
    header = feeds.header(topic, message.value, "t:1")
    assert header is not None and header.decode() == message.header(HEADER_INSTANCES)
    rows = orjson.loads(header)
    assert [(r["@path"], r["search"]) for r in rows] == [
        (f"{DNS}[.='a.example']", "a.example"),
        (f"{DNS}[.='b']", "b"),
    ]
    # and its DDL has the instance tables
    specs = topic_specs(SharedCatalog(log, "ddl").records())
    names = {s.name for s in render_ddl(specs, DdlOptions(mode="embedded"), feeds.typed)}
    tables = topic_tables(topic, "yangkey")
    assert {f"yangkey.{t}" for t in (tables.ihist, tables.istate, tables.instances)} <= names


def test_a_learned_topic_whose_modules_are_not_here_keeps_message_level_tables() -> None:
    log = MemoryLog()
    shared = SharedCatalog(log, "A")
    shared.publish(learned(901, "/acme-widgets:widgets/widget", "t-widgets"))
    shared.publish(learned(902, DNS, "t-dns"))
    feeds = CatalogFeeds(build_catalog(parse_subscriptions(FILE)))
    (warning,) = feeds.learn(shared.records())
    assert warning.startswith("t-widgets: no typed instance tables") and "acme-widgets" in warning
    assert "t-widgets" not in feeds.typed and "t-dns" in feeds.typed
    assert feeds.header("t-widgets", b"{}", "t:0") is None
    assert feeds.failures == 0
    # said once: a later refresh that reads the same records warns no more
    assert feeds.learn(shared.records()) == []
