"""The embedded flavour executed on chdb with rows flowing: queue -> views -> tables -> queries.

No Kafka: rows go straight into the Null queue tables exactly as the ingest bridge writes them
(Arrow batches, Kafka virtual columns as real ones). Each test uses its own database on one chdb
data path (chdb holds one path per process; the session is closed when the module ends).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence

import pytest
from factories import RECENT_DAY, topic_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yangkey.catalog import TopicSpec
from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection, ServerConnection
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.loop import IngestLoop
from yangkey.clickhouse.ingest.offsets import static_member_id
from yangkey.clickhouse.ingest.rows import QueueRow
from yangkey.clickhouse.queries import (
    OffsetCursor,
    TimeCursor,
    current_state,
    decode_cursor,
    encode_cursor,
    history,
)
from yangkey.clickhouse.tables import topic_tables
from yangkey.errors import ConfigError
from yangkey.messages import MessageKey
from yangkey.xpath import quote

IF_TOPIC = "netops-current-state-if-interfaces-interface"
CLOCK_TOPIC = "netops-stats-sys-system-clock"
DEAD_LETTER = "netops-yangkey-dead-letter"
_databases = itertools.count()


def spec(name: str, compaction: bool) -> TopicSpec:
    retention = 0 if compaction else 30 * 86400
    return topic_spec(name, compaction=compaction, retention_seconds=retention, partitions=3)


TOPICS = (spec(IF_TOPIC, True), spec(CLOCK_TOPIC, False))


@pytest.fixture
def db(conn: ChdbConnection) -> str:
    """A fresh database with the embedded DDL applied."""
    name = f"yk_test_{next(_databases)}"
    options = DdlOptions(database=name, mode="embedded", dead_letter_topic=DEAD_LETTER)
    result = apply(conn, render_ddl(TOPICS, options), name)
    assert len(result.created) == result.total and not result.existing
    return name


def iface(name: str) -> str:
    return f"/ietf-interfaces:interfaces/interface[name={quote(name)}]"


def key(node: str, sub: int, *xpaths: str) -> bytes:
    return MessageKey.of(node, sub, xpaths).encode()


def headers(
    event_time: str | None, seq: int | None = 0, gen: int | None = 1, **extra: str
) -> list[tuple[str, bytes | None]]:
    out: list[tuple[str, bytes | None]] = [("content-type", b"application/yang-data+json")]
    if event_time is not None:
        out.append(("yangkey-event-time", event_time.encode()))
    if seq is not None:
        out.append(("yangkey-sequence-number", str(seq).encode()))
    if gen is not None:
        out.append(("yangkey-generation", str(gen).encode()))
    out.append(("yangkey-subscription-type", b"on-change-sync"))
    out += [(k.replace("_", "-"), v.encode()) for k, v in extra.items()]
    return out


def row(
    offset: int,
    message_key: bytes | None,
    value: bytes,
    hdrs: Sequence[tuple[str, bytes | None]],
    *,
    topic: str = IF_TOPIC,
    partition: int = 0,
    error: str = "",
    timestamp_ms: int | None = 1_790_000_000_000,
) -> QueueRow:
    return QueueRow(
        topic=topic,
        partition=partition,
        offset=offset,
        key=message_key,
        value=value,
        headers=list(hdrs),
        timestamp_ms=timestamp_ms,
        error=error,
        raw_message=value if error else b"",
    )


def count(conn: ChdbConnection, db: str, table: str, final: bool = False) -> int:
    suffix = " FINAL" if final else ""
    return int(conn.query(f"SELECT count() AS n FROM {qualified(db, table)}{suffix}")[0]["n"])


K_ETH0 = key("pe1", 1042, iface("eth0"))
K_PIPE = key("pe1", 1042, iface("a | b"), iface("it's | \"quoted\""))
K_PE2 = key("pe2", 1042, iface("eth0"))


def test_good_rows_reach_history_and_current_state(conn: ChdbConnection, db: str) -> None:
    insert_rows(conn, db, IF_TOPIC, [
        row(0, K_ETH0, b'{"v":1}', headers(f"{RECENT_DAY}T10:00:00.123456789Z", 1)),
        row(1, K_PIPE, b'{"v":2}', headers(f"{RECENT_DAY}T12:00:00.5+02:00", 2)),
        row(2, K_PE2, b'{"v":3}', headers(f"{RECENT_DAY}T10:00:03Z", 3, schema_id="7")),
    ])
    names = topic_tables(IF_TOPIC, db)
    assert count(conn, db, names.history) == 3
    assert count(conn, db, "errors") == 0
    rows = current_state(conn, db, node="pe1")
    assert [r["message_key"] for r in rows] == sorted([K_ETH0.decode(), K_PIPE.decode()])
    by_key = {r["message_key"]: r for r in rows}
    first = by_key[K_ETH0.decode()]
    assert first["node"] == "pe1" and first["subscription_id"] == 1042
    assert first["event_time"] == f"{RECENT_DAY}T10:00:00.123456789Z"  # nanoseconds kept
    assert first["payload"] == '{"v":1}'
    assert first["content_type"] == "application/yang-data+json"
    assert first["kafka_topic"] == IF_TOPIC and first["kafka_offset"] == 0
    piped = by_key[K_PIPE.decode()]
    # " | " inside quoted values does not split the XPath line
    assert piped["xpaths"] == list(MessageKey.parse(K_PIPE).xpaths)
    assert piped["xpaths"] == sorted([iface("a | b"), iface("it's | \"quoted\"")])
    assert piped["event_time"] == f"{RECENT_DAY}T10:00:00.500000000Z"  # offset normalised to UTC
    pe2 = current_state(conn, db, node="pe2")
    assert len(pe2) == 1 and pe2[0]["schema_id"] == 7


def test_duplicate_offset_does_not_change_current_state(conn: ChdbConnection, db: str) -> None:
    batch = [
        row(0, K_ETH0, b'{"v":1}', headers(f"{RECENT_DAY}T10:00:00Z", 1)),
        row(1, K_ETH0, b'{"v":2}', headers(f"{RECENT_DAY}T10:00:01Z", 2)),
    ]
    insert_rows(conn, db, IF_TOPIC, batch)
    before = current_state(conn, db)
    insert_rows(conn, db, IF_TOPIC, batch)  # the batch replayed: same offsets again
    names = topic_tables(IF_TOPIC, db)
    assert count(conn, db, names.history) == 4  # history stores what arrived...
    page = history(conn, db, node="pe1")
    assert [r["kafka_offset"] for r in page.rows] == [0, 1]  # ...queries skip the duplicates
    after = current_state(conn, db)
    assert after == before
    assert len(after) == 1 and after[0]["payload"] == '{"v":2}'
    assert count(conn, db, names.current, final=True) == 1


def test_older_replay_never_wins(conn: ChdbConnection, db: str) -> None:
    insert_rows(conn, db, IF_TOPIC, [row(5, K_ETH0, b"new", headers(f"{RECENT_DAY}T10:00:05Z", 9))])
    # an older message arrives later, at a higher offset (a replay from another producer)
    insert_rows(conn, db, IF_TOPIC,
                [row(6, K_ETH0, b"old", headers(f"{RECENT_DAY}T10:00:01Z", 20))])
    # same event time, lower sequence number
    insert_rows(conn, db, IF_TOPIC, [row(7, K_ETH0, b"older-seq", headers(f"{RECENT_DAY}T10:00:05Z",
                                                                            8))])
    assert [r["payload"] for r in current_state(conn, db)] == ["new"]
    names = topic_tables(IF_TOPIC, db)
    conn.command(f"OPTIMIZE TABLE {qualified(db, names.current)} FINAL")
    stored = conn.query(f"SELECT payload FROM {qualified(db, names.current)}")
    assert stored == [{"payload": "new"}]  # merged: the older ones are gone for good
    argmax = conn.query(
        f"SELECT argMax(payload, version) AS p FROM {qualified(db, names.current)} "
        "GROUP BY message_key"
    )
    assert argmax == [{"p": "new"}]


def test_older_replay_without_event_time_never_wins(conn: ChdbConnection, db: str) -> None:
    """Without an event time the Kafka timestamp stands in for it, but a replay (RFC 8639
    replay, a producer rerun) is written later and gets a *newer* Kafka timestamp: only its
    sequence number says it is old, and it must not win current state."""
    no_time = headers(None, 41)
    insert_rows(conn, db, IF_TOPIC, [
        row(0, K_ETH0, b"old", no_time, timestamp_ms=1_790_000_000_000),
        row(1, K_ETH0, b"new", headers(None, 42), timestamp_ms=1_790_000_001_000),
    ])
    # the replay of the old notification, an hour later, at a higher offset
    insert_rows(conn, db, IF_TOPIC, [
        row(2, K_ETH0, b"old", no_time, timestamp_ms=1_790_003_600_000),
    ])
    (state,) = current_state(conn, db)
    assert state["payload"] == "new" and state["kafka_offset"] == 1
    assert state["event_time"] == "2026-09-21T14:13:21.000000000Z"  # still shown as event time
    names = topic_tables(IF_TOPIC, db)
    conn.command(f"OPTIMIZE TABLE {qualified(db, names.current)} FINAL")
    assert conn.query(f"SELECT payload FROM {qualified(db, names.current)}") == [
        {"payload": "new"}
    ]
    # no sequence number either: nothing tells a replay apart; the later offset wins (as Kafka
    # compaction of the topic itself would keep it)
    insert_rows(conn, db, IF_TOPIC, [
        row(3, K_PE2, b"first", headers(None, None), timestamp_ms=1_790_000_000_000),
        row(4, K_PE2, b"second", headers(None, None), timestamp_ms=1_789_000_000_000),
    ])
    assert {r["node"]: r["payload"] for r in current_state(conn, db)}["pe2"] == "second"


def test_newer_generation_wins_and_hides_old_generation_keys(
    conn: ChdbConnection, db: str
) -> None:
    old_only = key("pe1", 1042, iface("eth9"))
    insert_rows(conn, db, IF_TOPIC, [
        row(0, K_ETH0, b"gen1", headers(f"{RECENT_DAY}T10:00:09Z", 5, gen=1)),
        row(1, old_only, b"gen1-eth9", headers(f"{RECENT_DAY}T10:00:09Z", 6, gen=1)),
        row(2, K_PE2, b"pe2-gen1", headers(f"{RECENT_DAY}T10:00:09Z", 1, gen=1)),
    ])
    # the subscription changed (generation 2): its first message has an *older* event time
    insert_rows(conn, db, IF_TOPIC, [
        row(3, K_ETH0, b"gen2", headers(f"{RECENT_DAY}T10:00:01Z", 0, gen=2)),
    ])
    rows = current_state(conn, db, node="pe1")
    assert [(r["payload"], r["generation"]) for r in rows] == [("gen2", 2)]
    # eth9 has no generation-2 message yet: it is not current state any more
    all_rows = current_state(conn, db)
    assert {r["payload"] for r in all_rows} == {"gen2", "pe2-gen1"}  # pe2 is still on gen 1
    every = history(conn, db, node="pe1")
    assert [r["payload"] for r in every.rows] == ["gen2", "gen1", "gen1-eth9"]
    current = history(conn, db, node="pe1", current_generation=True)
    assert [r["payload"] for r in current.rows] == ["gen2"]
    both_nodes = history(conn, db, topic=IF_TOPIC, current_generation=True)
    assert {r["payload"] for r in both_nodes.rows} == {"gen2", "pe2-gen1"}


def test_poison_and_malformed_messages_go_to_errors(conn: ChdbConnection, db: str) -> None:
    good_headers = headers(f"{RECENT_DAY}T10:00:00Z")
    insert_rows(conn, db, IF_TOPIC, [
        # the ingest bridge could not decode it: _error set, raw bytes kept
        row(10, b"\xff\xfe", b"\x00poison\xff", good_headers,
            error="message key is not valid UTF-8 (byte 0)"),
        row(11, b"pe1\n1042", b"two-lines", good_headers),
        row(12, b"pe1\nabc\n/x", b"bad-sub", good_headers),
        row(13, None, b"no-key", good_headers),
        row(14, K_ETH0, b"bad-time", headers("yesterday")),
        row(15, K_ETH0, b"bad-seq",
            [*headers(f"{RECENT_DAY}T10:00:00Z", None), ("yangkey-sequence-number", b"x")]),
        row(16, b"pe1\n1042\n/a[k='unbalanced]", b"bad-quotes", good_headers),
        row(17, b"\xc3\x28\n1\n/x", b"bad-utf8-key", good_headers),
        row(18, K_ETH0, b"ok", good_headers),
    ])
    errors = conn.query(
        f"SELECT kafka_offset, error_kind, error, raw_message, kafka_topic "
        f"FROM {qualified(db, 'errors')} ORDER BY kafka_offset"
    )
    # each reason and kind is held by test_sql_templates; here: they all reach errors
    by_offset = {r["kafka_offset"]: r for r in errors}
    assert sorted(by_offset) == [10, 11, 12, 13, 14, 15, 16, 17]
    assert [by_offset[o]["error_kind"] for o in sorted(by_offset)] == [
        "decode", "key", "key", "key", "header", "header", "key", "key"
    ]
    assert by_offset[10]["raw_message"].startswith("\x00poison")
    assert all(r["kafka_topic"] == IF_TOPIC and r["error"] for r in errors)
    assert by_offset[13]["raw_message"] == "no-key"
    # the good message after the bad ones got through: the pipeline keeps going
    assert [r["payload"] for r in current_state(conn, db)] == ["ok"]
    assert count(conn, db, topic_tables(IF_TOPIC, db).history) == 1


def test_kafka_timestamp_when_no_event_time_header(conn: ChdbConnection, db: str) -> None:
    insert_rows(conn, db, IF_TOPIC, [
        row(0, K_ETH0, b"x", headers(None, None, None), timestamp_ms=1_790_000_000_123),
        row(1, K_PE2, b"y", headers(None), timestamp_ms=None),
    ])
    rows = current_state(conn, db)
    assert len(rows) == 1
    assert rows[0]["event_time"] == "2026-09-21T14:13:20.123000000Z"
    assert rows[0]["sequence_number"] == 0 and rows[0]["generation"] == 1
    errors = conn.query(f"SELECT error FROM {qualified(db, 'errors')}")
    assert errors == [{"error": "no yangkey-event-time header and no Kafka timestamp"}]


def test_dead_letter_records_reach_errors(conn: ChdbConnection, db: str) -> None:
    insert_rows(conn, db, DEAD_LETTER, [
        row(3, None, b"<notification/>", [
            ("yangkey-error", b"no matching instances"),
            ("yangkey-error-kind", b"no-match"),
            ("yangkey-source", b"kafka://raw@0:17"),
        ], topic=DEAD_LETTER),
    ])
    errors = conn.query(f"SELECT * FROM {qualified(db, 'errors')}")
    assert len(errors) == 1
    (err,) = errors
    assert err["error_kind"] == "rejected:no-match"
    assert err["error"] == "no matching instances"
    assert err["source"] == "kafka://raw@0:17"
    assert err["raw_message"] == "<notification/>"
    assert err["kafka_topic"] == DEAD_LETTER and err["kafka_offset"] == 3


def test_filters(conn: ChdbConnection, db: str) -> None:
    other_sub = key("pe1", 7, "/ietf-system:system/clock")
    insert_rows(conn, db, IF_TOPIC, [
        row(0, K_ETH0, b"a", headers(f"{RECENT_DAY}T10:00:00Z")),
        row(1, K_PIPE, b"b", headers(f"{RECENT_DAY}T10:00:01Z")),
        row(2, K_PE2, b"c", headers(f"{RECENT_DAY}T10:00:02Z")),
    ])
    insert_rows(conn, db, CLOCK_TOPIC, [
        row(0, other_sub, b"clock", headers(f"{RECENT_DAY}T10:00:03Z"), topic=CLOCK_TOPIC),
    ])
    assert len(current_state(conn, db)) == 4
    assert len(current_state(conn, db, node="pe1")) == 3
    assert len(current_state(conn, db, node="pe1", subscription_id=1042)) == 2
    assert [r["payload"] for r in current_state(conn, db, subscription_id=7)] == ["clock"]
    assert [r["payload"] for r in current_state(conn, db, topic=CLOCK_TOPIC)] == ["clock"]
    prefix = "/ietf-interfaces:interfaces/interface[name='a | "
    assert [r["payload"] for r in current_state(conn, db, xpath_prefix=prefix)] == ["b"]
    # a hostile value is a parameter, not SQL
    assert current_state(conn, db, node="pe1' OR 1=1 --") == []
    assert len(current_state(conn, db, limit=2)) == 2
    with pytest.raises(ClickHouseError, match="no such table"):
        current_state(conn, db, topic="no-such-topic")
    with pytest.raises(ClickHouseError, match="does not exist"):
        current_state(conn, "no_such_database")


def test_history_paging(conn: ChdbConnection, db: str) -> None:
    rows = [
        row(i, K_ETH0 if i % 2 else K_PE2, f"m{i}".encode(),
            headers(f"{RECENT_DAY}T10:00:{i // 2:02d}Z", i), partition=i % 3)
        for i in range(10)
    ]
    insert_rows(conn, db, IF_TOPIC, rows)
    insert_rows(conn, db, IF_TOPIC, rows[:4])  # replayed: must not show twice
    seen: list[str] = []
    after: TimeCursor | OffsetCursor | None = None
    pages = 0
    while True:
        page = history(conn, db, topic=IF_TOPIC, limit=3, after=after)
        seen += [r["payload"] for r in page.rows]
        pages += 1
        if page.next_cursor is None:
            break
        after = decode_cursor(encode_cursor(page.next_cursor))  # round trip via the CLI token
    assert seen == [f"m{i}" for i in range(10)]  # time order, then sequence number
    assert pages == 4
    by_key = history(conn, db, key=K_ETH0.decode(), limit=100)
    assert [r["payload"] for r in by_key.rows] == ["m1", "m3", "m5", "m7", "m9"]
    window = history(conn, db, node="pe2", since=f"{RECENT_DAY}T10:00:01Z",
                     until=f"{RECENT_DAY}T12:00:03+02:00")
    assert [r["payload"] for r in window.rows] == ["m2", "m4"]
    by_offset = history(conn, db, topic=IF_TOPIC, order="offset", limit=4)
    assert [(r["kafka_partition"], r["kafka_offset"]) for r in by_offset.rows] == [
        (0, 0), (0, 3), (0, 6), (0, 9)
    ]
    assert isinstance(by_offset.next_cursor, OffsetCursor)
    rest = history(conn, db, topic=IF_TOPIC, after=by_offset.next_cursor, limit=100)
    assert len(rest.rows) == 6 and rest.next_cursor is None


def test_same_answers_through_clickhouse_connect(conn: ChdbConnection, db: str) -> None:
    """The server code path (clickhouse-connect client, server-side parameters, raw Arrow
    insert) on clickhouse-connect's chdb interface, same data path: same answers."""
    import clickhouse_connect  # noqa: PLC0415

    client = clickhouse_connect.get_client(interface="chdb", path=conn.path)
    server = ServerConnection(client, "clickhouse-connect over chdb")
    try:
        insert_rows(server, db, IF_TOPIC, [
            row(0, K_ETH0, b"a", headers(f"{RECENT_DAY}T10:00:00Z", 1)),
            row(1, K_PIPE, b"b", headers(f"{RECENT_DAY}T10:00:01.000000001Z", 2)),
            row(2, b"broken", b"c", headers(f"{RECENT_DAY}T10:00:02Z", 3)),
        ])
        insert_rows(server, db, IF_TOPIC, [row(1, K_PIPE, b"b", headers(f"{RECENT_DAY}T10:00:01Z",
                                                                          2))])
        via_server = current_state(server, db, node="pe1' --")
        assert via_server == []
        via_server = current_state(server, db, node="pe1")
        assert via_server == current_state(conn, db, node="pe1")
        assert [r["payload"] for r in via_server] == ["b", "a"]  # by key: 'a | b' < 'eth0'
        assert via_server[0]["xpaths"] == list(MessageKey.parse(K_PIPE).xpaths)
        # the replay at the same offset with an earlier time did not win
        assert via_server[0]["event_time"] == f"{RECENT_DAY}T10:00:01.000000001Z"
        page_server = history(server, db, node="pe1", limit=1)
        page_chdb = history(conn, db, node="pe1", limit=1)
        assert page_server == page_chdb and page_server.next_cursor is not None
        assert count(conn, db, "errors") == 1
        with pytest.raises(ClickHouseError, match="does not exist"):
            current_state(server, "no_such_database")
    finally:
        server.close()


def test_apply_is_idempotent(conn: ChdbConnection, db: str) -> None:
    options = DdlOptions(database=db, mode="embedded", dead_letter_topic=DEAD_LETTER)
    again = apply(conn, render_ddl(TOPICS, options), db)
    assert not again.created and len(again.existing) == again.total


_value = st.text(
    alphabet=st.sampled_from(list("ab01 |'\"\n-_/")), min_size=0, max_size=12
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    node=st.text(alphabet=st.sampled_from(list("pe1-. |'")), min_size=1, max_size=8).filter(
        lambda name: name == name.strip()  # node names never start or end with a space
    ),
    subscription_id=st.integers(min_value=0, max_value=2**32 - 1),
    values=st.lists(_value, min_size=1, max_size=4),
)
def test_sql_key_split_matches_parse_key(
    conn: ChdbConnection, db: str, node: str, subscription_id: int, values: list[str]
) -> None:
    """The views split any composed key exactly like ``yangkey.messages.MessageKey.parse``."""
    message_key = key(node, subscription_id, *(iface(v) for v in values))
    offset = next(_databases)  # unique per example
    insert_rows(conn, db, IF_TOPIC, [row(offset, message_key, b"{}",
                                         headers(f"{RECENT_DAY}T10:00:00Z"))])
    stored = conn.query(
        "SELECT node, subscription_id, xpaths FROM "
        f"{qualified(db, topic_tables(IF_TOPIC, db).history)}"
        " WHERE kafka_offset = {o:UInt64}",
        {"o": offset},
    )
    expected = MessageKey.parse(message_key)
    assert stored == [{
        "node": expected.node,
        "subscription_id": expected.subscription_id,
        "xpaths": list(expected.xpaths),
    }]


def test_invalid_consumer_setting_is_one_error_not_a_traceback(conn: ChdbConnection) -> None:
    with pytest.raises(ConfigError, match=r"invalid Kafka consumer settings: .*bogus\.prop"):
        IngestLoop(conn, [IF_TOPIC], "127.0.0.1:1", kafka_config={"bogus.prop": "1"}).run()


def test_cursor_with_an_infinite_number_is_refused() -> None:
    token = base64.urlsafe_b64encode(b'["t","2026-11-20T10:00:00Z",1e999,"k"]').decode()
    with pytest.raises(ConfigError, match="invalid history cursor"):
        decode_cursor(token)


def test_numbers_outside_their_column_are_refused_not_wrapped(
    conn: ChdbConnection, db: str
) -> None:
    """{limit:UInt64} reads 2**64 as 0 (no rows, no error): every number is checked first."""
    insert_rows(conn, db, IF_TOPIC, [row(0, K_ETH0, b"x", headers(f"{RECENT_DAY}T10:00:00Z"))])
    assert len(current_state(conn, db, limit=2**64 - 1)) == 1
    with pytest.raises(ConfigError, match=r"--limit: must be between 1 and 18446744073709551615"):
        current_state(conn, db, limit=2**64)
    with pytest.raises(ConfigError, match="--limit: must be between"):
        history(conn, db, node="pe1", limit=2**64)
    with pytest.raises(ConfigError, match="--subscription-id: must be between 0 and 4294967295"):
        current_state(conn, db, node="pe1", subscription_id=2**32)
    with pytest.raises(ConfigError, match="--subscription-id: must be between"):
        history(conn, db, node="pe1", subscription_id=-1)
    assert len(history(conn, db, node="pe1", subscription_id=1042).rows) == 1


@pytest.mark.parametrize(
    "text",
    ["garbage", "2026-13-01T00:00:00Z", f"{RECENT_DAY}T25:00:00Z", f"{RECENT_DAY}T10:00:00+24:00",
     "yesterday", "1e9", f"{RECENT_DAY}T10:00:00.1234567890Z", "\u0662\u0660\u0662\u0666-01-01"],
)
def test_history_since_garbage_is_our_reason_not_the_engine_sql(
    conn: ChdbConnection, db: str, text: str
) -> None:
    with pytest.raises(ConfigError, match="--since: not an RFC 3339 time") as caught:
        history(conn, db, node="pe1", since=text)
    assert "SELECT" not in str(caught.value)
    with pytest.raises(ConfigError, match="--until: not an RFC 3339 time"):
        history(conn, db, node="pe1", until=text)


def test_history_times_clickhouse_cannot_hold_are_refused(conn: ChdbConnection, db: str) -> None:
    with pytest.raises(ConfigError, match="outside the times ClickHouse stores"):
        history(conn, db, node="pe1", since="1899-12-31T23:59:59Z")
    # accepted forms: Z, offset, no offset (UTC), nanoseconds, a date alone
    insert_rows(conn, db, IF_TOPIC, [row(0, K_ETH0, b"x", headers(f"{RECENT_DAY}T10:00:00Z"))])
    for since in (f"{RECENT_DAY}T10:00:00Z", f"{RECENT_DAY}T11:00:00+01:00",
                  f"{RECENT_DAY} 10:00:00", f"{RECENT_DAY}T09:59:59.999999999Z", RECENT_DAY):
        assert len(history(conn, db, node="pe1", since=since).rows) == 1, since


def test_cursor_numbers_outside_their_column_are_refused() -> None:
    for data in (b'["t","2026-11-20T10:00:00Z",18446744073709551616,"k"]',
                 b'["t","garbage",1,"k"]', b'["o","t",4294967296,0]', b'["o","t",0,-1]'):
        token = base64.urlsafe_b64encode(data).decode()
        with pytest.raises(ConfigError, match="invalid history cursor"):
            decode_cursor(token)


def test_rows_older_than_retention_are_counted_as_expired_not_lost(
    conn: ChdbConnection, db: str
) -> None:
    """The history TTL drops a row whose event time is already past the topic's retention at
    the next merge (forced here): the errors table receives it at insert (kind expired,
    payload kept), so it is counted."""
    other = key("pe1", 7, "/ietf-system:system/clock")
    insert_rows(conn, db, CLOCK_TOPIC, [
        row(0, other, b"ancient", headers("2000-01-01T00:00:00Z", 1), topic=CLOCK_TOPIC),
        row(1, other, b"recent", headers("2099-01-01T00:00:00Z", 2), topic=CLOCK_TOPIC),
    ])
    clock = topic_tables(CLOCK_TOPIC, db)
    conn.command(f"OPTIMIZE TABLE {qualified(db, clock.history)} FINAL")
    assert [r["payload"] for r in history(conn, db, topic=CLOCK_TOPIC).rows] == ["recent"]
    assert count(conn, db, clock.history) == 1  # the TTL really dropped the old one
    errors = conn.query(
        f"SELECT kafka_offset, error_kind, error, raw_message FROM {qualified(db, 'errors')}"
    )
    assert len(errors) == 1
    (expired,) = errors
    assert expired["kafka_offset"] == 0 and expired["error_kind"] == "expired"
    assert expired["raw_message"] == "ancient"
    assert "older than the topic retention of 2592000 s" in expired["error"]
    # a compacted topic without retention keeps everything: nothing expires
    insert_rows(conn, db, IF_TOPIC, [row(0, K_ETH0, b"old", headers("2000-01-01T00:00:00Z"))])
    assert [r["payload"] for r in current_state(conn, db, topic=IF_TOPIC)] == ["old"]
    assert count(conn, db, "errors") == 1


def test_static_member_id_is_stable_per_ingest_identity(
    conn: ChdbConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same group, directory and database (however the directory is spelled) restart as
    the same static member; anything else is another member."""
    first = static_member_id("g", conn, "yangkey")
    assert first == static_member_id("g", conn, "yangkey")
    assert first.startswith("yangkey-ingest-")
    monkeypatch.chdir(conn.path)
    relative = ChdbConnection.__new__(ChdbConnection)
    relative.path, relative.description = ".", "embedded ClickHouse at ."
    assert static_member_id("g", relative, "yangkey") == first
    assert static_member_id("g2", conn, "yangkey") != first
    assert static_member_id("g", conn, "other") != first


@pytest.mark.parametrize(
    "text", ["plain", "o'brien", "x\ny", "tab\there", "back\\slash", "nul\x00", "\\'\n"]
)
def test_query_parameters_reach_chdb_as_given(conn: ChdbConnection, text: str) -> None:
    """Scalars, arrays and tuples of any string: chdb reads a scalar parameter TSV-escaped
    but an array or tuple in the quoted format alone (escaped twice, a quote broke it)."""
    row = conn.query(
        "SELECT {s:String} AS s, {a:Array(String)} AS a, {t:Tuple(String, Int32)} AS t",
        {"s": text, "a": [text, "b"], "t": (text, 7)},
    )[0]
    assert (row["s"], list(row["a"]), list(row["t"])) == (text, [text, "b"], [text, 7])
