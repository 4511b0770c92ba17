"""A kill -9 of ``yangkey ingest`` loses nothing and shows no duplicates in current state.

Against the real broker and chdb, with ``yangkey ingest`` as a separate process (chdb holds one
data path per process, and only a separate process can be SIGKILLed):

1. ~37k keyed messages (``yangkey.demo.sample`` data through ``MessageBuilder``: 1,000 nodes,
   15,000 keys, several versions for most interface keys, a replayed older update per node)
   go to the catalog's topics, under an organisation prefix unique to this run.
2. ``yangkey ingest`` (the plain CLI) is SIGKILLed once the consumer group has committed a
   fifth of the offsets (not all of them): an arbitrary point of its loop.
3. Where a plain kill lands is up to the scheduler; only the window between a batch's INSERT
   and its offset commit makes duplicates, and it is a small part of a batch (in trials a kill
   as in step 2 made duplicates in about one run of six). So that the test always covers that
   window (and is not flaky), the second run is the same CLI in a process whose consumer
   writes a marker and waits *just before committing*: the test SIGKILLs it there, after its
   batch is in ClickHouse and before Kafka knows it.
4. A third plain run goes to the end (exit 0).

Then: every produced (topic, partition, offset) is in history (no loss), some are there twice
(the kill really hit between insert and commit), and current state has exactly one row per key,
the newest message of that key (no duplicates, newest wins).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from factories import unique_name

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse.connection import open_embedded
from yangkey.clickhouse.queries import current_state
from yangkey.demo.sample import generate
from yangkey.kafka.config import ensure_topics, producer_config
from yangkey.messages import HEADER_EVENT_TIME, HEADER_SEQUENCE_NUMBER, KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.spark.preflight import topic_specs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "subscriptions.yaml"
DATABASE = "yangkey"
BATCH_SIZE = 1_000

#: ``yangkey ingest`` with one change: the consumer's commit() writes a line to the marker file
#: (argv[1]) and sleeps before committing, so the test can SIGKILL the process while the
#: batch it just inserted is not committed. Everything else is the real CLI code path.
PAUSE_BEFORE_COMMIT = r"""
import sys, time
from confluent_kafka import Consumer
import yangkey.clickhouse.ingest.loop as ingest_module
from yangkey.cli import main

marker = sys.argv[1]

class PauseBeforeCommit(Consumer):
    def commit(self, *args, **kwargs):
        with open(marker, "a") as out:
            out.write("inserted, not committed\n")
        time.sleep(120)
        return super().commit(*args, **kwargs)

ingest_module.Consumer = PauseBeforeCommit
sys.argv = ["yangkey", *sys.argv[2:]]
main()
"""

Position = tuple[str, int, int]


def write_subscriptions(tmp_path: Path, prefix: str) -> Path:
    """examples/subscriptions.yaml with this run's organisation prefix and dead-letter topic,
    and a retention of ten years."""
    text = EXAMPLE.read_text(encoding="utf-8")
    text, n_prefix = re.subn(
        r"(?m)^organisation_prefix:.*$", f"organisation_prefix: {prefix}", text
    )
    text, n_dead = re.subn(
        r"(?m)^dead_letter_topic:.*$", f"dead_letter_topic: {prefix}-dead-letter", text
    )
    assert (n_prefix, n_dead) == (1, 1), "examples/subscriptions.yaml changed shape"
    # the sample's event times are fixed (yangkey.demo.sample.START): with the example's retention
    # of days they would be past it, dropped by the history TTL and counted as expired
    text = re.sub(r"(?m)^(\s*)retention:.*$", r"\1retention: 3650d", text)
    path = tmp_path / "subscriptions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def build_messages(catalog: Catalog) -> list[KeyedMessage]:
    """Many keys, several versions of most interface keys, in producer order."""
    data = generate(nodes=1000, interfaces=10, rounds=20, seed=20261120)
    builder = MessageBuilder(catalog)
    messages: list[KeyedMessage] = []
    rejected = 0
    for index, raw in enumerate(data.records):
        built = builder.build(raw, f"sample:{index}")
        if isinstance(built, Rejection):
            rejected += 1  # the sample's deliberately bad notifications
            continue
        messages.extend(built)
    assert rejected == data.expected.bad
    return messages


def produce_all(bootstrap: str, messages: list[KeyedMessage]) -> list[Position]:
    """Produce ``messages``; their (topic, partition, offset), in the same order."""
    positions: list[Position | None] = [None] * len(messages)
    errors: list[str] = []

    def delivered(index: int) -> Any:
        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                errors.append(err.str())
            else:
                topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
                positions[index] = (str(topic), int(partition or 0), int(offset or 0))

        return on_delivery

    producer = Producer(producer_config(bootstrap, {"linger.ms": 50}))
    for index, message in enumerate(messages):
        while True:
            try:
                producer.produce(
                    message.topic,
                    value=message.value,
                    key=message.key,
                    headers=list(message.headers),
                    on_delivery=delivered(index),
                )
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors[:5]
    done = [p for p in positions if p is not None]
    assert len(done) == len(messages)
    return done


class CommittedOffsets:
    """The consumer group's committed offsets, summed (offsets start at 0 and have no gaps:
    an idempotent, non-transactional producer writes no control records)."""

    def __init__(self, bootstrap: str, group: str, partitions: list[tuple[str, int]]) -> None:
        self.partitions = partitions
        # never subscribes: committed() only asks the group coordinator
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
        )

    def total(self) -> int:
        deadline = time.monotonic() + 30
        while True:
            try:
                offsets = self.consumer.committed(
                    [TopicPartition(t, p) for t, p in self.partitions], timeout=10
                )
            except KafkaException as exc:
                # a new group's coordinator is still loading, or moved: ask again
                error = exc.args[0]
                transient = error.retriable() or error.code() in (
                    KafkaError.NOT_COORDINATOR,
                    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                    KafkaError.COORDINATOR_NOT_AVAILABLE,
                )
                if not transient or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                continue
            return sum(max(tp.offset, 0) for tp in offsets)

    def close(self) -> None:
        self.consumer.close()


class Ingest:
    """One ``yangkey ingest`` process (or the pause-before-commit variant), output to a log."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log
        self.out = log.open("ab")
        self.process = subprocess.Popen(
            argv, stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.running():
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.out.close()

    def wait(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            self.out.close()

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]


def wait_until(condition: Any, timeout: float, what: str, ingest: Ingest) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        code = ingest.process.poll()
        assert code is None, f"ingest exited ({code}) before {what}:\n{ingest.output()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n{ingest.output()}"
        time.sleep(0.02)


def event_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_kill_9_and_restart_loses_nothing_and_duplicates_nothing(
    kafka_broker: Any, tmp_path: Path, processes: list[Ingest]
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    prefix = unique_name("crash")
    subscriptions = write_subscriptions(tmp_path, prefix)
    catalog = load_catalog(subscriptions)
    ensure_topics(bootstrap, topic_specs(catalog, None))

    messages = build_messages(catalog)
    positions = produce_all(bootstrap, messages)
    total = len(positions)
    assert total > 30_000
    # the newest message of each key decides current state: highest (event time, sequence
    # number, offset), as the current-state version orders them (one generation here)
    newest: dict[str, tuple[datetime, int, int, Position]] = {}
    for message, position in zip(messages, positions, strict=True):
        assert message.key is not None
        headers = dict(message.headers)
        rank = (
            event_time(headers[HEADER_EVENT_TIME].decode()),
            int(headers[HEADER_SEQUENCE_NUMBER]),
            position[2],
            position,
        )
        key = message.key.decode()
        if key not in newest or rank > newest[key]:
            newest[key] = rank
    versions = Counter(message.key for message in messages)
    assert len(newest) > 10_000
    assert sum(1 for n in versions.values() if n >= 3) > 1_000  # many keys, several versions

    group = f"{prefix}-ingest"
    partitions = sorted({(t, p) for t, p, _ in positions})
    committed = CommittedOffsets(bootstrap, group, partitions)
    chdb_path = tmp_path / "ch"
    args = [
        "ingest",
        "--subscriptions", str(subscriptions),
        "--bootstrap", bootstrap,
        "--embedded", str(chdb_path),
        "--consumer-group", group,
        "--batch-size", str(BATCH_SIZE),
        # a restarted consumer takes over the killed one's partitions at once instead of
        # waiting for its session to time out
        "-X", f"group.instance.id={prefix}-member",
    ]
    plain = [sys.executable, "-m", "yangkey.cli", *args]
    try:
        # 1. the plain CLI, SIGKILLed mid-run once some (not all) offsets are committed
        first = Ingest(plain, tmp_path / "ingest-1.log")
        processes.append(first)
        wait_until(lambda: committed.total() >= total // 5, 60, "a fifth committed", first)
        first.kill()
        after_first = committed.total()
        assert 0 < after_first < total

        # 2. killed after inserting a batch and before committing it
        marker = tmp_path / "inserted-not-committed"
        second = Ingest(
            [sys.executable, "-c", PAUSE_BEFORE_COMMIT, str(marker), *args],
            tmp_path / "ingest-2.log",
        )
        processes.append(second)
        wait_until(marker.exists, 60, "an inserted, uncommitted batch", second)
        second.kill()
        assert committed.total() == after_first  # that batch never got committed

        # 3. the plain CLI again, to the end
        third = Ingest(plain, tmp_path / "ingest-3.log")
        processes.append(third)
        assert third.wait(90) == 0, third.output()
        assert committed.total() == total
    finally:
        committed.close()

    conn = open_embedded(chdb_path)
    try:
        stored = conn.query(
            f"SELECT kafka_topic AS t, kafka_partition AS p, kafka_offset AS o, count() AS n "
            f"FROM `{DATABASE}`.`history` GROUP BY t, p, o"
        )
        state = current_state(conn, DATABASE)
        errors = conn.query(f"SELECT count() AS n FROM `{DATABASE}`.`errors`")[0]["n"]
    finally:
        conn.close()

    assert int(errors) == 0  # every message parsed: none was cut or garbled by a kill
    # no loss: every produced message is in history, at least once
    in_history = {(r["t"], int(r["p"]), int(r["o"])): int(r["n"]) for r in stored}
    missing = [p for p in positions if p not in in_history]
    assert not missing, f"{len(missing)} messages lost, e.g. {missing[:5]}"
    assert len(in_history) == total
    # the kill hit between insert and commit: the replayed batch is in history twice
    twice = sum(1 for n in in_history.values() if n > 1)
    assert twice > 0
    # at most once per run: three runs, two of them killed with their last batch uncommitted
    assert max(in_history.values()) <= 3

    # current state: one row per key, the newest message of that key
    keys = [row["message_key"] for row in state]
    assert len(keys) == len(set(keys)), "a key shows twice in current state"
    assert set(keys) == set(newest)
    for row in state:
        when, _seq, _offset, position = newest[row["message_key"]]
        assert event_time(row["event_time"]) == when, row
        assert (row["kafka_topic"], row["kafka_partition"], row["kafka_offset"]) == position, row
