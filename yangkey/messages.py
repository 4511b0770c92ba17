"""The shapes that cross the edges: a keyed message on its way to Kafka, and a rejection.

The wire contract (draft section 3.1.3, docs/design.md#producer-contract) shared by the Spark
producer, the embedded ingest bridge and the ClickHouse materialized views:

* **key**: the three-line message key (``node LF subscription-id LF xpath | xpath``), UTF-8,
  no trailing LF; ``None`` when the keys knob is off (round robin).
* **value**: the notification bytes exactly as received (JSON or XML).
* **headers** (all values UTF-8 text):

  - ``content-type``: ``application/yang-data+json`` or ``application/yang-data+xml``;
  - ``schema-id``: the schema registry id, when one is configured;
  - ``yangkey-event-time``: the notification's event time, RFC 3339;
  - ``yangkey-sequence-number``: decimal, ``0`` when the notification carries none;
  - ``yangkey-generation``: decimal subscription generation
    (docs/design.md#message-identity-and-generations);
  - ``yangkey-subscription-type``: ``periodic`` | ``on-change`` | ``on-change-sync``.

A rejected notification becomes a :class:`Rejection`; its dead-letter record carries the raw
bytes as value and the reason and source position as headers (``yangkey-error``,
``yangkey-error-kind``, ``yangkey-source``).

The error kinds are one vocabulary, :data:`ERROR_KINDS`: what ``yangkey-error-kind`` holds,
what the ``kind`` of every :class:`~yangkey.errors.YangkeyError` is, what ``yangkey keys`` and
the ``yangkey produce`` summary count, and (``rejected:`` + kind, or one of
:data:`INGEST_KINDS`) what the ClickHouse errors tables' ``error_kind`` holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

CONTENT_TYPE_JSON = "application/yang-data+json"
CONTENT_TYPE_XML = "application/yang-data+xml"

HEADER_CONTENT_TYPE = "content-type"
HEADER_SCHEMA_ID = "schema-id"
HEADER_EVENT_TIME = "yangkey-event-time"
HEADER_SEQUENCE_NUMBER = "yangkey-sequence-number"
HEADER_GENERATION = "yangkey-generation"
HEADER_SUBSCRIPTION_TYPE = "yangkey-subscription-type"
HEADER_ERROR = "yangkey-error"
HEADER_ERROR_KIND = "yangkey-error-kind"
HEADER_SOURCE = "yangkey-source"

ErrorKind = Literal[
    "input",
    "framing",
    "notification",
    "shape",
    "no-match",
    "filtered-out",
    "empty-update",
    "bad-subscription",
    "schema",
    "filter",
    "topic",
    "config",
    "oversized",
    "bug",
    "broker",
    "registry",
    "clickhouse",
    "error",
    "decode",
    "key",
    "header",
    "expired",
]
"""Every error kind yangkey writes anywhere (see :data:`ERROR_KINDS`)."""

ERROR_KINDS: dict[ErrorKind, str] = {
    # A notification the producer rejects (header yangkey-error-kind; errors table
    # "rejected:<kind>"), most specific first.
    "input": "bytes that are no JSON or XML document, empty, or over the size limit",
    "framing": "a document that is no YANG-Push notification yangkey reads: no push-update or"
    " push-change-update in it, or its data in a member yangkey does not know (check the"
    " collector's output format)",
    "notification": "a YANG-Push notification with a field that cannot be read: node name,"
    " subscription id, sequence number, yang-patch edit, or a key or filter value",
    "shape": "data on the subscribed path in a shape RFC 7951 does not allow (a container sent"
    " as an array, a list entry that is no object): a device or collector bug",
    "no-match": "data, but none on the subscribed path: the subscription id points to another"
    " subscription than the device streams (check the subscriptions file)",
    "filtered-out": "data on the subscribed path, but every instance contradicts a key or a"
    " filter the subscription pins: the device sent more than it was asked for",
    "empty-update": "a push-update with no data (a heartbeat) or a yang-patch with no edit;"
    " counted, and dead-lettered only with --empty-updates dead-letter",
    "bad-subscription": "a notification of a subscription the catalog skipped because its entry"
    " in the subscriptions file does not compile (the reason names the entry, its line and why):"
    " fix the entry and replay the dead letters",
    "schema": "a subscription learned from a notification that does not resolve in the schema",
    "filter": "a subscription filter (XPath or subtree) that cannot be parsed",
    "topic": "a derived topic name that is invalid or collides with another",
    "config": "a subscriptions file or setting that is invalid",
    "oversized": "a keyed message over the broker's message size limit",
    "bug": "an internal error: a yangkey bug (please report it, with the dead-lettered bytes)",
    # Errors of the tools around the pipeline.
    "broker": "the local Kafka broker cannot be installed, started, reached or stopped",
    "registry": "a schema registry error",
    "clickhouse": "a ClickHouse error",
    "error": "any other yangkey error",
    # Kinds of the ClickHouse errors tables besides "rejected:<kind>" (INGEST_KINDS).
    "decode": "a Kafka record the engine could not read",
    "key": "a keyed message whose message key is missing or malformed",
    "header": "a keyed message with a yangkey header that cannot be read",
    "expired": "a message older than its topic's retention: kept in the errors table only",
}
"""Each error kind and what it means to an operator."""

REJECTION_KINDS: tuple[ErrorKind, ...] = (
    "input",
    "framing",
    "notification",
    "shape",
    "no-match",
    "filtered-out",
    "empty-update",
    "bad-subscription",
    "schema",
    "filter",
    "topic",
    "config",
    "oversized",
    "bug",
    "error",
)
"""The kinds a rejected notification (a dead-letter record) can carry."""

INGEST_KINDS: tuple[ErrorKind, ...] = ("decode", "key", "header", "expired")
"""The kinds of the ClickHouse errors tables' rows that are not producer rejections; a
producer rejection is ``rejected:<kind>`` (``rejected:unknown`` without the header)."""
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
    headers: tuple[tuple[str, bytes], ...] = ()

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
            headers=(
                (HEADER_ERROR, self.reason.encode("utf-8")),
                (HEADER_ERROR_KIND, self.kind.encode("utf-8")),
                (HEADER_SOURCE, self.source.encode("utf-8")),
            ),
        )
