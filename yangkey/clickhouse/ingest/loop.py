"""The consume loop: one confluent-kafka consumer into the queue tables, offsets committed only
once the rows are stored.

Each polled batch becomes one Arrow INSERT per topic (:mod:`~yangkey.clickhouse.ingest.arrow`)
on the batch inserter's thread (:mod:`~yangkey.clickhouse.ingest.inserter`); its offsets are
committed, stamped with the database's identity (:mod:`~yangkey.clickhouse.ingest.offsets`),
when it is stored. Without ``follow`` the run stops once every assigned partition has
reported end of partition; with a ``refresh`` (the shared catalog) it subscribes to the topics
that appear meanwhile, checked every ``refresh_interval`` seconds and before it stops.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.connection import ChdbConnection, Connection
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest.arrow import encode_rows
from yangkey.clickhouse.ingest.events import IngestEvents, IngestResult, Silent
from yangkey.clickhouse.ingest.inserter import BatchInserter
from yangkey.clickhouse.ingest.offsets import DatabaseIdentity, static_member_id
from yangkey.clickhouse.ingest.rows import QueueRow, add_instances, row_from_message
from yangkey.clickhouse.tables import ERRORS_TABLE
from yangkey.errors import BrokerError, ConfigError
from yangkey.kafka.config import consumer_config, kafka_reason
from yangkey.kafka.logs import logged
from yangkey.messages import EXPIRED

if TYPE_CHECKING:
    from yangkey.clickhouse.instances import CatalogFeeds

DEFAULT_GROUP = "yangkey-embedded"
#: Each INSERT costs the embedded engine tens of ms whatever its size (planning the views, one
#: part per table): at 10,000 rows that was most of the cost (benchmarks/bench_clickhouse.py).
DEFAULT_BATCH_SIZE = 50_000
#: librdkafka hands out at most this many messages per consume() call.
MAX_BATCH_SIZE = 1_000_000
CLOSE_TIMEOUT = 10.0
"""Seconds a stop waits for the consumer to leave its group: with the broker gone,
librdkafka's close waits on the coordinator far longer, and Ctrl-C seemed ignored."""

Position = tuple[str, int]
"""(topic, partition)."""


def close_within(consumer: Any, seconds: float) -> bool:
    """Close ``consumer`` on a helper thread; False if it had not finished after ``seconds``
    (it keeps trying in the background until the process exits)."""
    closer = threading.Thread(target=consumer.close, name="yangkey-consumer-close", daemon=True)
    closer.start()
    closer.join(seconds)
    return not closer.is_alive()


@contextlib.contextmanager
def sigterm_stops() -> Iterator[Callable[[], bool]]:
    """While the block runs, SIGTERM (a service manager, ``kill``) asks the consume loop to
    stop after the batch it is on, like Ctrl-C: commit, summary, exit 0. A flag rather than
    an exception, so that a batch is never cut between its insert and its commit."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return

    def on_term(signum: int, _frame: object) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield lambda: bool(received)
    finally:
        signal.signal(signal.SIGTERM, previous)


def errors_since(
    conn: Connection, database: str, since: str
) -> tuple[dict[str, int], dict[str, int]]:
    """Rows the errors table received since ``since``, per topic: (errors, expired)."""
    rows = conn.query(
        "SELECT kafka_topic AS topic, error_kind = {expired:String} AS expired, count() AS n "
        f"FROM {qualified(database, ERRORS_TABLE)} "
        "WHERE received_at >= toDateTime64({since:String}, 3, 'UTC') "
        "GROUP BY kafka_topic, expired",
        {"since": since, "expired": EXPIRED},
    )
    errors: dict[str, int] = {}
    expired: dict[str, int] = {}
    for row in rows:
        (expired if row["expired"] else errors)[str(row["topic"])] = int(row["n"])
    return errors, expired


class IngestLoop:
    """One run of the consumer over ``topics`` (their queue tables already created).

    ``feeds``: records get the instance feed header (``add_instances``,
    :mod:`~yangkey.clickhouse.ingest.rows`). ``refresh`` returns the topics wanted now, their
    tables created: the consumer subscribes to those that exist in Kafka (checked again at
    each refresh)."""

    def __init__(
        self,
        conn: Connection,
        topics: Sequence[str],
        bootstrap: str,
        *,
        database: str = "yangkey",
        follow: bool = False,
        group: str = DEFAULT_GROUP,
        batch_size: int = DEFAULT_BATCH_SIZE,
        kafka_config: Mapping[str, Any] | None = None,
        poll_timeout: float = 1.0,
        assignment_timeout: float = 60.0,
        events: IngestEvents | None = None,
        should_stop: Callable[[], bool] | None = None,
        feeds: CatalogFeeds | None = None,
        refresh: Callable[[], Sequence[str]] | None = None,
        refresh_interval: float = 1.0,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(f"batch size must be between 1 and {MAX_BATCH_SIZE}")
        self.conn = conn
        self.topics = list(topics)
        self.bootstrap = bootstrap
        self.database = database
        self.follow = follow
        self.group = group
        self.batch_size = batch_size
        self.kafka_config = kafka_config
        self.poll_timeout = poll_timeout
        self.assignment_timeout = assignment_timeout
        self.events: IngestEvents = events or Silent()
        self.should_stop = should_stop
        self.feeds = feeds
        self.refresh = refresh
        self.refresh_interval = refresh_interval
        self.result = IngestResult()
        self.identity: DatabaseIdentity | None = None
        self.present: list[str] = []
        """The wanted topics that exist in Kafka: the subscription."""
        self.wanted = list(topics)
        self.refreshed = 0.0
        self.assignment: set[Position] = set()
        self.at_end: set[Position] = set()
        self.failures: list[BaseException] = []
        """Raised on the loop's thread: a foreign offset (on_assign), a revoke's flush."""
        self.consumer: Any = None
        self.inserter: BatchInserter | None = None

    @property
    def where(self) -> str:
        return f"kafka://{self.bootstrap}"

    # -- the consumer's callbacks (librdkafka calls them from inside consume()) ------------

    def on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        for tp in partitions:
            self.assignment.add((tp.topic, tp.partition))
        if self.identity is not None and partitions:
            # checked here, before any message of these partitions is returned
            try:
                self.identity.check_committed(
                    consumer.committed(partitions, timeout=30), self.group
                )
            except ClickHouseError as exc:
                self.failures.append(exc)
            except KafkaException as exc:
                self.failures.append(
                    ClickHouseError(
                        f"cannot read the committed offsets of group {self.group!r}: "
                        f"{kafka_reason(exc)}",
                        source=self.where,
                    )
                )

    def on_revoke(self, _consumer: Any, partitions: list[Any]) -> None:
        # the batch in flight may hold offsets of these partitions: stored and committed
        # before their next owner starts from the committed offsets
        assert self.inserter is not None
        try:
            self.inserter.flush()
        except Exception as exc:  # raised once consume() returns
            self.failures.append(exc)
        for tp in partitions:
            self.assignment.discard((tp.topic, tp.partition))
            self.at_end.discard((tp.topic, tp.partition))

    def stored(self, counts: dict[str, int], next_offsets: dict[Position, int]) -> None:
        """The batch is in the tables: count it, then commit its offsets."""
        result = self.result
        for topic, n in counts.items():
            result.messages[topic] = result.messages.get(topic, 0) + n
        if self.identity is not None:
            self.identity.verify()
            metadata = self.identity.metadata
            offsets = [TopicPartition(t, p, o, metadata) for (t, p), o in next_offsets.items()]
        else:
            offsets = [TopicPartition(t, p, o) for (t, p), o in next_offsets.items()]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            # e.g. the partitions were revoked meanwhile: their new owner re-reads the
            # batch, and the duplicates are harmless (at-least-once, see ingest's module doc)
            self.events.note(f"offset commit failed, the batch may be read again: {exc}")
        result.batches += 1

    # -- steps -----------------------------------------------------------------------------

    def _consumer(self) -> Any:
        # the pipeline's consumer defaults (no auto commit, read_committed, earliest) under
        # the operator's settings; auto commit stays off whatever they say: offsets are
        # committed only once the rows are stored
        overrides = {
            "client.id": "yangkey-ingest",
            "group.instance.id": static_member_id(self.group, self.conn, self.database),
            **(self.kafka_config or {}),
        }
        config = consumer_config(self.bootstrap, self.group, overrides)
        config["enable.auto.commit"] = False
        config["enable.partition.eof"] = True
        try:
            return Consumer(logged(config))
        except KafkaException as exc:  # e.g. an unknown -X setting: one error line
            raise ConfigError(
                f"invalid Kafka consumer settings: {kafka_reason(exc)}", source="kafka config"
            ) from None

    def _subscribe(self) -> None:
        self.consumer.subscribe(
            self.present, on_assign=self.on_assign, on_revoke=self.on_revoke, on_lost=self.on_revoke
        )

    def grow(self) -> bool:
        """Subscribe to the topics the refresh adds once they exist; True if it did."""
        assert self.refresh is not None and self.inserter is not None
        self.refreshed = time.monotonic()
        self.inserter.flush()  # the refresh may create tables: not beside an INSERT
        self.wanted = list(dict.fromkeys((*self.wanted, *self.refresh())))
        if all(t in self.present for t in self.wanted):
            return False
        try:
            found = self.consumer.list_topics(timeout=15).topics
        except KafkaException as exc:
            self.events.note(f"cannot list topics: {kafka_reason(exc)}")
            return False
        new = [
            t
            for t in self.wanted
            if t not in self.present and t in found and found[t].error is None
        ]
        if not new:
            return False
        self.present.extend(new)
        self.result.missing_topics = [t for t in self.wanted if t not in self.present]
        self.events.note("following new topics: " + ", ".join(new))
        self._subscribe()
        return True

    def poll(self) -> int:
        """One ``consume()``: its records encoded and handed to the inserter; how many."""
        assert self.inserter is not None
        messages = self.consumer.consume(num_messages=self.batch_size, timeout=self.poll_timeout)
        if self.failures:
            raise self.failures[0]
        rows: dict[str, list[QueueRow]] = {}
        next_offsets: dict[Position, int] = {}
        feeds, at_end = self.feeds, self.at_end  # locals: this loop runs once per message
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add((str(message.topic()), int(message.partition() or 0)))
                    continue
                if error.fatal():
                    raise BrokerError(f"Kafka consumer failed: {error.str()}", source=self.where)
                self.events.note(f"Kafka reports {error.str()}")
                continue
            row = row_from_message(message)
            if feeds is not None:
                row = add_instances(feeds, row)
            if row.error:
                self.result.decode_errors += 1
            rows.setdefault(row.topic, []).append(row)
            position = (row.topic, row.partition)
            at_end.discard(position)
            next_offsets[position] = row.offset + 1
        if rows:
            encoded = [(topic, encode_rows(topic_rows)) for topic, topic_rows in rows.items()]
            counts = {topic: len(topic_rows) for topic, topic_rows in rows.items()}
            self.inserter.submit(encoded, partial(self.stored, counts, next_offsets))
        return len(messages)

    def _consume(self, sigterm: Callable[[], bool]) -> None:
        """The loop: poll until caught up (or, following, until told to stop)."""
        assert self.inserter is not None
        waiting_since = time.monotonic()
        while True:
            if sigterm():
                self.inserter.flush()
                self.events.note("terminated (SIGTERM); the last batch was committed")
                return
            if self.should_stop is not None and self.should_stop():
                return
            if (
                self.refresh is not None
                and time.monotonic() - self.refreshed >= self.refresh_interval
            ):
                self.grow()
            if self.poll() < self.batch_size:
                # caught up: the next poll waits for messages, nothing to overlap the insert
                # with, so store and commit this batch now rather than after that wait
                self.inserter.flush()
            self.events.progress(self.result)
            if self.follow:
                continue
            if (self.assignment or not self.present) and self.at_end >= self.assignment:
                # a subscription learned meanwhile may have brought a topic: not done yet
                if self.refresh is None or not self.grow():
                    return
                waiting_since = time.monotonic()
                continue
            if not self.assignment and time.monotonic() - waiting_since > self.assignment_timeout:
                raise BrokerError(
                    f"no partition was assigned within {self.assignment_timeout:.0f}s "
                    f"(is another consumer of group {self.group!r} holding them?)",
                    source=self.where,
                )

    def run(self) -> IngestResult:
        """Consume; the result once the offsets of everything stored are committed."""
        result = self.result
        started_at = self.conn.query("SELECT toString(now64(3, 'UTC')) AS t")[0]["t"]
        started = time.monotonic()
        self.consumer = self._consumer()
        self.inserter = inserter = BatchInserter(self.conn, self.database)
        failed = False
        terminated = contextlib.ExitStack()
        sigterm = terminated.enter_context(sigterm_stops())
        try:
            if isinstance(self.conn, ChdbConnection):
                self.identity = DatabaseIdentity(self.conn, self.database)
            try:
                metadata = self.consumer.list_topics(timeout=15)
            except KafkaException as exc:
                raise BrokerError(
                    f"cannot reach Kafka: {kafka_reason(exc)}", source=self.where
                ) from None
            self.present = [
                t for t in self.topics if t in metadata.topics and metadata.topics[t].error is None
            ]
            result.missing_topics = [t for t in self.topics if t not in self.present]
            if result.missing_topics:
                self.events.note("topics not found (skipped): " + ", ".join(result.missing_topics))
            if not self.present and self.refresh is None:
                return result
            self.refreshed = time.monotonic()
            if self.present:
                self._subscribe()
            self._consume(sigterm)
            inserter.flush()
        except KeyboardInterrupt:
            try:
                inserter.flush()  # the batch in flight: stored and committed, as the line says
            except BaseException:
                failed = True
                raise
            self.events.note("interrupted; the last batch was committed")
        except BaseException:
            failed = True
            raise
        finally:
            inserter.close()
            terminated.close()
            if not close_within(self.consumer, CLOSE_TIMEOUT):
                self.events.note(
                    f"the broker did not answer the consumer's close within {CLOSE_TIMEOUT:.0f}s;"
                    " stopped without leaving the group (offsets were committed batch by batch)"
                )
            result.seconds = time.monotonic() - started
            try:
                if not failed:
                    result.errors, result.expired = errors_since(
                        self.conn, self.database, started_at
                    )
            finally:
                # after a failure the caller prints the one error line: no "done" summary
                self.events.finished(result, failed=failed)
        return result
