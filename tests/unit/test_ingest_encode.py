"""The bridge's Arrow batches (clickhouse/ingest.encode_rows) and its pipelined writer
(BatchInserter), on the real engine: every queue column reads back exactly as the Kafka record
had it, and a batch's offsets are committed only once its INSERT has succeeded."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from factories import topic_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import XPATH_LINE_RE, XPATH_TOKEN_RE, DdlOptions, Statement, render_ddl
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest.arrow import (
    QUEUE_COLUMN_NAMES,
    QUEUE_FORMAT,
    encode_rows,
    insert_rows,
)
from yangkey.clickhouse.ingest.inserter import BatchInserter
from yangkey.clickhouse.ingest.rows import QueueRow, row_from_message
from yangkey.clickhouse.tables import topic_tables
from yangkey.topics import TopicSpec

TOPIC = "netops-enc-if"
DB = "enc"


def _spec() -> TopicSpec:
    return topic_spec(TOPIC)


@pytest.fixture(scope="module")
def tables(conn: ChdbConnection) -> ChdbConnection:
    statements = render_ddl([_spec()], DdlOptions(database=DB, mode="embedded"))
    apply(conn, statements, DB)
    # the queue table's own columns, stored (the embedded queue is a Null table)
    queue = next(s for s in statements if s.name.endswith("__queue"))
    kept = queue.sql.replace("__queue", "__kept").replace("ENGINE = Null", "ENGINE = Memory")
    apply(conn, [Statement(kind="table", name=f"{DB}.kept", sql=kept)], DB)
    return conn


ROWS = [
    QueueRow(
        topic=TOPIC,
        partition=0,
        offset=5,
        key=b"pe1\n1\n/a",
        value=b"v\xff",  # not UTF-8: bytes kept as they are
        headers=[("yangkey-event-time", b"2026-11-20T10:00:00Z"), ("b\udcff", None)],
        timestamp_ms=1_790_000_000_123,
    ),
    QueueRow(
        topic="other-topic",
        partition=3,
        offset=2**64 - 1,
        key=None,
        value=None,
        error="message key is not valid UTF-8 (byte 0)",
        raw_message=b"raw\x00bytes",
    ),
    QueueRow(
        topic=TOPIC,
        partition=1,
        offset=7,
        key=b"",
        value=b"",
        headers=[("x", b"")],
        timestamp_ms=2**40 * 1000,  # past what a DateTime holds: clamped there
    ),
]


def test_every_queue_column_reads_back_as_the_record_had_it(tables: ChdbConnection) -> None:
    kept = qualified(DB, f"{TOPIC}__kept")
    tables.insert(kept, QUEUE_COLUMN_NAMES, encode_rows(ROWS), QUEUE_FORMAT)
    got = tables.query(
        "SELECT hex(value) AS value, _topic, hex(_key) AS key, toString(_offset) AS offset, "
        "_partition, toUnixTimestamp(_timestamp) AS ts, toUnixTimestamp64Milli(_timestamp_ms) "
        "AS ts_ms, arrayMap(x -> hex(x), `_headers.name`) AS names, "
        "arrayMap(x -> hex(x), `_headers.value`) AS hvalues, hex(_raw_message) AS raw, _error "
        f"FROM {kept} ORDER BY _partition"
    )

    def hexed(data: bytes | None) -> str:
        return (data or b"").hex().upper()

    expected = [
        {
            "value": hexed(row.value),
            "_topic": row.topic,
            "key": hexed(row.key),
            "offset": str(row.offset),
            "_partition": row.partition,
            "ts": None if row.timestamp_ms is None else min(row.timestamp_ms // 1000, 2**32 - 1),
            "ts_ms": row.timestamp_ms,
            "names": [hexed(n.encode("utf-8", "surrogateescape")) for n, _ in row.headers],
            "hvalues": [hexed(v) for _, v in row.headers],
            "raw": hexed(row.raw_message),
            "_error": row.error,
        }
        for row in sorted(ROWS, key=lambda r: r.partition)
    ]
    assert got == expected


def _history_offsets(conn: ChdbConnection) -> list[int]:
    history = qualified(DB, topic_tables(TOPIC, DB).history)
    rows = conn.query(f"SELECT kafka_offset FROM {history} ORDER BY kafka_offset")
    return [int(r["kafka_offset"]) for r in rows]


def _row(offset: int) -> QueueRow:
    return QueueRow(
        topic=TOPIC,
        partition=0,
        offset=offset,
        key=b"pe1\n1\n/a",
        value=b"{}",
        headers=[("yangkey-event-time", b"2026-11-20T10:00:00Z")],
    )


def test_a_batch_is_acknowledged_once_stored_and_in_order(tables: ChdbConnection) -> None:
    acknowledged: list[tuple[int, list[int]]] = []
    inserter = BatchInserter(tables, DB)
    try:
        for batch in (100, 200):
            inserter.submit(
                [(TOPIC, encode_rows([_row(batch), _row(batch + 1)]))],
                # what the callback sees stored when it runs
                lambda batch=batch: acknowledged.append((batch, _history_offsets(tables))),
            )
        # the second submit waited for the first batch: acknowledged, the second not yet
        assert [b for b, _ in acknowledged] == [100]
        inserter.flush()
    finally:
        inserter.close()
    assert acknowledged[0] == (100, [100, 101])
    assert acknowledged[1] == (200, [100, 101, 200, 201])


def test_a_failed_insert_is_raised_and_never_acknowledged(tables: ChdbConnection) -> None:
    acknowledged: list[str] = []
    inserter = BatchInserter(tables, DB)
    try:
        batch = [("no-such-topic", encode_rows([_row(1)]))]
        inserter.submit(batch, lambda: acknowledged.append("x"))
        with pytest.raises(ClickHouseError, match="no-such-topic"):
            inserter.flush()
        inserter.flush()  # nothing left in flight
    finally:
        inserter.close()
    assert acknowledged == []


def _message(key: bytes | None, headers: list[tuple[str, Any]]) -> Any:
    from confluent_kafka import Message  # noqa: PLC0415

    return Message(
        topic=TOPIC, partition=2, offset=9, key=key, value=b"{}", headers=headers,
        timestamp=(1, 1_790_000_000_123),
    )


def test_a_good_message_becomes_its_row() -> None:
    row = row_from_message(_message(b"pe1\n1\n/a", [("a", b"1"), ("b", None), ("c", b"\xc3\xa9")]))
    assert row == QueueRow(TOPIC, 2, 9, b"pe1\n1\n/a", b"{}",
                           [("a", b"1"), ("b", None), ("c", b"\xc3\xa9")], 1_790_000_000_123)


@pytest.mark.parametrize(("key", "headers", "error"), [
    (b"k", [("a", b"ok"), ("bad", b"x\xffy")], "header 'bad' is not valid UTF-8 (byte 1)"),
    # two halves of one UTF-8 character in two headers: each value is invalid on its own
    (b"k", [("a", b"\xc3"), ("b", b"\xa9")], "header 'a' is not valid UTF-8 (byte 0)"),
    (b"k", [("a", b"ok"), ("b", b"\xa9")], "header 'b' is not valid UTF-8 (byte 0)"),
    (b"\xffk", [("a", b"ok")], "message key is not valid UTF-8 (byte 0)"),
])
def test_undecodable_keys_and_headers_are_named(
    key: bytes, headers: list[tuple[str, bytes]], error: str
) -> None:
    row = row_from_message(_message(key, headers))
    assert row.error == error
    assert row.raw_message == b"{}"
    assert list(row.headers) == headers  # kept, bytes as they were


_offsets = itertools.count(1000)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.text(alphabet=st.sampled_from(list("a/'\"| [=]")), min_size=0, max_size=14))
def test_xpath_line_fast_path_matches_the_regular_expressions(
    tables: ChdbConnection, line: str
) -> None:
    """mv_parse takes a line without `|` or `"` and with paired `'` as one XPath without
    running its regular expressions: any line is split (or refused) exactly as they say."""
    offset = next(_offsets)
    insert_rows(tables, DB, TOPIC, [QueueRow(
        TOPIC, 0, offset, f"pe1\n1\n{line}".encode(), b"{}",
        [("yangkey-event-time", b"2026-11-20T10:00:00Z")],
    )])
    history = qualified(DB, topic_tables(TOPIC, DB).history)
    stored = tables.query(
        f"SELECT xpaths FROM {history} WHERE kafka_offset = {{o:UInt64}}", {"o": offset}
    )
    errors = tables.query(
        f"SELECT error FROM {qualified(DB, 'errors')} WHERE kafka_offset = {{o:UInt64}}",
        {"o": offset},
    )
    if re.fullmatch(XPATH_LINE_RE, line):
        tokens = re.findall(XPATH_TOKEN_RE, line)
        # the separators' spaces come off (" | " between tokens)
        expected = [t[1 if i else 0 : len(t) - (0 if i == len(tokens) - 1 else 1)]
                    for i, t in enumerate(tokens)]
        assert stored == [{"xpaths": expected}] and errors == []
    else:
        assert stored == []
        assert errors == [
            {"error": "XPath line of the message key is empty or has unbalanced quotes"}
        ]
