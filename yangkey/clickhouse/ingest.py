"""Embedded bridge: Kafka -> chdb queue tables (the job a Kafka engine table does on a server).

One confluent-kafka consumer (``enable.auto.commit`` off, ``isolation.level=read_committed``)
subscribes to every catalog topic that exists, plus the dead-letter topic (its records land in
the ``errors`` table with the producer's reason). Each polled batch becomes one Arrow
INSERT per topic into ``<topic>__queue``; the materialized views parse and route the rows; only
then are the offsets committed. A crash between the INSERT and the commit replays the batch:
that is at-least-once, and the current-state tables (ReplacingMergeTree on the message key,
read with FINAL) hide the duplicates; history queries skip them with ``LIMIT 1 BY``.

A message whose key or headers are not UTF-8 still goes in, with ``_error`` set and the value
in ``_raw_message``, so that it reaches the errors table with its position. Without
``follow`` the run stops once every assigned partition has reported end of partition.

Committed offsets claim "everything before is stored", so they must name where. The embedded
database's UUID is written to an identity file in the data directory when ingest starts, and
every offset commit carries it as commit metadata. Before each commit the file must still hold
that UUID (the directory was not removed or replaced under the running process), and the
offsets a new assignment starts from must have been committed with it (or none): otherwise
ingest stops with one error line and commits nothing, instead of reporting success over an
empty database.

With a shared catalog (``_yangkey_catalog``, seed 001), ingest also reads the topics of every
subscription in it, those learned by a producer included: before subscribing to a topic it
creates that topic's tables, so no message of a new subscription reaches the errors table for
want of DDL. The record's XPath is recompiled against the local YANG schema for the topic's
typed instance tables and feed; a topic whose modules are not here keeps the message-level
tables (one warning line). The catalog is re-read every ``refresh_interval`` seconds (and
before a run without ``follow`` stops); new topics get their tables, then the consumer
subscribes to them.

The consumer is a static group member (``group.instance.id`` derived from the group, the data
directory and the database, unless one is given): an ingest restarted after a crash takes its
partitions back at once instead of waiting out the dead member's session timeout (45 s).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.apply import ChdbConnection, Connection, apply, open_embedded
from yangkey.clickhouse.ddl import ERRORS_TABLE, DdlOptions, render_ddl, topic_tables
from yangkey.clickhouse.follower import serve_queries
from yangkey.clickhouse.identifiers import qualified
from yangkey.errors import BrokerError, ConfigError
from yangkey.instances import HEADER_INSTANCES
from yangkey.kafka.config import consumer_config, kafka_reason
from yangkey.kafkalogs import logged
from yangkey.messages import EXPIRED

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.instances import CatalogFeeds
    from yangkey.shared_catalog import SharedSubscription

DEFAULT_GROUP = "yangkey-embedded"
#: Each INSERT costs the embedded engine tens of ms whatever its size (planning the views, one
#: part per table): at 10,000 rows that was most of the cost (benchmarks/bench_clickhouse.py).
DEFAULT_BATCH_SIZE = 50_000
#: librdkafka hands out at most this many messages per consume() call.
MAX_BATCH_SIZE = 1_000_000

#: Column order of an embedded queue table (``QUEUE_VALUE_COLUMNS + QUEUE_VIRTUAL_COLUMNS`` of
#: ``sql_templates/macros.sql.j2``), quoted, as :func:`encode_rows` writes them.
QUEUE_COLUMNS: tuple[str, ...] = (
    "`value`",
    "`_topic`",
    "`_key`",
    "`_offset`",
    "`_partition`",
    "`_timestamp`",
    "`_timestamp_ms`",
    "`_headers.name`",
    "`_headers.value`",
    "`_raw_message`",
    "`_error`",
)


class QueueRow(NamedTuple):
    """One Kafka record as a row of a queue table (the Kafka engine's virtual columns). A named
    tuple: built once per message, where a frozen dataclass cost more than encoding it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp_ms: int | None = None
    error: str = ""
    raw_message: bytes = b""


# -- Arrow -------------------------------------------------------------------------------
# A batch is built column by column (pyarrow) and sent as one Arrow IPC stream: about 2.5x
# less Python per row than writing RowBinary row by row, and cheaper for the engine to read
# (benchmarks/bench_clickhouse.py).

QUEUE_FORMAT = "ArrowStream"

_BINARY = pa.binary()
_QUEUE_SCHEMA = pa.schema(
    [
        ("value", _BINARY),
        ("_topic", pa.dictionary(pa.int32(), pa.string())),
        ("_key", _BINARY),
        ("_offset", pa.uint64()),
        ("_partition", pa.uint64()),
        ("_timestamp", pa.timestamp("s", tz="UTC")),
        ("_timestamp_ms", pa.timestamp("ms", tz="UTC")),
        ("_headers.name", pa.list_(_BINARY)),
        ("_headers.value", pa.list_(_BINARY)),
        ("_raw_message", _BINARY),
        ("_error", pa.string()),
    ]
)
_MAX_DATETIME = 0xFFFFFFFF


def _header_names(names: list[str]) -> pa.Array:
    try:
        return pa.array(names, pa.string()).cast(_BINARY)
    except (UnicodeEncodeError, pa.ArrowInvalid):
        # a header name kept as surrogate escapes: its original bytes
        return pa.array([n.encode("utf-8", "surrogateescape") for n in names], _BINARY)


def encode_rows(rows: Sequence[QueueRow]) -> bytes:
    """``rows`` as one Arrow IPC stream (:data:`QUEUE_FORMAT`) in :data:`QUEUE_COLUMNS` order."""
    headers = [row.headers for row in rows]
    offsets = list(accumulate(map(len, headers), initial=0))
    names = [name for pairs in headers for name, _ in pairs]
    values = [value or b"" for pairs in headers for _, value in pairs]
    list_offsets = pa.array(offsets, pa.int32())
    millis = pa.array([row.timestamp_ms for row in rows], pa.int64())
    # a Nullable(DateTime) holds 0 .. 2**32-1 s; no Kafka timestamp stays NULL
    seconds = pc.min_element_wise(
        pc.max_element_wise(pc.divide(millis, 1000), 0, skip_nulls=False),
        _MAX_DATETIME,
        skip_nulls=False,
    )
    columns = [
        pa.array([row.value or b"" for row in rows], _BINARY),
        pa.array([row.topic for row in rows], pa.string()).dictionary_encode(),
        pa.array([row.key or b"" for row in rows], _BINARY),
        pa.array([row.offset for row in rows], pa.uint64()),
        pa.array([row.partition for row in rows], pa.uint64()),
        seconds.cast(pa.timestamp("s", tz="UTC")),
        millis.cast(pa.timestamp("ms", tz="UTC")),
        pa.ListArray.from_arrays(list_offsets, _header_names(names)),
        pa.ListArray.from_arrays(list_offsets, pa.array(values, _BINARY)),
        pa.array([row.raw_message for row in rows], _BINARY),
        pa.array([row.error for row in rows], pa.string()),
    ]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, _QUEUE_SCHEMA) as writer:
        writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=_QUEUE_SCHEMA))
    data: bytes = sink.getvalue().to_pybytes()
    return data


def insert_rows(conn: Connection, database: str, topic: str, rows: Sequence[QueueRow]) -> None:
    """One INSERT of ``rows`` into the queue table of ``topic``."""
    insert_encoded(conn, database, topic, encode_rows(rows))


def insert_encoded(conn: Connection, database: str, topic: str, data: bytes) -> None:
    """One INSERT of a batch :func:`encode_rows` made into the queue table of ``topic``."""
    table = qualified(database, topic_tables(topic, database).queue)
    conn.insert(table, QUEUE_COLUMNS, data, QUEUE_FORMAT)


# -- Kafka message -> row ------------------------------------------------------------------


def row_from_message(message: Any) -> QueueRow:
    """A confluent-kafka ``Message`` -> :class:`QueueRow`; undecodable key/headers -> _error."""
    value: bytes | None = message.value()
    key: bytes | None = message.key()
    timestamp_type, timestamp = message.timestamp()
    error = ""
    try:
        headers = message.headers() or []
    except (UnicodeDecodeError, ValueError) as exc:
        headers = []
        error = f"message headers cannot be decoded: {exc}"
    if headers:
        try:
            # all at once: LF cannot complete a UTF-8 sequence cut at the end of a value
            b"\n".join([v for _, v in headers]).decode("utf-8")
        except (TypeError, UnicodeDecodeError):  # a None or str value, or not UTF-8
            headers, error = _checked_headers(headers)
    if not error and key is not None:
        try:
            key.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = f"message key is not valid UTF-8 (byte {exc.start})"
    return QueueRow(
        message.topic(),
        message.partition(),
        message.offset(),
        key,
        value,
        headers,
        timestamp if timestamp_type != 0 and timestamp >= 0 else None,
        error,
        (value or b"") if error else b"",
    )


def _checked_headers(
    raw_headers: Sequence[tuple[str, str | bytes | None]],
) -> tuple[list[tuple[str, bytes | None]], str]:
    """Headers with str values as UTF-8 bytes, and why the first one that is not UTF-8 is not."""
    error = ""
    headers: list[tuple[str, bytes | None]] = []
    for name, raw_value in raw_headers:
        header_value = raw_value.encode("utf-8") if isinstance(raw_value, str) else raw_value
        headers.append((name, header_value))
        if not error and header_value is not None:
            try:
                header_value.decode("utf-8")
            except UnicodeDecodeError as exc:
                error = f"header {name!r} is not valid UTF-8 (byte {exc.start})"
    return headers, error


def add_instances(feeds: CatalogFeeds, row: QueueRow) -> QueueRow:
    """``row`` with the instance feed header (docs/design.md#instance-feed), computed here when
    the producer did not send it; a value that does not decode keeps its message-level rows
    and is counted in ``feeds.failures``."""
    if row.error or not row.value or any(name == HEADER_INSTANCES for name, _ in row.headers):
        return row
    header = feeds.header(row.topic, row.value, f"{row.topic} [{row.partition}] @{row.offset}")
    if header is None:
        return row
    return row._replace(headers=[*row.headers, (HEADER_INSTANCES, header)])


# -- the loop ------------------------------------------------------------------------------


class SharedReader(Protocol):
    """The shared catalog as ingest reads it (:class:`yangkey.shared_catalog.SharedCatalog`)."""

    def records(self) -> list[SharedSubscription]: ...


@dataclass
class IngestResult:
    messages: dict[str, int] = field(default_factory=dict)
    """Messages inserted, per topic."""
    errors: dict[str, int] = field(default_factory=dict)
    """Rows that went to the errors table during the run, per topic (decode, key, header
    errors, and dead-letter records)."""
    expired: dict[str, int] = field(default_factory=dict)
    """Good messages whose event time was already older than their topic's retention: the
    history TTL drops them at its next merge; the errors table keeps them (kind ``expired``)."""
    decode_errors: int = 0
    """Messages whose key or headers could not be decoded by the bridge."""
    batches: int = 0
    seconds: float = 0.0
    missing_topics: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.messages.values())

    @property
    def total_errors(self) -> int:
        return sum(self.errors.values())

    @property
    def total_expired(self) -> int:
        return sum(self.expired.values())

    @property
    def rate(self) -> float:
        return self.total / self.seconds if self.seconds > 0 else 0.0


class _Reporter:
    """Rich live table on a terminal, plain lines otherwise (every ``interval`` seconds while
    messages arrive, every ``idle_interval`` seconds while none do)."""

    idle_after = 2.0
    """Seconds without a message before the report says "waiting for messages"."""

    def __init__(
        self,
        enabled: bool,
        log: Callable[[str], None],
        interval: float = 5.0,
        idle_interval: float = 60.0,
    ) -> None:
        self.enabled = enabled
        self.log = log
        self.interval = interval
        self.idle_interval = idle_interval
        self.started = time.monotonic()
        self.last_line = self.started
        self.line_total = 0
        self.last_message = self.started
        self.seen_total = 0
        self.said_waiting = False
        self.live: Any = None
        if enabled and sys.stderr.isatty():
            from rich.console import Console  # noqa: PLC0415
            from rich.live import Live  # noqa: PLC0415

            self.live = Live(console=Console(stderr=True), refresh_per_second=4, transient=False)
            self.live.start()

    def _table(self, result: IngestResult, state: str) -> Any:
        from rich.table import Table  # noqa: PLC0415

        done = state == "done"
        elapsed = result.seconds if done else time.monotonic() - self.started
        rate = result.total / max(elapsed, 1e-9)
        # an average that only decays while nothing arrives says nothing: no rate when idle
        shown_rate = "" if state == WAITING else f" ({rate:,.0f}/s)"
        table = Table(title=f"yangkey ingest - {state}", title_justify="left")
        table.add_column("topic")
        table.add_column("messages", justify="right")
        table.add_column("to errors" if done else "", justify="right")
        table.add_column("expired" if done else "", justify="right")
        for topic in sorted(set(result.messages) | set(result.errors) | set(result.expired)):
            errors = f"{result.errors.get(topic, 0):,}" if done else ""
            expired = f"{result.expired.get(topic, 0):,}" if done else ""
            table.add_row(topic, f"{result.messages.get(topic, 0):,}", errors, expired)
        table.add_row(
            "[bold]total[/bold]",
            f"[bold]{result.total:,}[/bold]{shown_rate}",
            f"{result.total_errors:,}" if done else f"{result.decode_errors:,} undecodable",
            f"{result.total_expired:,}" if done else "",
        )
        return table

    def update(self, result: IngestResult, state: str = "consuming") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if result.total != self.seen_total:
            self.seen_total = result.total
            self.last_message = now
            self.said_waiting = False
        idle = now - self.last_message >= self.idle_after
        if self.live is not None:
            self.live.update(self._table(result, WAITING if idle else state))
            return
        if idle:
            # the first waiting line comes at the usual pace, the next ones far less often
            pause = self.idle_interval if self.said_waiting else self.interval
            if now - self.last_line >= pause:
                self.log(f"ingest: {result.total} messages so far, {WAITING}")
                self.last_line, self.line_total = now, result.total
                self.said_waiting = True
        elif now - self.last_line >= self.interval:
            rate = (result.total - self.line_total) / max(now - self.last_line, 1e-9)
            self.log(f"ingest: {result.total} messages ({rate:.0f}/s) in {result.batches} batches")
            self.last_line, self.line_total = now, result.total

    def close(self, result: IngestResult, *, failed: bool = False) -> None:
        if self.live is not None:
            self.live.update(self._table(result, "failed" if failed else "done"))
            self.live.stop()
            self.live = None
        elif self.enabled and not failed:
            per_topic = ", ".join(f"{t}={n}" for t, n in sorted(result.messages.items()))
            self.log(
                f"ingest: done, {result.total} messages in {result.seconds:.1f}s "
                f"({result.rate:.0f}/s), {result.total_errors} to errors, "
                f"{result.total_expired} expired (older than retention: errors table only)"
                + (f" [{per_topic}]" if per_topic else "")
            )


WAITING = "waiting for messages"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


CLOSE_TIMEOUT = 10.0
"""Seconds a stop waits for the consumer to leave its group: with the broker gone,
librdkafka's close waits on the coordinator far longer, and Ctrl-C seemed ignored."""


def close_within(consumer: Any, seconds: float) -> bool:
    """Close ``consumer`` on a helper thread; False if it had not finished after ``seconds``
    (it keeps trying in the background until the process exits)."""
    closer = threading.Thread(target=consumer.close, name="yangkey-consumer-close", daemon=True)
    closer.start()
    closer.join(seconds)
    return not closer.is_alive()


@contextlib.contextmanager
def _sigterm_stops() -> Iterator[Callable[[], bool]]:
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


def _errors_since(
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


IDENTITY_FILE = "yangkey-ingest-identity.json"
#: Prefix of the offset commit metadata naming the database the rows went to.
_METADATA_PREFIX = "yangkey-database:"


class DatabaseIdentity:
    """The embedded database ingest writes to, as a UUID kept in its data directory."""

    def __init__(self, conn: ChdbConnection, database: str) -> None:
        rows = conn.query(
            "SELECT toString(uuid) AS uuid FROM system.databases WHERE name = {db:String}",
            {"db": database},
        )
        if not rows:
            raise ClickHouseError(f"database {database!r} does not exist", source=conn.description)
        self.uuid = str(rows[0]["uuid"])
        self.database = database
        self.description = conn.description
        self.file = Path(conn.path) / IDENTITY_FILE
        recorded = self._recorded()
        recorded[database] = self.uuid
        try:
            self.file.write_text(json.dumps(recorded, sort_keys=True), encoding="utf-8")
        except OSError as exc:
            raise ClickHouseError(
                f"cannot write the identity file: {exc.strerror}", source=str(self.file)
            ) from None

    def _recorded(self) -> dict[str, str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    @property
    def metadata(self) -> str:
        return _METADATA_PREFIX + self.uuid

    def verify(self) -> None:
        """Raise unless the data directory still holds this database (before a commit)."""
        if self._recorded().get(self.database) != self.uuid:
            raise ClickHouseError(
                "the data directory was removed or replaced while ingest was running: "
                "stopped without committing the last batch (restart ingest on the original "
                "directory, or re-read the topics with a new --group)",
                source=self.description,
            )

    def check_committed(self, committed: Sequence[Any], group: str) -> None:
        """Raise if ``group`` committed any of these offsets for another database."""
        for tp in committed:
            metadata = tp.metadata or ""
            if (
                tp.offset >= 0
                and metadata.startswith(_METADATA_PREFIX)
                and metadata != self.metadata
            ):
                raise ClickHouseError(
                    f"consumer group {group!r} committed {tp.topic} partition {tp.partition} "
                    f"up to offset {tp.offset} into another database "
                    f"({metadata[len(_METADATA_PREFIX) :]}, not {self.uuid}): those messages are "
                    "not here (was the data directory removed?). Point --embedded at the "
                    "original directory, or re-read the topics with a new --group",
                    source=self.description,
                )


def static_member_id(group: str, conn: Connection, database: str) -> str:
    """A ``group.instance.id`` stable across restarts of the same ingest, distinct otherwise."""
    where = str(Path(conn.path).resolve()) if isinstance(conn, ChdbConnection) else conn.description
    identity = "\n".join((group, where, database)).encode("utf-8")
    return "yangkey-ingest-" + hashlib.sha256(identity).hexdigest()[:16]


class BatchInserter:
    """Stores one batch on a helper thread while the loop polls and encodes the next (chdb
    releases the GIL while it inserts): end to end is about the slower of the two, not their
    sum. One batch in flight at most, inserted in order; its ``stored`` callback (the offset
    commit) runs on the caller's thread once its INSERTs have all succeeded, never before."""

    def __init__(self, conn: Connection, database: str) -> None:
        if isinstance(conn, ChdbConnection):
            # ReplacingMergeTree (current state) and AggregatingMergeTree (instance state)
            # would otherwise merge each block as it is written: readers merge anyway (FINAL,
            # GROUP BY), and skipping it saves ~1-1.5 us of engine CPU per row
            conn.command("SET optimize_on_insert = 0")
        self.conn = conn
        self.database = database
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="yangkey-insert")
        self.pending: Future[None] | None = None
        self.stored: Callable[[], None] = _nothing

    def _insert(self, batches: list[tuple[str, bytes]]) -> None:
        for topic, data in batches:
            insert_encoded(self.conn, self.database, topic, data)

    def submit(self, batches: list[tuple[str, bytes]], stored: Callable[[], None]) -> None:
        self.flush()
        self.pending = self.pool.submit(self._insert, batches)
        self.stored = stored

    def flush(self) -> None:
        """Wait for the batch in flight; once stored, run its callback. An insert error is
        raised here (and the callback not run: its offsets stay uncommitted); an interrupt
        while waiting leaves the batch in flight for the next flush."""
        pending = self.pending
        if pending is None:
            return
        error = pending.exception()
        self.pending = None
        stored, self.stored = self.stored, _nothing
        if error is not None:
            raise error
        stored()

    def close(self) -> None:
        """Wait for the thread without running the callback (after a failure)."""
        self.pending = None
        self.pool.shutdown(wait=True)


def _nothing() -> None:
    pass


def consume_into(
    conn: Connection,
    topics: Sequence[str],
    bootstrap: str,
    *,
    database: str = "yangkey",
    follow: bool = False,
    group: str = DEFAULT_GROUP,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = True,
    kafka_config: Mapping[str, Any] | None = None,
    poll_timeout: float = 1.0,
    assignment_timeout: float = 60.0,
    log: Callable[[str], None] = _stderr,
    should_stop: Callable[[], bool] | None = None,
    feeds: CatalogFeeds | None = None,
    refresh: Callable[[], Sequence[str]] | None = None,
    refresh_interval: float = 1.0,
) -> IngestResult:
    """Consume ``topics`` into their (already created) queue tables of ``database``; with
    ``feeds``, records get the instance feed header (:func:`add_instances`).

    ``refresh`` returns the topics wanted now, their tables created: the consumer subscribes
    to those that exist in Kafka (checked again at each refresh)."""
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ConfigError(f"batch size must be between 1 and {MAX_BATCH_SIZE}")
    # the pipeline's consumer defaults (no auto commit, read_committed, earliest) under the
    # operator's settings; auto commit stays off whatever they say: offsets are committed
    # only once the rows are stored
    overrides = {
        "client.id": "yangkey-ingest",
        "group.instance.id": static_member_id(group, conn, database),
        **(kafka_config or {}),
    }
    config = consumer_config(bootstrap, group, overrides)
    config["enable.auto.commit"] = False
    config["enable.partition.eof"] = True
    result = IngestResult()
    started_at = conn.query("SELECT toString(now64(3, 'UTC')) AS t")[0]["t"]
    started = time.monotonic()
    try:
        consumer = Consumer(logged(config))
    except KafkaException as exc:  # e.g. an unknown -X setting: one error line, no traceback
        raise ConfigError(
            f"invalid Kafka consumer settings: {kafka_reason(exc)}", source="kafka config"
        ) from None
    reporter = _Reporter(progress, log)
    inserter = BatchInserter(conn, database)
    revoke_errors: list[BaseException] = []
    failed = False
    terminated = contextlib.ExitStack()
    sigterm = terminated.enter_context(_sigterm_stops())
    try:
        identity = DatabaseIdentity(conn, database) if isinstance(conn, ChdbConnection) else None
        try:
            metadata = consumer.list_topics(timeout=15)
        except KafkaException as exc:
            raise BrokerError(
                f"cannot reach Kafka: {kafka_reason(exc)}",
                source=f"kafka://{bootstrap}",
            ) from None
        present = [t for t in topics if t in metadata.topics and metadata.topics[t].error is None]
        result.missing_topics = [t for t in topics if t not in present]
        if result.missing_topics and progress:
            log("ingest: topics not found (skipped): " + ", ".join(result.missing_topics))
        if not present and refresh is None:
            return result
        wanted = list(topics)
        refreshed = time.monotonic()

        def grow() -> bool:
            """Subscribe to the topics the refresh adds once they exist; True if it did."""
            nonlocal wanted, refreshed
            refreshed = time.monotonic()
            assert refresh is not None
            inserter.flush()  # the refresh may create tables: not beside an INSERT
            wanted = list(dict.fromkeys((*wanted, *refresh())))
            if all(t in present for t in wanted):
                return False
            try:
                found = consumer.list_topics(timeout=15).topics
            except KafkaException as exc:
                if progress:
                    log(f"ingest: cannot list topics: {kafka_reason(exc)}")
                return False
            new = [t for t in wanted if t not in present and t in found and found[t].error is None]
            if not new:
                return False
            present.extend(new)
            result.missing_topics = [t for t in wanted if t not in present]
            if progress:
                log("ingest: following new topics: " + ", ".join(new))
            consumer.subscribe(present, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
            return True

        assignment: set[tuple[str, int]] = set()
        at_end: set[tuple[str, int]] = set()
        foreign: list[ClickHouseError] = []

        def on_assign(consumer: Any, partitions: list[Any]) -> None:
            for tp in partitions:
                assignment.add((tp.topic, tp.partition))
            if identity is not None and partitions:
                # checked here, before any message of these partitions is returned
                try:
                    identity.check_committed(consumer.committed(partitions, timeout=30), group)
                except ClickHouseError as exc:
                    foreign.append(exc)
                except KafkaException as exc:
                    foreign.append(
                        ClickHouseError(
                            f"cannot read the committed offsets of group {group!r}: "
                            f"{kafka_reason(exc)}",
                            source=f"kafka://{bootstrap}",
                        )
                    )

        def on_revoke(_consumer: Any, partitions: list[Any]) -> None:
            # the batch in flight may hold offsets of these partitions: stored and committed
            # before their next owner starts from the committed offsets
            try:
                inserter.flush()
            except Exception as exc:  # raised once consume() returns
                revoke_errors.append(exc)
            for tp in partitions:
                assignment.discard((tp.topic, tp.partition))
                at_end.discard((tp.topic, tp.partition))

        def stored(counts: dict[str, int], next_offsets: dict[tuple[str, int], int]) -> None:
            """The batch is in the tables: count it, then commit its offsets."""
            for topic, n in counts.items():
                result.messages[topic] = result.messages.get(topic, 0) + n
            if identity is not None:
                identity.verify()
                offsets = [
                    TopicPartition(t, p, o, identity.metadata) for (t, p), o in next_offsets.items()
                ]
            else:
                offsets = [TopicPartition(t, p, o) for (t, p), o in next_offsets.items()]
            try:
                consumer.commit(offsets=offsets, asynchronous=False)
            except KafkaException as exc:
                # e.g. the partitions were revoked meanwhile: their new owner re-reads the
                # batch, and the duplicates are harmless (at-least-once, see module doc)
                if progress:
                    log(f"ingest: offset commit failed, the batch may be read again: {exc}")
            result.batches += 1

        if present:
            consumer.subscribe(present, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
        waiting_since = time.monotonic()
        while True:
            if sigterm():
                inserter.flush()
                if progress:
                    log("ingest: terminated (SIGTERM); the last batch was committed")
                break
            if should_stop is not None and should_stop():
                break
            if refresh is not None and time.monotonic() - refreshed >= refresh_interval:
                grow()
            messages = consumer.consume(num_messages=batch_size, timeout=poll_timeout)
            if foreign:
                raise foreign[0]
            if revoke_errors:
                raise revoke_errors[0]
            rows: dict[str, list[QueueRow]] = {}
            next_offsets: dict[tuple[str, int], int] = {}
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        at_end.add((str(message.topic()), int(message.partition() or 0)))
                        continue
                    if error.fatal():
                        raise BrokerError(
                            f"Kafka consumer failed: {error.str()}", source=f"kafka://{bootstrap}"
                        )
                    if progress:
                        log(f"ingest: Kafka reports {error.str()}")
                    continue
                row = row_from_message(message)
                if feeds is not None:
                    row = add_instances(feeds, row)
                if row.error:
                    result.decode_errors += 1
                rows.setdefault(row.topic, []).append(row)
                position = (row.topic, row.partition)
                at_end.discard(position)
                next_offsets[position] = row.offset + 1
            if rows:
                encoded = [(topic, encode_rows(topic_rows)) for topic, topic_rows in rows.items()]
                counts = {topic: len(topic_rows) for topic, topic_rows in rows.items()}
                inserter.submit(encoded, partial(stored, counts, next_offsets))
            if len(messages) < batch_size:
                # caught up: the next poll waits for messages, nothing to overlap the insert
                # with, so store and commit this batch now rather than after that wait
                inserter.flush()
            reporter.update(result)
            if follow:
                continue
            if (assignment or not present) and at_end >= assignment:
                # a subscription learned meanwhile may have brought a topic: not done yet
                if refresh is None or not grow():
                    break
                waiting_since = time.monotonic()
                continue
            if not assignment and time.monotonic() - waiting_since > assignment_timeout:
                raise BrokerError(
                    f"no partition was assigned within {assignment_timeout:.0f}s "
                    f"(is another consumer of group {group!r} holding them?)",
                    source=f"kafka://{bootstrap}",
                )
        inserter.flush()
    except KeyboardInterrupt:
        try:
            inserter.flush()  # the batch in flight: stored and committed, as the line says
        except BaseException:
            failed = True
            raise
        if progress:
            log("ingest: interrupted; the last batch was committed")
    except BaseException:
        failed = True
        raise
    finally:
        inserter.close()
        terminated.close()
        if not close_within(consumer, CLOSE_TIMEOUT) and progress:
            log(
                f"ingest: the broker did not answer the consumer's close within "
                f"{CLOSE_TIMEOUT:.0f}s; stopped without leaving the group (offsets were "
                "committed batch by batch)"
            )
        result.seconds = time.monotonic() - started
        try:
            if not failed:
                result.errors, result.expired = _errors_since(conn, database, started_at)
        finally:
            # after a failure the caller prints the one error line: no "done" summary
            reporter.close(result, failed=failed)
    return result


def ingest(
    catalog: Catalog,
    bootstrap: str,
    embedded_path: str | Path,
    *,
    follow: bool = False,
    group: str = DEFAULT_GROUP,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = True,
    database: str = "yangkey",
    dead_letter: bool = True,
    kafka_config: Mapping[str, Any] | None = None,
    connection: ChdbConnection | None = None,
    log: Callable[[str], None] = _stderr,
    shared: SharedReader | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> IngestResult:
    """Create the embedded tables (idempotent) at ``embedded_path`` and consume into them.

    ``connection`` reuses an open chdb connection (chdb allows one data path per process).
    ``shared`` (a :class:`yangkey.kafka.catalog_topic.CatalogTopic`) adds the topics of the
    shared catalog, as they appear.
    """
    from yangkey.shared_catalog import merge_topics, topic_specs  # noqa: PLC0415

    options = DdlOptions(
        database=database,
        mode="embedded",
        dead_letter_topic=catalog.dead_letter_topic if dead_letter else None,
    )
    from yangkey.catalog import Catalog  # noqa: PLC0415
    from yangkey.clickhouse.instances import CatalogFeeds  # noqa: PLC0415 - needs yangson

    # only a compiled catalog knows its topics' schemas (a stand-in with topics only does not);
    # a topic known only from the shared catalog gets its typed columns from the local schema
    feeds = CatalogFeeds(catalog) if isinstance(catalog, Catalog) else None

    def learn(records: list[SharedSubscription]) -> None:
        if feeds is not None:
            for warning in feeds.learn(records):
                log(f"ingest: warning: {warning}")

    specs = list(catalog.topics)
    if shared is not None:
        records = shared.records()
        learn(records)
        specs = merge_topics(specs, topic_specs(records))
    statements = render_ddl(specs, options, feeds.typed if feeds else None)
    topics = [spec.name for spec in specs]
    if dead_letter:
        topics.append(catalog.dead_letter_topic)
    conn = connection if connection is not None else open_embedded(embedded_path)
    created = set(topics)

    def refresh() -> list[str]:
        """Tables first, then the topic: what :func:`consume_into` subscribes to next."""
        assert shared is not None
        records = shared.records()
        new = [s for s in topic_specs(records) if s.name not in created]
        if new:
            learn(records)
            typed = feeds.typed if feeds else None
            apply(conn, render_ddl(new, replace(options, dead_letter_topic=None), typed), database)
            created.update(s.name for s in new)
            if progress:
                log("ingest: tables created for " + ", ".join(s.name for s in new))
        return sorted(created)

    try:
        apply(conn, statements, database)
        # the directory is ours until we return: the other commands query through us
        with serve_queries(conn, embedded_path, log if progress else None) as served:
            if served is not None and follow and progress:
                log(f"ingest: answering `yangkey state|history|sql --embedded {embedded_path}`")
            return consume_into(
                conn,
                topics,
                bootstrap,
                database=database,
                follow=follow,
                group=group,
                batch_size=batch_size,
                progress=progress,
                kafka_config=kafka_config,
                log=log,
                should_stop=should_stop,
                feeds=feeds,
                refresh=refresh if shared is not None else None,
            )
    finally:
        if feeds is not None and feeds.failures and progress:
            log(
                f"ingest: {feeds.failures} message(s) gave no instance rows (message-level "
                f"rows stored): {feeds.first_failure}"
            )
        if connection is None:
            conn.close()
