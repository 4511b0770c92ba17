"""The ``mv_parse`` and ``mv_errors`` templates one at a time (:mod:`sql_harness`): crafted
queue rows in, parsed rows and error rows out, for a good row of each shape and a malformed
row of every reason each template knows, so that every ClickHouse error kind
(``yangkey.messages.INGEST_KINDS``) is produced and read back with its reason and raw bytes.

The reasons and kinds are held here; the whole-pipeline tests (``test_chdb_pipeline.py``)
show that such rows reach the errors table and do not stop the good ones behind them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from factories import RECENT_DAY, topic_spec
from sql_harness import TemplateHarness

from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ingest.rows import QueueRow
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_SCHEMA_ID,
    HEADER_SEQUENCE_NUMBER,
    HEADER_SUBSCRIPTION_TYPE,
    INGEST_KINDS,
)

TOPIC = "netops-tpl-if"
IF = "/ietf-interfaces:interfaces/interface"
KEY = f"pe1\n1042\n{IF}[name='eth0']".encode()
TIME = f"{RECENT_DAY}T10:00:00Z"
STAMP = 1_790_000_000_123  # a Kafka timestamp (ms)
_databases = itertools.count()


def headers(**fields: str | None) -> list[tuple[str, bytes | None]]:
    """A producer's headers, with ``fields`` (event_time, sequence, generation, schema_id)
    replaced or (None) left out."""
    values = {
        HEADER_EVENT_TIME: TIME,
        HEADER_SEQUENCE_NUMBER: "7",
        HEADER_GENERATION: "2",
        HEADER_SCHEMA_ID: "5",
        **{
            {
                "event_time": HEADER_EVENT_TIME,
                "sequence": HEADER_SEQUENCE_NUMBER,
                "generation": HEADER_GENERATION,
                "schema_id": HEADER_SCHEMA_ID,
            }[name]: value
            for name, value in fields.items()
        },
    }
    out: list[tuple[str, bytes | None]] = [
        (HEADER_CONTENT_TYPE, b"application/yang-data+json"),
        (HEADER_SUBSCRIPTION_TYPE, b"on-change-sync"),
    ]
    return out + [(name, value.encode()) for name, value in values.items() if value is not None]


def row(offset: int, key: bytes | None, value: bytes, hdrs: Any = None, **kw: Any) -> QueueRow:
    return QueueRow(
        TOPIC, 0, offset, key, value, headers() if hdrs is None else hdrs,
        kw.pop("timestamp_ms", STAMP), **kw,
    )


@pytest.fixture(scope="module")
def compacted(chdb_conn: ChdbConnection) -> Iterator[TemplateHarness]:
    yield TemplateHarness(chdb_conn, f"tpl_{next(_databases)}", topic_spec(TOPIC, compaction=True))


@pytest.fixture(scope="module")
def retained(chdb_conn: ChdbConnection) -> Iterator[TemplateHarness]:
    spec = topic_spec(TOPIC, retention_seconds=30 * 86400)
    yield TemplateHarness(chdb_conn, f"tpl_{next(_databases)}", spec)


# -- mv_parse: good rows ---------------------------------------------------------------------


def test_a_good_row_is_split_into_its_columns(compacted: TemplateHarness) -> None:
    (parsed,) = compacted.parse([row(0, KEY, b'{"v":1}')])
    assert parsed["error"] == "" and parsed["error_kind"] == ""
    assert parsed["message_key"] == KEY.decode() and parsed["payload"] == '{"v":1}'
    assert parsed["node"] == "pe1" and int(parsed["subscription_id"]) == 1042
    assert parsed["xpaths"] == [f"{IF}[name='eth0']"]
    assert int(parsed["generation"]) == 2 and int(parsed["sequence_number"]) == 7
    assert int(parsed["schema_id"]) == 5
    assert parsed["event_time"].startswith(RECENT_DAY)
    assert parsed["content_type"] == "application/yang-data+json"
    assert parsed["subscription_type"] == "on-change-sync"
    assert parsed["raw_message"] == ""  # kept only for a row that goes to errors


def test_an_xpath_union_is_split_on_bars_outside_quotes(compacted: TemplateHarness) -> None:
    first, second = f"{IF}[name='a | b']", f'{IF}[name="it\'s"]'
    (parsed,) = compacted.parse([row(0, f"pe1\n1042\n{first} | {second}".encode(), b"{}")])
    assert parsed["error"] == ""
    assert parsed["xpaths"] == [first, second]


def test_without_an_event_time_the_kafka_timestamp_is_shown(compacted: TemplateHarness) -> None:
    (parsed,) = compacted.parse([row(0, KEY, b"{}", headers(event_time=None))])
    assert parsed["error"] == ""
    assert parsed["event_time"].startswith("2026-09-21") and "14:13:20.123" in parsed["event_time"]


def test_the_version_orders_generation_then_time_then_sequence_then_offset(
    compacted: TemplateHarness,
) -> None:
    rows = compacted.parse([
        row(0, KEY, b"a", headers(generation="1", sequence="9")),
        row(1, KEY, b"b", headers(generation="1", sequence="10")),
        row(2, KEY, b"c", headers(generation="1", sequence="10")),
        row(3, KEY, b"d", headers(generation="2", sequence="0", event_time="2000-01-01T00:00:00Z")),
    ])
    versions = [int(r["version"]) for r in rows]
    assert versions == sorted(versions) and len(set(versions)) == 4


# -- mv_parse: every reason a row cannot be stored ---------------------------------------------

BAD_ROWS: list[tuple[str, QueueRow, str, str]] = [
    # (case, queue row, kind, reason)
    ("engine could not read it",
     row(0, b"\xff", b"\x01", error="message key is not valid UTF-8 (byte 0)",
         raw_message=b"poison"),
     "decode", "message key is not valid UTF-8 (byte 0)"),
    ("key not UTF-8", row(0, b"\xc3\x28\n1\n/x", b"v"), "key", "message key is not valid UTF-8"),
    ("no key", row(0, None, b"v"), "key",
     "message has no key (is the producer running with message keys off?)"),
    ("two lines", row(0, b"pe1\n1042", b"v"), "key",
     "message key is not three lines: node LF subscription-id LF xpaths"),
    ("empty node", row(0, b"\n1042\n/x", b"v"), "key", "message key has an empty node name"),
    ("subscription id", row(0, b"pe1\nabc\n/x", b"v"), "key",
     "subscription id of the message key is not a decimal number: abc"),
    ("unbalanced quotes", row(0, b"pe1\n1042\n/a[k='x]", b"v"), "key",
     "XPath line of the message key is empty or has unbalanced quotes"),
    ("empty xpath line", row(0, b"pe1\n1042\n", b"v"), "key",
     "XPath line of the message key is empty or has unbalanced quotes"),
    ("event time", row(0, KEY, b"v", headers(event_time="yesterday")), "header",
     f"{HEADER_EVENT_TIME} header is not an RFC 3339 time: yesterday"),
    ("no time at all", row(0, KEY, b"v", headers(event_time=None), timestamp_ms=None), "header",
     f"no {HEADER_EVENT_TIME} header and no Kafka timestamp"),
    ("sequence number", row(0, KEY, b"v", headers(sequence="-5")), "header",
     f"{HEADER_SEQUENCE_NUMBER} header is not a decimal number: -5"),
    ("generation", row(0, KEY, b"v", headers(generation="two")), "header",
     f"{HEADER_GENERATION} header is not a decimal number: two"),
    ("schema id", row(0, KEY, b"v", headers(schema_id="x")), "header",
     f"{HEADER_SCHEMA_ID} header is not a schema registry id: x"),
    # numbers outside their column are refused, never wrapped
    ("generation over UInt32", row(0, KEY, b"v", headers(generation="4294967296")), "header",
     f"{HEADER_GENERATION} header is not a decimal number: 4294967296"),
    ("negative generation", row(0, KEY, b"v", headers(generation="-1")), "header",
     f"{HEADER_GENERATION} header is not a decimal number: -1"),
    ("sequence over UInt64",
     row(0, KEY, b"v", headers(sequence="18446744073709551616")), "header",
     f"{HEADER_SEQUENCE_NUMBER} header is not a decimal number: 18446744073709551616"),
    ("sequence in exponent form", row(0, KEY, b"v", headers(sequence="1e20")), "header",
     f"{HEADER_SEQUENCE_NUMBER} header is not a decimal number: 1e20"),
    ("sequence in Arabic-Indic digits", row(0, KEY, b"v", headers(sequence="\u0661\u0660")),
     "header", f"{HEADER_SEQUENCE_NUMBER} header is not a decimal number: \u0661\u0660"),
    ("schema id over UInt32", row(0, KEY, b"v", headers(schema_id="4294967296")), "header",
     f"{HEADER_SCHEMA_ID} header is not a schema registry id: 4294967296"),
]


@pytest.mark.parametrize(
    ("case", "queued", "kind", "reason"), BAD_ROWS, ids=[case for case, *_ in BAD_ROWS]
)
def test_a_malformed_row_is_classified_and_keeps_its_bytes(
    compacted: TemplateHarness, case: str, queued: QueueRow, kind: str, reason: str
) -> None:
    (parsed,) = compacted.parse([queued])
    assert (parsed["error_kind"], parsed["error"]) == (kind, reason), case
    # nothing of a bad row reaches history or current state; its bytes go to errors
    assert parsed["message_key"] == "" and parsed["payload"] == ""
    expected_raw = queued.raw_message if queued.error else queued.value
    assert parsed["raw_message"] == (expected_raw or b"").decode()


def test_good_rows_are_unaffected_by_bad_ones_in_the_same_block(
    compacted: TemplateHarness,
) -> None:
    queued = [r._replace(offset=i) for i, (_, r, _, _) in enumerate(BAD_ROWS)]
    queued.append(row(len(queued), KEY, b"ok"))
    parsed = compacted.parse(queued)
    assert [r["error_kind"] for r in parsed] == [kind for _, _, kind, _ in BAD_ROWS] + [""]
    assert parsed[-1]["payload"] == "ok"


# -- mv_errors ------------------------------------------------------------------------------


def test_errors_get_every_bad_row_and_no_good_one(compacted: TemplateHarness) -> None:
    queued = [r._replace(offset=i) for i, (_, r, _, _) in enumerate(BAD_ROWS)]
    good = len(queued)
    queued.append(row(good, KEY, b"ok", headers(event_time="2000-01-01T00:00:00Z")))
    found = compacted.errors(queued)
    assert [int(r["kafka_offset"]) for r in found] == list(range(good))
    assert [(r["error_kind"], r["error"]) for r in found] == [
        (kind, reason) for _, _, kind, reason in BAD_ROWS
    ]
    assert all(r["kafka_topic"] == TOPIC and r["source"] == "" for r in found)
    assert found[1]["raw_message"] == "v"  # what was received, for a replay
    # no retention on a compacted topic: an old good row is kept, not expired


def test_a_good_row_older_than_the_retention_is_counted_as_expired(
    retained: TemplateHarness,
) -> None:
    found = retained.errors([
        row(0, KEY, b"ancient", headers(event_time="2000-01-01T00:00:00Z")),
        row(1, KEY, b"recent", headers(event_time="2099-01-01T00:00:00Z")),
        row(2, b"pe1\n1042", b"bad"),
    ])
    assert [(int(r["kafka_offset"]), r["error_kind"]) for r in found] == [
        (0, "expired"), (2, "key")
    ]
    assert found[0]["raw_message"] == "ancient"  # the payload, kept
    assert "older than the topic retention of 2592000 s" in found[0]["error"]


def test_every_ingest_kind_comes_out_of_these_templates(
    compacted: TemplateHarness, retained: TemplateHarness
) -> None:
    """The vocabulary and the templates agree: each kind the errors table documents besides
    producer rejections is written by mv_parse or mv_errors (mv_dead_letter writes
    ``rejected:<kind>``)."""
    queued = [r._replace(offset=i) for i, (_, r, _, _) in enumerate(BAD_ROWS)]
    old = row(len(queued), KEY, b"old", headers(event_time="2000-01-01T00:00:00Z"))
    kinds = {r["error_kind"] for r in retained.errors([*queued, old])}
    assert kinds == set(INGEST_KINDS)
