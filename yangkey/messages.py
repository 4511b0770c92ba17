"""The wire contract: what crosses the edges between the producer, the embedded ingest bridge
and the ClickHouse tables (draft section 3.1, docs/design.md#producer-contract). Its one owner:
every other module (and every SQL template, through :mod:`yangkey.clickhouse.ddl`) takes the
key format, the header names and the column sets from here.

* **key**: :class:`MessageKey`, the three-line message key (``node LF subscription-id LF
  xpath | xpath``; draft section 3.1.1), UTF-8, no trailing LF; ``None`` when the keys knob is
  off (round robin).
* **value**: the notification bytes exactly as received (JSON or XML).
* **headers** (all values UTF-8 text; :data:`HEADERS` lists them, the ``*_headers`` functions
  below build them):

  - ``content-type``: ``application/yang-data+json`` or ``application/yang-data+xml``;
  - ``schema-id``: the schema registry id, when one is configured;
  - ``yangkey-event-time``: the notification's event time, RFC 3339;
  - ``yangkey-sequence-number``: decimal, ``0`` when the notification carries none;
  - ``yangkey-generation``: decimal subscription generation
    (docs/design.md#message-identity-and-generations);
  - ``yangkey-subscription-type``: ``periodic`` | ``on-change`` | ``on-change-sync``;
  - ``yangkey-instances``: the typed instance rows of the message (docs/design.md#instance-feed),
    with ``--instance-feed`` only.

A rejected notification becomes a :class:`Rejection`; its dead-letter record carries the raw
bytes as value and the reason and source position as headers (``yangkey-error``,
``yangkey-error-kind``, ``yangkey-source``; ``yangkey-truncated-from`` with the original size
when the value was cut to fit the broker's limit).

The error kinds are one vocabulary, :data:`yangkey.errors.ERROR_KINDS`: what
``yangkey-error-kind`` holds, what the ``kind`` of every :class:`~yangkey.errors.YangkeyError`
is, what ``yangkey keys`` and the ``yangkey produce`` summary count, and (``rejected:`` + kind,
or one of :data:`INGEST_KINDS`) what the ClickHouse errors tables' ``error_kind`` holds.

The ClickHouse column sets (:data:`QUEUE_COLUMNS`, :data:`ROW_COLUMNS`, :data:`ERROR_COLUMNS`
...) are handed to the SQL templates as globals; the templates do not restate them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

from yangkey.errors import ErrorKind, NoMatchError, NotificationError, YangkeyError
from yangkey.values import UINT32_MAX, node_name_problem, parse_unsigned
from yangkey.xpath import split_outside_quotes

CONTENT_TYPE_JSON = "application/yang-data+json"
CONTENT_TYPE_XML = "application/yang-data+xml"

# -- the message key (draft section 3.1.1) --------------------------------------------------

KEY_LINE_SEPARATOR = "\n"
"""Between the key's three lines: node, subscription id, XPaths."""
XPATH_SEPARATOR = " | "
"""Between the concrete XPaths of the key's third line (sorted by code point, unique)."""


def encode_key(node: str, subscription_id: int, xpaths: Iterable[str]) -> bytes:
    """The key's bytes from fields already checked, ``xpaths`` sorted and unique (the hot
    path: :class:`yangkey.keys.DerivedKey`); :meth:`MessageKey.of` checks them."""
    return f"{node}\n{subscription_id}\n{XPATH_SEPARATOR.join(xpaths)}".encode()


class MessageKey(NamedTuple):
    """A message key: the node, the subscription id and the concrete XPaths of the instances the
    message carries, sorted by code point and de-duplicated (draft section 3.1.1)."""

    node: str
    subscription_id: int
    xpaths: tuple[str, ...]

    @classmethod
    def of(cls, node: str, subscription_id: int, xpaths: Iterable[str]) -> MessageKey:
        """The key of ``node``'s notification of the subscription, the XPaths sorted and
        de-duplicated; a node name the key cannot carry, or no XPath, is an error."""
        problem = "is empty" if not node else node_name_problem(node)
        if problem is not None:
            raise NotificationError(f"node name {node!r} {problem}")
        unique = tuple(sorted(set(xpaths)))
        if not unique:
            raise NoMatchError("no matching instances")
        return cls(node, subscription_id, unique)

    def encode(self) -> bytes:
        return encode_key(self.node, self.subscription_id, self.xpaths)

    @classmethod
    def parse(cls, key: bytes | str) -> MessageKey:
        """Split on the first two LFs; split line 3 on ``" | "`` outside quotes."""
        text = key.decode("utf-8") if isinstance(key, bytes) else key
        parts = text.split(KEY_LINE_SEPARATOR, 2)
        if len(parts) != 3:
            raise YangkeyError("a message key has three LF-separated fields", source="key")
        node, subscription, xpaths = parts
        subscription_id = parse_unsigned(subscription, UINT32_MAX)
        if subscription_id is None:
            reason = f"subscription id {subscription!r} is not a uint32 in ASCII decimal"
            raise YangkeyError(reason, source="key")
        return cls(node, subscription_id, tuple(split_outside_quotes(xpaths, XPATH_SEPARATOR)))

    @staticmethod
    def prefix(node: str, subscription_id: int | None = None) -> str:
        """What every key of ``node`` (and of its subscription, if given) starts with: the
        primary key of the ClickHouse row tables serves ``startsWith`` on it."""
        if subscription_id is None:
            return f"{node}{KEY_LINE_SEPARATOR}"
        return f"{node}{KEY_LINE_SEPARATOR}{subscription_id}{KEY_LINE_SEPARATOR}"


# -- headers ----------------------------------------------------------------------------------

HEADER_CONTENT_TYPE = "content-type"
HEADER_SCHEMA_ID = "schema-id"
HEADER_EVENT_TIME = "yangkey-event-time"
HEADER_SEQUENCE_NUMBER = "yangkey-sequence-number"
HEADER_GENERATION = "yangkey-generation"
HEADER_SUBSCRIPTION_TYPE = "yangkey-subscription-type"
HEADER_INSTANCES = "yangkey-instances"
HEADER_ERROR = "yangkey-error"
HEADER_ERROR_KIND = "yangkey-error-kind"
HEADER_SOURCE = "yangkey-source"
HEADER_TRUNCATED_FROM = "yangkey-truncated-from"

HEADERS: dict[str, str] = {
    "content_type": HEADER_CONTENT_TYPE,
    "schema_id": HEADER_SCHEMA_ID,
    "event_time": HEADER_EVENT_TIME,
    "sequence_number": HEADER_SEQUENCE_NUMBER,
    "generation": HEADER_GENERATION,
    "subscription_type": HEADER_SUBSCRIPTION_TYPE,
    "instances": HEADER_INSTANCES,
    "error": HEADER_ERROR,
    "error_kind": HEADER_ERROR_KIND,
    "source": HEADER_SOURCE,
    "truncated_from": HEADER_TRUNCATED_FROM,
}
"""Every header yangkey writes, by the name the SQL templates know it by (``headers``)."""

Headers = tuple[tuple[str, bytes], ...]
"""A record's headers: (name, UTF-8 value) pairs, as confluent-kafka takes them."""


def subscription_headers(content_type: str, generation: int, subscription_type: str) -> Headers:
    """The headers that depend only on the subscription and the encoding (a producer builds
    them once per route)."""
    return (
        (HEADER_CONTENT_TYPE, content_type.encode()),
        (HEADER_GENERATION, b"%d" % generation),
        (HEADER_SUBSCRIPTION_TYPE, subscription_type.encode()),
    )


def notification_headers(sequence_number: int | None, event_time: str | None) -> Headers:
    """The headers of one notification: its sequence number (``0`` without one) and its event
    time (none without one: the ingest then takes the Kafka timestamp)."""
    sequence = b"%d" % (sequence_number or 0)
    if event_time:
        return ((HEADER_SEQUENCE_NUMBER, sequence), (HEADER_EVENT_TIME, str(event_time).encode()))
    return ((HEADER_SEQUENCE_NUMBER, sequence),)


def schema_id_headers(schema_id: int | None) -> Headers:
    """The ``schema-id`` header of a registered topic's records (none without an id)."""
    return () if schema_id is None else ((HEADER_SCHEMA_ID, b"%d" % schema_id),)


def instances_headers(rows: bytes) -> Headers:
    """The ``yangkey-instances`` header: a message's typed instance rows."""
    return ((HEADER_INSTANCES, rows),)


def error_headers(reason: str, kind: ErrorKind, source: str) -> Headers:
    """The headers of a dead-letter record: why, what kind, and where the bytes came from."""
    return (
        (HEADER_ERROR, reason.encode("utf-8")),
        (HEADER_ERROR_KIND, kind.encode("utf-8")),
        (HEADER_SOURCE, source.encode("utf-8")),
    )


def truncated_headers(original_size: int) -> Headers:
    """Marks a dead-letter value cut to fit the broker's size limit, with its original size."""
    return ((HEADER_TRUNCATED_FROM, b"%d" % original_size),)


def header_bytes(headers: Headers) -> int:
    """The bytes of ``headers``' names (UTF-8; all ours are ASCII) and values."""
    size = 0
    for name, value in headers:
        size += len(name) + len(value)
    return size


# -- the ClickHouse column sets -------------------------------------------------------------

Column = tuple[str, str, str]
"""A column: name, ClickHouse type, codec (``""``: none; codecs apply on MergeTree tables)."""

QUEUE_VALUE_COLUMNS: tuple[Column, ...] = (("value", "String", ""),)
"""A Kafka engine table's one column: the record's value (format RawBLOB)."""
QUEUE_VIRTUAL_COLUMNS: tuple[Column, ...] = (
    ("_topic", "LowCardinality(String)", ""),
    ("_key", "String", ""),
    ("_offset", "UInt64", ""),
    ("_partition", "UInt64", ""),
    ("_timestamp", "Nullable(DateTime)", ""),
    ("_timestamp_ms", "Nullable(DateTime64(3))", ""),
    ("_headers.name", "Array(String)", ""),
    ("_headers.value", "Array(String)", ""),
    ("_raw_message", "String", ""),
    ("_error", "String", ""),
)
"""The virtual columns of a Kafka engine table (``kafka_handle_error_mode = 'stream'``). In
embedded mode the queue table has them as real columns, filled by ``yangkey ingest``, so the
same materialized views read both."""
QUEUE_COLUMNS: tuple[Column, ...] = QUEUE_VALUE_COLUMNS + QUEUE_VIRTUAL_COLUMNS
"""An embedded queue table's columns, in the order ``yangkey ingest`` writes them."""

ROW_COLUMNS: tuple[Column, ...] = (
    ("message_key", "String", "ZSTD(1)"),
    ("node", "LowCardinality(String)", ""),
    ("subscription_id", "UInt64", ""),
    ("xpaths", "Array(String)", "ZSTD(1)"),
    ("generation", "UInt32", ""),
    ("event_time", "DateTime64(9, 'UTC')", "Delta, ZSTD(1)"),
    ("sequence_number", "UInt64", ""),
    ("schema_id", "Nullable(UInt32)", ""),
    ("content_type", "LowCardinality(String)", ""),
    ("subscription_type", "LowCardinality(String)", ""),
    ("kafka_topic", "LowCardinality(String)", ""),
    ("kafka_partition", "UInt32", ""),
    ("kafka_offset", "UInt64", ""),
    ("kafka_timestamp", "Nullable(DateTime64(3, 'UTC'))", ""),
    ("payload", "String", "ZSTD(3)"),
)
"""One row per keyed message: the history and current-state tables (docs/design.md)."""
VERSION_COLUMN: Column = ("version", "UInt256", "")
"""What orders the versions of one key (generation, event time, sequence number, offset)."""
PARSE_COLUMNS: tuple[Column, ...] = (
    ("error", "String", ""),
    ("error_kind", "LowCardinality(String)", ""),
    ("kafka_key", "String", ""),
    ("raw_message", "String", ""),
    ("header_names", "Array(String)", ""),
    ("header_values", "Array(String)", ""),
    ("instances", "String", ""),
)
"""What a parsed table has besides a row and its version: the views on it route on ``error``."""
INSTANCE_COLUMNS: tuple[Column, ...] = (
    ("node", "LowCardinality(String)", ""),
    ("subscription_id", "UInt64", ""),
    ("instance_path", "String", "ZSTD(1)"),
    ("operation", "LowCardinality(String)", ""),
    ("leaves", "Array(LowCardinality(String))", ""),
    ("generation", "UInt32", ""),
    ("event_time", "DateTime64(9, 'UTC')", "Delta, ZSTD(1)"),
    ("sequence_number", "UInt64", ""),
    ("kafka_partition", "UInt32", ""),
    ("kafka_offset", "UInt64", ""),
    ("version", "UInt256", ""),
)
"""The columns of an instance history table before the typed ones."""
ERROR_COLUMNS: tuple[Column, ...] = (
    ("kafka_topic", "LowCardinality(String)", ""),
    ("kafka_partition", "UInt32", ""),
    ("kafka_offset", "UInt64", ""),
    ("kafka_timestamp", "Nullable(DateTime64(3, 'UTC'))", ""),
    ("kafka_key", "String", "ZSTD(1)"),
    ("error_kind", "LowCardinality(String)", ""),
    ("error", "String", "ZSTD(1)"),
    ("source", "String", "ZSTD(1)"),
    ("raw_message", "String", "ZSTD(3)"),
    ("header_names", "Array(String)", "ZSTD(1)"),
    ("header_values", "Array(String)", "ZSTD(1)"),
)
"""The errors table: every message that could not be stored, with its raw bytes."""

COLUMN_SETS: dict[str, tuple[Column, ...]] = {
    "QUEUE_VALUE_COLUMNS": QUEUE_VALUE_COLUMNS,
    "QUEUE_VIRTUAL_COLUMNS": QUEUE_VIRTUAL_COLUMNS,
    "ROW_COLUMNS": ROW_COLUMNS,
    "PARSE_COLUMNS": PARSE_COLUMNS,
    "INSTANCE_COLUMNS": INSTANCE_COLUMNS,
    "ERROR_COLUMNS": ERROR_COLUMNS,
}
"""The column sets by the name the SQL templates know them by (Jinja globals)."""


# -- error kinds on the wire ------------------------------------------------------------------

INGEST_KINDS: tuple[ErrorKind, ...] = ("decode", "key", "header", "expired")
"""The kinds of the ClickHouse errors tables' rows that are not producer rejections; a
producer rejection is ``rejected:<kind>`` (``rejected:unknown`` without the header)."""
REJECTION_KINDS: tuple[ErrorKind, ...] = tuple(
    kind
    for kind in get_args(ErrorKind)
    if kind not in {"broker", "registry", "clickhouse", *INGEST_KINDS}
)
"""The kinds a rejected notification (a dead-letter record) can carry."""

EXPIRED: ErrorKind = "expired"
"""A message older than its topic's retention (ClickHouse errors table only)."""
REJECTED_PREFIX = "rejected:"
"""Before a producer rejection's kind in the ClickHouse errors tables."""
UNKNOWN_REJECTION = "unknown"
"""The kind of a dead-letter record without a ``yangkey-error-kind`` header."""


def sql_kinds() -> dict[str, str]:
    """The kinds the ClickHouse templates write (``kinds`` in their context)."""
    return {
        **{kind: kind for kind in INGEST_KINDS},
        "rejected": REJECTED_PREFIX,
        "unknown": UNKNOWN_REJECTION,
    }


EMPTY_UPDATE: ErrorKind = "empty-update"
"""Not an error by default: counted, not dead-lettered (``--empty-updates``)."""

EmptyUpdates = Literal["count", "dead-letter"]
"""What a producer does with an empty update: count it only, or dead-letter it too."""
EMPTY_UPDATES: tuple[EmptyUpdates, ...] = ("count", "dead-letter")


class KeyedMessage(NamedTuple):
    """One record to produce: topic, key, value and headers, ready for confluent-kafka."""

    # A NamedTuple, not a frozen dataclass: built for every message the producer sends, and
    # a dataclass's __init__ (one object.__setattr__ per field) cost about 1 us of that.
    topic: str
    key: bytes | None
    value: bytes
    headers: Headers = ()

    def header(self, name: str) -> str | None:
        for header_name, value in self.headers:
            if header_name == name:
                return value.decode("utf-8")
        return None


@dataclass(frozen=True, slots=True)
class Rejection:
    """A notification that yielded no message, with why and where it came from."""

    source: str
    kind: ErrorKind
    reason: str
    raw: bytes

    def dead_letter(self, topic: str) -> KeyedMessage:
        return KeyedMessage(
            topic=topic,
            key=None,
            value=self.raw,
            headers=error_headers(self.reason, self.kind, self.source),
        )
