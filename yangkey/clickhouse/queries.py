"""Read the current state and the history back, on chdb or a server (same SQL).

Every user value is a server-side query parameter (``{name:Type}``); only identifiers that
yangkey derives itself (database, table names) are written into the SQL, quoted.

* :func:`current_state`: one row per message key (``FINAL`` on the ReplacingMergeTree, so a
  duplicate or a replayed older message never shows), restricted to the newest generation seen
  for each (node, subscription id).
* :func:`history`: messages in (event time, sequence number, key) order, or in Kafka position
  order, one page at a time with a cursor; duplicates (the same message stored twice after an
  at-least-once replay) are skipped with ``LIMIT 1 BY``.

Times come back as RFC 3339 strings with nanoseconds (``2026-11-20T10:00:00.123456789Z``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.connection import Connection
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.tables import CURRENT_MERGE_TABLE, HISTORY_MERGE_TABLE, topic_tables
from yangkey.errors import ConfigError
from yangkey.messages import MessageKey

#: Columns of a returned row, in order.
ROW_FIELDS: tuple[str, ...] = (
    "message_key",
    "node",
    "subscription_id",
    "xpaths",
    "generation",
    "event_time",
    "sequence_number",
    "schema_id",
    "content_type",
    "subscription_type",
    "kafka_topic",
    "kafka_partition",
    "kafka_offset",
    "payload",
)

_SELECT = ", ".join(
    "concat(replaceOne(toString(event_time), ' ', 'T'), 'Z') AS event_time_text"
    if name == "event_time"
    else name
    for name in ROW_FIELDS
)
_TIME = "parseDateTime64BestEffort({%s:String}, 9, 'UTC')"

#: Ranges of the columns and parameters numbers end in: a value outside is refused here,
#: never wrapped by ClickHouse (``{limit:UInt64}`` reads 2**64 as 0).
UINT64_MAX = 2**64 - 1
UINT32_MAX = 2**32 - 1
#: A YANG-Push subscription id is a uint32 (RFC 8639), as in the message key.
SUBSCRIPTION_ID_MAX = UINT32_MAX

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})?)?",
    re.ASCII,
)
#: What DateTime64(9) holds.
_EARLIEST = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
_LATEST = dt.datetime(2262, 4, 11, 23, 47, 16, tzinfo=dt.UTC)


def check_range(value: int, low: int, high: int, what: str) -> int:
    """``value`` if ``low <= value <= high``, else a :class:`ConfigError` naming ``what``."""
    if not low <= value <= high:
        raise ConfigError(f"must be between {low} and {high}, not {value}", source=what)
    return value


def check_time(text: str, what: str) -> str:
    """``text`` if it is an RFC 3339 time (date alone: midnight; no offset: UTC) that
    DateTime64(9) can hold; the reason in our words otherwise (never ClickHouse's, which
    quotes the SQL)."""
    match = _RFC3339.fullmatch(text)
    when: dt.datetime | None = None
    if match:
        year, month, day, hour, minute, second, _fraction, offset = match.groups()
        try:
            zone = dt.UTC
            if offset and offset not in ("Z", "z"):
                sign = -1 if offset[0] == "-" else 1
                hours, minutes = int(offset[1:3]), int(offset[4:6])
                zone = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
            when = dt.datetime(
                int(year), int(month), int(day),
                int(hour or 0), int(minute or 0), int(second or 0), tzinfo=zone,
            )  # fmt: skip
        except ValueError:
            when = None
    if when is None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise ConfigError(
            f"not an RFC 3339 time such as 2026-11-20T10:00:00Z: {shown!r}", source=what
        )
    if not _EARLIEST <= when <= _LATEST:
        raise ConfigError(
            f"outside the times ClickHouse stores (1900 to 2262): {text}", source=what
        )
    return text


def _rows(conn: Connection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``sql``; rows in :data:`ROW_FIELDS` order (the time is selected as text under
    another name so that WHERE and ORDER BY still see the stored DateTime64)."""
    out: list[dict[str, Any]] = []
    for row in conn.query(sql, params):
        row["event_time"] = row.pop("event_time_text")
        out.append({name: row[name] for name in ROW_FIELDS})
    return out


def _require_database(conn: Connection, database: str) -> None:
    rows = conn.query(
        "SELECT count() AS n FROM system.databases WHERE name = {db:String}", {"db": database}
    )
    if not rows or int(rows[0]["n"]) == 0:
        raise ClickHouseError(
            f"database {database!r} does not exist: create it with `yangkey ddl apply`",
            source=conn.description,
        )


def _require_table(conn: Connection, database: str, table: str, what: str) -> None:
    _require_database(conn, database)
    rows = conn.query(
        "SELECT count() AS n FROM system.tables WHERE database = {db:String} "
        "AND name = {table:String}",
        {"db": database, "table": table},
    )
    if not rows or int(rows[0]["n"]) == 0:
        raise ClickHouseError(f"no such table {database}.{table} ({what})", source=conn.description)


def _node_conditions(
    node: str | None, subscription_id: int | None, params: dict[str, Any]
) -> list[str]:
    """Filters on node / subscription id; the key prefix lets the primary key serve them."""
    conditions: list[str] = []
    if subscription_id is not None:
        check_range(subscription_id, 0, SUBSCRIPTION_ID_MAX, "--subscription-id")
    if node is not None:
        params["node"] = node
        conditions.append("node = {node:String}")
        params["key_prefix"] = MessageKey.prefix(node, subscription_id)
        conditions.append("startsWith(message_key, {key_prefix:String})")
    if subscription_id is not None:
        params["subscription_id"] = subscription_id
        conditions.append("subscription_id = {subscription_id:UInt64}")
    return conditions


def _source(conn: Connection, database: str, topic: str | None, kind: str) -> str:
    if topic is None:
        table = CURRENT_MERGE_TABLE if kind == "current" else HISTORY_MERGE_TABLE
        _require_table(conn, database, table, "all topics")
    else:
        names = topic_tables(topic, database)
        table = names.current if kind == "current" else names.history
        _require_table(
            conn,
            database,
            table,
            f"{'current state' if kind == 'current' else 'history'} of topic {topic}",
        )
    return qualified(database, table)


def current_state(
    conn: Connection,
    database: str,
    *,
    node: str | None = None,
    subscription_id: int | None = None,
    xpath_prefix: str | None = None,
    topic: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The latest message per key, current generation only, ordered by message key."""
    source = _source(conn, database, topic, "current")
    params: dict[str, Any] = {}
    inner = _node_conditions(node, subscription_id, params)
    outer = ["generation = current_generation"]
    if xpath_prefix is not None:
        params["xpath_prefix"] = xpath_prefix
        outer.append("arrayExists(x -> startsWith(x, {xpath_prefix:String}), xpaths)")
    where = f"WHERE {' AND '.join(inner)}" if inner else ""
    sql = (
        f"SELECT {_SELECT} FROM ("
        f"SELECT *, max(generation) OVER (PARTITION BY node, subscription_id) "
        f"AS current_generation FROM {source} FINAL {where}"
        f") WHERE {' AND '.join(outer)} ORDER BY message_key"
    )
    if limit is not None:
        params["limit"] = check_range(limit, 1, UINT64_MAX, "--limit")
        sql += " LIMIT {limit:UInt64}"
    return _rows(conn, sql, params)


@dataclass(frozen=True)
class TimeCursor:
    """Continue after this (event time, sequence number, key) in time order."""

    event_time: str
    sequence_number: int
    message_key: str


@dataclass(frozen=True)
class OffsetCursor:
    """Continue after this Kafka position (topic, partition, offset) in position order."""

    topic: str
    partition: int
    offset: int


Cursor = TimeCursor | OffsetCursor


@dataclass(frozen=True)
class HistoryPage:
    rows: list[dict[str, Any]]
    next_cursor: Cursor | None
    """Pass as ``after`` for the next page; None when this page is the last one (even a full
    one: a page is read with one row of look-ahead)."""


def encode_cursor(cursor: Cursor) -> str:
    """An opaque token for the command line."""
    if isinstance(cursor, TimeCursor):
        data: list[Any] = ["t", cursor.event_time, cursor.sequence_number, cursor.message_key]
    else:
        data = ["o", cursor.topic, cursor.partition, cursor.offset]
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(token: str) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        if data[0] == "t" and isinstance(data[2], int):
            check_time(str(data[1]), "the cursor's time")
            check_range(data[2], 0, UINT64_MAX, "the cursor's sequence number")
            return TimeCursor(str(data[1]), data[2], str(data[3]))
        if data[0] == "o" and isinstance(data[2], int) and isinstance(data[3], int):
            check_range(data[2], 0, UINT32_MAX, "the cursor's partition")
            check_range(data[3], 0, UINT64_MAX, "the cursor's offset")
            return OffsetCursor(str(data[1]), data[2], data[3])
    except (ValueError, IndexError, TypeError, KeyError, OverflowError, ConfigError):
        pass
    raise ConfigError("invalid history cursor (use the token printed by the previous page)")


def history(
    conn: Connection,
    database: str,
    *,
    key: str | None = None,
    node: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 100,
    after: Cursor | None = None,
    subscription_id: int | None = None,
    topic: str | None = None,
    order: str = "time",
    current_generation: bool = False,
) -> HistoryPage:
    """One page of messages; ``since`` / ``until`` are RFC 3339 (``until`` exclusive).

    ``order="time"`` pages by (event time, sequence number, key); ``order="offset"`` pages by
    Kafka position. ``after`` must match the order (its type selects it when given).
    ``current_generation`` keeps only messages of the newest generation seen for their
    (node, subscription id), like :func:`current_state`; by default every generation shows.
    """
    check_range(limit, 1, UINT64_MAX, "--limit")
    for value, what in ((since, "--since"), (until, "--until")):
        if value is not None:
            check_time(value, what)
    if isinstance(after, OffsetCursor):
        order = "offset"
    elif isinstance(after, TimeCursor):
        order = "time"
    if order not in ("time", "offset"):
        raise ConfigError("order must be 'time' or 'offset'")
    source = _source(conn, database, topic, "history")
    # One row more than the page tells whether a next page exists: the last page has no
    # cursor, even when it is full.
    params: dict[str, Any] = {"limit": min(limit + 1, UINT64_MAX)}
    conditions: list[str] = []
    if key is not None:
        params["key"] = key
        conditions.append("message_key = {key:String}")
    node_conditions = _node_conditions(node, subscription_id, params)
    conditions += node_conditions
    if since is not None:
        params["since"] = since
        conditions.append(f"event_time >= {_TIME % 'since'}")
    if until is not None:
        params["until"] = until
        conditions.append(f"event_time < {_TIME % 'until'}")
    if order == "time":
        order_by = (
            "event_time, sequence_number, message_key, kafka_topic, kafka_partition, kafka_offset"
        )
        dedupe = "message_key, event_time, sequence_number"
        if isinstance(after, TimeCursor):
            params.update(
                after_time=after.event_time,
                after_seq=after.sequence_number,
                after_key=after.message_key,
            )
            conditions.append(
                f"(event_time, sequence_number, message_key) > ({_TIME % 'after_time'}, "
                "{after_seq:UInt64}, {after_key:String})"
            )
    else:
        order_by = "kafka_topic, kafka_partition, kafka_offset"
        dedupe = "kafka_topic, kafka_partition, kafka_offset"
        if isinstance(after, OffsetCursor):
            params.update(
                after_topic=after.topic, after_partition=after.partition, after_offset=after.offset
            )
            conditions.append(
                "(kafka_topic, kafka_partition, kafka_offset) > "
                "({after_topic:String}, {after_partition:UInt32}, {after_offset:UInt64})"
            )
    if current_generation:
        inner = " AND ".join(node_conditions)
        conditions.append(
            "(node, subscription_id, generation) IN (SELECT node, subscription_id, "
            f"max(generation) FROM {source} {'WHERE ' + inner if inner else ''} "
            "GROUP BY node, subscription_id)"
        )
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    sql = (
        f"SELECT {_SELECT} FROM {source} {where} "
        f"ORDER BY {order_by} LIMIT 1 BY {dedupe} LIMIT {{limit:UInt64}}"
    )
    rows = _rows(conn, sql, params)
    next_cursor: Cursor | None = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        if order == "time":
            next_cursor = TimeCursor(
                str(last["event_time"]), int(last["sequence_number"]), str(last["message_key"])
            )
        else:
            next_cursor = OffsetCursor(
                str(last["kafka_topic"]), int(last["kafka_partition"]), int(last["kafka_offset"])
            )
    return HistoryPage(rows=rows, next_cursor=next_cursor)
