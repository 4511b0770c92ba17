"""Issue 12.3 on the real broker: the shared catalog topic (seed 001) — two writers racing on
one subscription, a follower that starts late, and ingest creating the tables of a topic a
producer learned before inserting its messages (also mid-run, with --follow); the CLI reads.

chdb holds one data path per process: one connection for the module, closed at its end.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource
from factories import RECENT_DAY

from yangkey.catalog import Catalog, build_catalog
from yangkey.cli import main
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest import ingest
from yangkey.clickhouse.tables import topic_tables
from yangkey.config import parse_subscriptions
from yangkey.errors import ConfigError
from yangkey.kafka.catalog_topic import CatalogTopic
from yangkey.kafka.config import TopicSpec, ensure_topics, producer_config
from yangkey.messages import KeyedMessage
from yangkey.producer import MessageBuilder
from yangkey.shared_catalog import SharedBranch, SharedSubscription, topic_specs
from yangkey.spark.config import JobConfig
from yangkey.spark.job import run

DATABASE = "yk_catalog"
IF = "/ietf-interfaces:interfaces/interface"
DNS = "/ietf-system:system/dns-resolver/search"


def subscriptions(prefix: str, *, with_file_subscription: bool = True) -> str:
    text = f"learn: true\norganisation_prefix: {prefix}\ndead_letter_topic: {prefix}-dl\n"
    if with_file_subscription:
        text += f"subscriptions:\n  - id: 1042\n    xpath: {IF}\n    partitions: 2\n"
    return text


def telemetry(sub_id: int, xpath_filter: str | None, names: list[str], seq: int) -> bytes:
    subscription: dict[str, object] = {"id": sub_id}
    if xpath_filter is not None:
        subscription["xpath-filter"] = xpath_filter
        subscription["yang-library-content-id"] = "cid-7"
    if sub_id == 1042:
        contents: dict[str, Any] = {
            "ietf-interfaces:interfaces": {"interface": [{"name": n} for n in names]}
        }
    else:
        contents = {"ietf-system:system": {"dns-resolver": {"search": names}}}
    envelope = {
        "event-time": f"{RECENT_DAY}T10:00:{seq:02d}Z",
        "sequence-number": seq,
        "contents": {"ietf-yang-push:push-update": {"id": sub_id, "datastore-contents": contents}},
    }
    return json.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": "pe1"},
                "telemetry-message-metadata": {"yang-push-subscription": subscription},
                "payload": {"ietf-yp-notification:envelope": envelope},
            }
        }
    ).encode()


def learned(sub_id: int, xpath: str, topic: str) -> SharedSubscription:
    return SharedSubscription(
        id=sub_id,
        origin="learned",
        filter=xpath,
        subtree=False,
        xpath=xpath,
        content_id="cid-7",
        generation=1,
        subscription_type="periodic",
        compaction=False,
        branches=(SharedBranch(topic, xpath, xpath, "leaf-list"),),
    )


class BarrierLog:
    """The writer's log, whose first append waits until the other writer has decided too:
    both append at the offset they expected, on the real broker, and one of them loses."""

    def __init__(self, inner: Any, barrier: threading.Barrier) -> None:
        self.inner = inner
        self.barrier: threading.Barrier | None = barrier

    def read(self, store: Any) -> None:
        self.inner.read(store)

    def append(self, key: bytes, value: bytes | None) -> int:
        if self.barrier is not None:
            barrier, self.barrier = self.barrier, None
            barrier.wait(30)
        return int(self.inner.append(key, value))


@pytest.fixture
def shared(kafka_bootstrap: str, topic_name: str) -> Iterator[list[CatalogTopic]]:
    """Opened catalog followers of ``<topic_name>-catalog``, closed at the end."""
    opened: list[CatalogTopic] = []
    yield opened
    for each in opened:
        each.close()


def open_catalog(
    opened: list[CatalogTopic], bootstrap: str, topic: str, node: str, **kw: Any
) -> CatalogTopic:
    catalog = CatalogTopic(bootstrap, topic, node=node, **kw)
    opened.append(catalog)
    return catalog


def race(a: CatalogTopic, b: CatalogTopic, ra: SharedSubscription, rb: SharedSubscription) -> Any:
    barrier = threading.Barrier(2)
    for writer in (a, b):
        writer.log = BarrierLog(writer.log, barrier)
    results: dict[str, SharedSubscription] = {}
    errors: list[BaseException] = []

    def run(writer: CatalogTopic, record: SharedSubscription) -> None:
        try:
            results[writer.node] = writer.publish(record)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w, r)) for w, r in ((a, ra), (b, rb))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


# --------------------------------------------------------------------------- the topic


def test_catalog_topic_is_created_compacted_with_one_partition(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic]
) -> None:
    topic = f"{topic_name}-catalog"
    open_catalog(shared, kafka_bootstrap, topic, "A")
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 1
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["cleanup.policy"].value == "compact"


def test_a_catalog_topic_whose_records_can_expire_is_refused(
    kafka_bootstrap: str, topic_name: str
) -> None:
    # Learned subscriptions that expire would be learned again under new generations.
    topic = f"{topic_name}-expiring"
    configs = {"cleanup.policy": "compact,delete", "retention.ms": "60000"}
    ensure_topics(kafka_bootstrap, [TopicSpec(topic, configs=configs)])
    with pytest.raises(ConfigError) as raised:
        CatalogTopic(kafka_bootstrap, topic)
    assert raised.value.source == f"kafka://{kafka_bootstrap}"
    assert f"topic {topic}: cleanup.policy is compact,delete with retention.ms=60000" in str(
        raised.value
    )
    assert "learned subscriptions would expire; the shared catalog needs" in str(raised.value)


def test_two_writers_racing_on_one_subscription_agree(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic]
) -> None:
    topic = f"{topic_name}-catalog"
    a = open_catalog(shared, kafka_bootstrap, topic, "A")
    b = open_catalog(shared, kafka_bootstrap, topic, "B")
    record = learned(777, DNS, f"{topic_name}-dns")
    results = race(a, b, record, record)
    # Both writers appended at offset 0: one landed there and won; the other read again,
    # found the subscription and wrote nothing more.
    assert a.conflicts + b.conflicts == 1
    assert results["A"] == results["B"]
    winner = results["A"].writer
    assert winner in ("A", "B") and results["A"].generation == 1
    late = open_catalog(shared, kafka_bootstrap, topic, "C")
    (only,) = late.records()
    assert only.writer == winner and late.state.end == 2 and late.state.ignored == 1


def test_racing_writers_with_two_filters_get_two_generations(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic]
) -> None:
    topic = f"{topic_name}-catalog"
    a = open_catalog(shared, kafka_bootstrap, topic, "A")
    b = open_catalog(shared, kafka_bootstrap, topic, "B")
    results = race(
        a, b, learned(777, DNS, f"{topic_name}-dns"), learned(777, IF, f"{topic_name}-if")
    )
    assert a.conflicts + b.conflicts == 1
    assert sorted(r.generation for r in results.values()) == [1, 2]
    late = open_catalog(shared, kafka_bootstrap, topic, "C")
    assert [(r.writer, r.generation) for r in late.find(777)] == sorted(
        ((r.writer, r.generation) for r in results.values()), key=lambda pair: pair[1]
    )


def test_a_late_follower_sees_everything_in_order(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic]
) -> None:
    topic = f"{topic_name}-catalog"
    writer_catalog = build_catalog(parse_subscriptions(subscriptions(topic_name)))
    writer_catalog.attach(open_catalog(shared, kafka_bootstrap, topic, "A"))
    builder = MessageBuilder(writer_catalog)
    for sub_id in (801, 802):
        assert isinstance(builder.build(telemetry(sub_id, DNS, ["x"], 1), "t"), list)
    late = open_catalog(shared, kafka_bootstrap, topic, "late")
    records = late.records()
    assert [(r.id, r.origin) for r in records] == [
        (1042, "file"),
        (801, "learned"),
        (802, "learned"),
    ]
    assert {r.writer for r in records} == {"A"}
    # A producer starting later, whose messages carry no metadata, routes like the first.
    reader_catalog = build_catalog(parse_subscriptions(subscriptions(topic_name)))
    reader_catalog.attach(late)
    (message,) = MessageBuilder(reader_catalog).build(telemetry(802, None, ["y"], 2), "t")  # type: ignore[misc]
    assert isinstance(message, KeyedMessage)
    assert message.topic == records[2].topics[0] == f"{topic_name}-sys-system-dns-resolver-search"


# --------------------------------------------------------------------------- ingest


def produce_notifications(
    bootstrap: str, catalog: Catalog, notifications: list[bytes]
) -> dict[str, int]:
    """What a producer does: build the keyed messages (learning on the way) and send them;
    with --create-topics the learned topics were created by the shared catalog."""
    builder = MessageBuilder(catalog)
    producer = Producer(producer_config(bootstrap))
    counts: dict[str, int] = {}
    for index, raw in enumerate(notifications):
        built = builder.build(raw, f"test:{index}")
        assert isinstance(built, list), built
        for message in built:
            producer.produce(message.topic, raw, message.key, headers=list(message.headers))
            counts[message.topic] = counts.get(message.topic, 0) + 1
    assert producer.flush(30) == 0
    return counts


def count(conn: ChdbConnection, table: str) -> int:
    return int(conn.query(f"SELECT count() AS n FROM {qualified(DATABASE, table)}")[0]["n"])


def errors_for(conn: ChdbConnection, topics: list[str]) -> int:
    rows = conn.query(
        f"SELECT count() AS n FROM {qualified(DATABASE, 'errors')} "
        "WHERE has({topics:Array(String)}, kafka_topic)",
        {"topics": topics},
    )
    return int(rows[0]["n"])


def test_ingest_creates_tables_of_a_learned_subscription_before_inserting(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic], chdb_conn: ChdbConnection
) -> None:
    topic = f"{topic_name}-catalog"
    text = subscriptions(topic_name)
    producer_catalog = build_catalog(parse_subscriptions(text))
    producer_shared = open_catalog(shared, kafka_bootstrap, topic, "producer", create_topics=True)
    producer_catalog.attach(producer_shared)
    ensure_topics(kafka_bootstrap, list(producer_catalog.topics))
    notifications = [telemetry(1042, None, [f"eth{i}"], i) for i in range(3)]
    notifications += [telemetry(777, DNS, [f"d{i}.example", "x.example"], i) for i in range(5)]
    sent = produce_notifications(kafka_bootstrap, producer_catalog, notifications)
    learned_topic = f"{topic_name}-sys-system-dns-resolver-search"
    file_topic = f"{topic_name}-if-interfaces-interface"
    assert sent == {file_topic: 3, learned_topic: 5}

    # ingest's own file does not have subscription 777: the shared catalog does.
    ingest_catalog = build_catalog(parse_subscriptions(text))
    assert learned_topic not in {spec.name for spec in ingest_catalog.topics}
    result = ingest(
        ingest_catalog,
        kafka_bootstrap,
        "",
        group=f"g-{topic_name}",
        database=DATABASE,
        dead_letter=False,
        connection=chdb_conn,
        shared=open_catalog(shared, kafka_bootstrap, topic, "ingest"),
    )
    assert result.messages == {file_topic: 3, learned_topic: 5}
    assert result.total_errors == 0 and result.missing_topics == []
    assert errors_for(chdb_conn, [file_topic, learned_topic]) == 0
    tables = topic_tables(learned_topic, DATABASE)
    assert count(chdb_conn, tables.history) == 5
    keys = chdb_conn.query(
        f"SELECT DISTINCT message_key FROM {qualified(DATABASE, tables.history)} ORDER BY 1"
    )
    assert keys[0]["message_key"] == (f"pe1\n777\n{DNS}[.='d0.example'] | {DNS}[.='x.example']")
    # Typed instance tables, from the record recompiled here: one row per entry per message.
    assert count(chdb_conn, tables.ihist) == 10
    current = chdb_conn.query(
        f"SELECT instance_path, search FROM {qualified(DATABASE, tables.instances)} ORDER BY 1"
    )
    names = [f"d{i}.example" for i in range(5)] + ["x.example"]
    assert [(r["instance_path"], r["search"]) for r in current] == [
        (f"{DNS}[.='{name}']", name) for name in names
    ]


def test_ingest_following_picks_up_a_subscription_learned_mid_run(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic], chdb_conn: ChdbConnection
) -> None:
    topic = f"{topic_name}-catalog"
    text = subscriptions(topic_name)
    learned_topic = f"{topic_name}-sys-system-dns-resolver-search"
    tables = topic_tables(learned_topic, DATABASE)
    ingest_shared = open_catalog(shared, kafka_bootstrap, topic, "ingest")
    producer_shared = open_catalog(shared, kafka_bootstrap, topic, "producer", create_topics=True)
    ingest_catalog = build_catalog(parse_subscriptions(text))
    ensure_topics(kafka_bootstrap, list(ingest_catalog.topics))
    produced = threading.Event()
    failures: list[BaseException] = []

    def producer() -> None:
        try:
            time.sleep(3)  # ingest is running, subscribed to the file's topic only
            catalog = build_catalog(parse_subscriptions(text))
            catalog.attach(producer_shared)
            notes = [telemetry(888, DNS, [f"n{i}.example"], i) for i in range(4)]
            produce_notifications(kafka_bootstrap, catalog, notes)
        except BaseException as exc:
            failures.append(exc)
        finally:
            produced.set()

    def stored() -> int:
        found = chdb_conn.query(
            "SELECT count() AS n FROM system.tables WHERE database = {db:String} "
            "AND name = {t:String}",
            {"db": DATABASE, "t": tables.history},
        )
        return count(chdb_conn, tables.history) if int(found[0]["n"]) else 0

    thread = threading.Thread(target=producer)
    thread.start()
    deadline = time.monotonic() + 90
    result = ingest(
        ingest_catalog,
        kafka_bootstrap,
        "",
        follow=True,
        group=f"g-{topic_name}",
        database=DATABASE,
        dead_letter=False,
        connection=chdb_conn,
        shared=ingest_shared,
        should_stop=lambda: time.monotonic() > deadline or (produced.is_set() and stored() >= 4),
    )
    thread.join(30)
    assert not failures, failures
    assert result.messages == {learned_topic: 4}
    assert stored() == 4
    assert count(chdb_conn, tables.ihist) == 4  # the typed tables were made mid-run too
    assert errors_for(chdb_conn, [learned_topic]) == 0


def test_a_spark_executor_learns_and_ingest_stores_without_errors(
    kafka_bootstrap: str,
    topic_name: str,
    shared: list[CatalogTopic],
    chdb_conn: ChdbConnection,
    spark: Any,
    tmp_path: Path,
) -> None:
    """The whole path: ``produce --shared-catalog --create-topics`` on Spark, whose executor
    learns subscription 777 from the metadata, writes it through the catalog and creates its
    topic; ingest, whose file lacks 777, creates its tables and stores exactly its messages."""
    topic = f"{topic_name}-catalog"
    file = tmp_path / "subscriptions.yaml"
    file.write_text(subscriptions(topic_name), encoding="utf-8")
    data = tmp_path / "in.jsonl"
    notes = [telemetry(777, DNS, [f"s{i}.example"], i) for i in range(6)]
    data.write_bytes(b"".join(note + b"\n" for note in notes))
    config = JobConfig.of(
        subscriptions=str(file),
        inputs=(str(data),),
        bootstrap=kafka_bootstrap,
        create_topics=True,
        catalog_topic=topic,
    )
    summary = run(config, spark)
    learned_topic = f"{topic_name}-sys-system-dns-resolver-search"
    assert dict(summary.tally.produced) == {learned_topic: 6}
    records = open_catalog(shared, kafka_bootstrap, topic, "reader").records()
    assert [(r.id, r.origin) for r in records] == [(1042, "file"), (777, "learned")]
    result = ingest(
        build_catalog(parse_subscriptions(subscriptions(topic_name))),
        kafka_bootstrap,
        "",
        group=f"g-{topic_name}",
        database=DATABASE,
        connection=chdb_conn,
        shared=open_catalog(shared, kafka_bootstrap, topic, "ingest"),
    )
    assert result.messages == {learned_topic: 6}
    assert result.total_errors == 0
    assert count(chdb_conn, topic_tables(learned_topic, DATABASE).history) == 6


# --------------------------------------------------------------------------- the CLI


def test_cli_catalog_show_and_ddl_generate_read_the_shared_catalog(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic], tmp_path: Path
) -> None:
    topic = f"{topic_name}-catalog"
    catalog = build_catalog(parse_subscriptions(subscriptions(topic_name)))
    catalog.attach(open_catalog(shared, kafka_bootstrap, topic, "A"))
    assert isinstance(MessageBuilder(catalog).build(telemetry(777, DNS, ["a"], 1), "t"), list)
    runner = CliRunner()
    shown = runner.invoke(
        main,
        ["catalog", "show", "--bootstrap", kafka_bootstrap, "--catalog-topic", topic, "--json"],
    )
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.output)
    assert [(r["subscription_id"], r["origin"]) for r in document["subscriptions"]] == [
        (1042, "file"),
        (777, "learned"),
    ]
    learned_row = document["subscriptions"][1]
    assert learned_row["yang_library_content_id"] == "cid-7" and learned_row["generation"] == 1
    names = [t["name"] for t in document["topics"]]
    assert names == [spec.name for spec in topic_specs(shared[0].records())]
    generated = runner.invoke(
        main,
        [
            "ddl",
            "generate",
            "--bootstrap",
            kafka_bootstrap,
            "--catalog-topic",
            topic,
            "--mode",
            "embedded",
        ],
    )
    assert generated.exit_code == 0, generated.output
    for name in names:
        tables = topic_tables(name, "yangkey")
        assert f"`{tables.queue}`" in generated.output
        assert f"`{tables.ihist}`" in generated.output  # typed, the learned topic too
    assert "warning" not in generated.output
    absent = runner.invoke(
        main, ["catalog", "show", "--bootstrap", kafka_bootstrap, "--catalog-topic", "t-none"]
    )
    assert absent.exit_code != 0 and "no shared catalog here" in absent.output
    missing = runner.invoke(main, ["catalog", "show", "--bootstrap", "127.0.0.1:1"])
    assert missing.exit_code != 0
    assert missing.output.count("error:") == 1 and "Traceback" not in missing.output


def test_cli_ddl_apply_follows_the_shared_catalog(
    kafka_bootstrap: str, topic_name: str, shared: list[CatalogTopic], tmp_path: Path
) -> None:
    """``ddl apply --bootstrap --follow`` (the server-mode path: on a server the Kafka engine
    tables then consume the new topic) creates the tables of a subscription learned after it
    started; Ctrl-C stops it with no traceback."""
    topic = f"{topic_name}-catalog"
    file = tmp_path / "subscriptions.yaml"
    file.write_text(subscriptions(topic_name), encoding="utf-8")
    command = [
        sys.executable, "-m", "yangkey.cli", "ddl", "apply", "-s", str(file),
        "--embedded", str(tmp_path / "chdb"), "--bootstrap", kafka_bootstrap,
        "--catalog-topic", topic, "--follow",
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the file's tables first, then it follows
            lines.append(line)
            if line.startswith("following"):
                break
        learned_tables = topic_tables(f"{topic_name}-sys-system-dns-resolver-search", "yangkey")
        assert not any(learned_tables.history in line for line in lines)
        catalog = build_catalog(parse_subscriptions(subscriptions(topic_name)))
        catalog.attach(open_catalog(shared, kafka_bootstrap, topic, "producer"))
        assert isinstance(MessageBuilder(catalog).build(telemetry(777, DNS, ["a"], 1), "t"), list)
        for line in process.stderr:
            lines.append(line)
            if learned_tables.queue in line:  # created after the views that read it
                break
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    created = [line.split()[-1] for line in lines if line.startswith("created")]
    assert f"yangkey.{learned_tables.queue}" in created
    assert f"yangkey.{learned_tables.history}" in created
    assert "Traceback" not in rest and process.returncode in (0, 1, 130)
