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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

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
    kind: str
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
