"""A Kafka record as a row of an embedded queue table: the Kafka engine's virtual columns.

A message whose key or headers are not UTF-8 still becomes a row, with ``error`` set and the
value in ``raw_message``, so that it reaches the errors table with its position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from yangkey.messages import HEADER_INSTANCES

if TYPE_CHECKING:
    from yangkey.clickhouse.instances import CatalogFeeds


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
