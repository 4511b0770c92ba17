"""ClickHouse edge benchmark on embedded ClickHouse (chdb); prints figures and ratios.

1. Ingestion through the embedded pipeline (Null queue table -> parse view -> history,
   current state, errors) against a bare MergeTree with the same columns, both fed by the same
   ``INSERT ... SELECT`` from ``numbers()`` (the engine alone).
2. The bridge's own path: Arrow encoding of ``QueueRow`` batches, the same bytes into the bare
   table and into the queue table, and ingest's pipelined writer (each batch encoded while the
   previous one is inserted) end to end, with process CPU per row (every chdb thread counted);
   then the same from confluent-kafka ``Message`` objects (``row_from_message`` included: all
   of ingest but the poll).
   Each INSERT costs the engine tens of ms whatever its size (planning the views, one part per
   table): ``--batch`` shows how the batch size amortizes it.
3. Current state over 1M keys (1.2M rows: some keys updated, versions out of order): the
   ``FINAL`` query of ``yangkey.clickhouse.queries.current_state`` aggregated in the engine
   (count and payload bytes, so that no column is pruned), the
   ``argMax`` alternative, a one-node query fetched into Python, against ``SELECT count()``.

    python benchmarks/bench_clickhouse.py [--rows 1000000] [--keys 1000000] [--python-rows 200000]
        [--batch N] [--sections 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Message

from yangkey.catalog import TopicSpec
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.identifiers import qualified, quote_identifier, quote_literal
from yangkey.clickhouse.ingest.arrow import QUEUE_COLUMN_NAMES, QUEUE_FORMAT, encode_rows
from yangkey.clickhouse.ingest.inserter import BatchInserter
from yangkey.clickhouse.ingest.loop import DEFAULT_BATCH_SIZE
from yangkey.clickhouse.ingest.rows import row_from_message
from yangkey.clickhouse.queries import current_state
from yangkey.clickhouse.tables import topic_tables
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_SEQUENCE_NUMBER,
)

#: The headers of the synthetic messages, as a producer writes them.
HEADER_NAMES = (HEADER_CONTENT_TYPE, HEADER_EVENT_TIME, HEADER_SEQUENCE_NUMBER, HEADER_GENERATION)
_HEADER_ARRAY = "[" + ", ".join(quote_literal(name) for name in HEADER_NAMES) + "]"

TOPIC = "netops-current-state-if-interfaces-interface"
DB = "bench"


def spec() -> TopicSpec:
    return TopicSpec(
        name=TOPIC,
        schema_path="/x",
        subscription_ids=(1042,),
        subscription_type="on-change-sync",
        compaction=True,
        retention_seconds=0,
        partitions=6,
        replication_factor=1,
        templates=("/x",),
    )


def timed(label: str, function: Callable[[], Any], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<58} {best:8.3f} s")
    return best


def timed_cpu(
    label: str,
    function: Callable[[], Any],
    repeat: int = 3,
    before: Callable[[], Any] = lambda: None,
) -> tuple[float, float]:
    """Best wall and best process CPU seconds (every chdb thread counted) of ``repeat`` runs,
    ``before`` run untimed ahead of each one."""
    walls, cpus = [], []
    for _ in range(repeat):
        before()
        cpu = time.process_time()
        start = time.perf_counter()
        function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    print(f"  {label:<58} {min(walls):8.3f} s  (CPU {min(cpus):.3f} s)")
    return min(walls), min(cpus)


def generated_rows(n: int, keys: int) -> str:
    """A SELECT from numbers() producing queue rows (the Kafka virtual columns)."""
    return f"""
        SELECT
            concat('{{"ietf-interfaces:interface":[{{"name":"eth', toString(number % {keys}),
                   '","oper-status":"up","statistics":{{"in-octets":', toString(number), '}}}}]}}')
                AS value,
            '{TOPIC}' AS _topic,
            concat('pe', toString(number % {keys} % 1000), '\\n1042\\n',
                   '/ietf-interfaces:interfaces/interface[name=''eth',
                   toString(intDiv(number % {keys}, 1000)), ''']') AS _key,
            number AS _offset,
            number % 6 AS _partition,
            toDateTime(1790000000 + intDiv(number, 1000)) AS _timestamp,
            toDateTime64(1790000000 + number / 1000, 3) AS _timestamp_ms,
            {_HEADER_ARRAY} AS `_headers.name`,
            ['application/yang-data+json',
             concat('2026-09-21T12:00:00.', leftPad(toString((number * 7919) % 1000000000), 9, '0'),
                    'Z'),
             toString(number), '1'] AS `_headers.value`,
            '' AS _raw_message,
            '' AS _error
        FROM numbers({n})
    """


def bare_table(conn: ChdbConnection) -> str:
    table = qualified(DB, "bare")
    conn.command(f"DROP TABLE IF EXISTS {table}")
    conn.command(
        f"CREATE TABLE {table} (value String, _topic LowCardinality(String), _key String, "
        "_offset UInt64, _partition UInt64, _timestamp Nullable(DateTime), "
        "_timestamp_ms Nullable(DateTime64(3)), `_headers.name` Array(String), "
        "`_headers.value` Array(String), _raw_message String, _error String) "
        "ENGINE = MergeTree ORDER BY _key"
    )
    return table


def reset_pipeline(conn: ChdbConnection) -> None:
    conn.command(f"DROP DATABASE IF EXISTS {quote_identifier(DB)}")
    options = DdlOptions(database=DB, mode="embedded")
    apply(conn, render_ddl([spec()], options), DB)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--python-rows", type=int, default=200_000)
    parser.add_argument(
        "--batch", type=int, default=DEFAULT_BATCH_SIZE, help="rows per INSERT (section 2)"
    )
    parser.add_argument("--sections", default="1,2,3", help="which sections to run")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    names = topic_tables(TOPIC, DB)
    queue = qualified(DB, names.queue)
    current = qualified(DB, names.current)
    with tempfile.TemporaryDirectory() as path:
        conn = ChdbConnection(path)
        try:
            print(
                f"chdb {conn.query('SELECT version() AS v')[0]['v']}, "
                f"{args.rows:,} rows, {args.keys:,} keys"
            )

            if "1" in sections:
                print("\n1. ingestion, engine only (INSERT ... SELECT FROM numbers)")
                reset_pipeline(conn)
                bare = bare_table(conn)
                rows_sql = generated_rows(args.rows, args.keys)
                t_bare = timed(
                    "bare MergeTree (same columns, no parsing, no views)",
                    lambda: conn.command(f"INSERT INTO {bare} {rows_sql}"),
                )
                t_pipe = timed(
                    "queue -> parse view -> history + current + errors",
                    lambda: conn.command(f"INSERT INTO {queue} {rows_sql}"),
                )
                stored = conn.query(
                    f"SELECT (SELECT count() FROM {qualified(DB, names.history)}) AS h, "
                    f"(SELECT count() FROM {current}) AS c, "
                    f"(SELECT count() FROM {qualified(DB, 'errors')}) AS e"
                )[0]
                assert stored["h"] == args.rows and stored["c"] == args.rows and stored["e"] == 0
                print(f"  bare     {args.rows / t_bare:12,.0f} rows/s")
                print(
                    f"  pipeline {args.rows / t_pipe:12,.0f} rows/s   "
                    f"(ratio pipeline/bare time: {t_pipe / t_bare:.2f}x)"
                )

            if "2" in sections:
                print(
                    f"\n2. ingestion, bridge path (Arrow encode + streaming INSERT), "
                    f"{args.python_rows:,} rows"
                )
                reset_pipeline(conn)
                bare = bare_table(conn)
                hdr_names = HEADER_NAMES
                # what consumer.consume() hands the bridge
                messages = [
                    Message(
                        topic=TOPIC,
                        partition=i % 6,
                        offset=i,
                        key=f"pe{i % 1000}\n1042\n/ietf-interfaces:interfaces/interface"
                        f"[name='eth{i // 1000}']".encode(),
                        value=b'{"ietf-interfaces:interface":[{"name":"eth0","oper-status":"up"}]}',
                        headers=list(
                            zip(
                                hdr_names,
                                (
                                    b"application/yang-data+json",
                                    f"2026-09-21T12:00:{i % 60:02d}.{i:09d}Z".encode(),
                                    str(i).encode(),
                                    b"1",
                                ),
                                strict=True,
                            )
                        ),
                        timestamp=(1, 1_790_000_000_000 + i),
                    )
                    for i in range(args.python_rows)
                ]
                rows = [row_from_message(m) for m in messages]
                batch = args.batch
                n = args.python_rows
                batches = [rows[i : i + batch] for i in range(0, n, batch)]
                polled = [messages[i : i + batch] for i in range(0, n, batch)]
                blobs: list[bytes] = []
                t_encode, c_encode = timed_cpu(
                    f"encode_rows (Arrow), batches of {batch:,}",
                    lambda: blobs.extend(encode_rows(b) for b in batches),
                    before=blobs.clear,
                )

                def insert_all(table: str) -> None:
                    for blob in blobs:
                        conn.insert(table, QUEUE_COLUMN_NAMES, blob, QUEUE_FORMAT)

                t_raw, c_raw = timed_cpu(
                    "the same bytes into the bare MergeTree", lambda: insert_all(bare)
                )
                t_queue, c_queue = timed_cpu(
                    "the same bytes into the queue table (views fire)",
                    lambda: insert_all(queue),
                    before=lambda: reset_pipeline(conn),
                )

                def bridge(from_messages: bool) -> None:
                    # what ingest does per polled batch: rows, encode, then insert on the helper
                    # thread while the next batch is read and encoded
                    inserter = BatchInserter(conn, DB)
                    try:
                        for i, ready in enumerate(batches):
                            b = [row_from_message(m) for m in polled[i]] if from_messages else ready
                            inserter.submit([(TOPIC, encode_rows(b))], lambda: None)
                        inserter.flush()
                    finally:
                        inserter.close()

                t_bridge, c_bridge = timed_cpu(
                    "bridge: encode + insert, pipelined",
                    lambda: bridge(False),
                    before=lambda: reset_pipeline(conn),
                )
                t_whole, c_whole = timed_cpu(
                    "bridge from Kafka messages: row_from_message + the above",
                    lambda: bridge(True),
                    before=lambda: reset_pipeline(conn),
                )
                stored = conn.query(f"SELECT count() AS n FROM {qualified(DB, names.history)}")[0]
                assert stored["n"] == n, stored
                bytes_per_row = sum(map(len, blobs)) / n

                def per_row(cpu: float) -> str:
                    return f"{cpu / n * 1e6:.2f} us CPU/row"

                print(
                    f"  encode   {n / t_encode:12,.0f} rows/s   "
                    f"({bytes_per_row:.0f} bytes/row, {per_row(c_encode)})"
                )
                print(f"  bare     {n / t_raw:12,.0f} rows/s   ({per_row(c_raw)})")
                print(
                    f"  pipeline {n / t_queue:12,.0f} rows/s   ({per_row(c_queue)}; "
                    f"ratio pipeline/bare time: {t_queue / t_raw:.2f}x)"
                )
                print(
                    f"  bridge end to end (encode + pipeline insert, overlapped): "
                    f"{n / t_bridge:,.0f} rows/s ({per_row(c_bridge)}; "
                    f"ratio to the bare insert: {t_bridge / t_raw:.2f}x; "
                    f"encode + insert one after the other: {n / (t_encode + t_queue):,.0f} rows/s)"
                )
                print(
                    f"  from Kafka messages (all of ingest but consume()): {n / t_whole:,.0f} "
                    f"rows/s ({per_row(c_whole)})"
                )
                print(f"  load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")

            if "3" in sections:
                print(f"\n3. current state over {args.keys:,} keys")
                reset_pipeline(conn)
                extra = args.keys // 5
                conn.command(f"INSERT INTO {queue} {generated_rows(args.keys, args.keys)}")
                # 20% of the keys again, with OLDER event times at higher offsets: must not win
                conn.command(
                    f"INSERT INTO {queue} "
                    + generated_rows(extra, args.keys)
                    .replace("'2026-09-21T12:00:00.'", "'2026-09-21T11:00:00.'")
                    .replace("number AS _offset", f"number + {args.keys} AS _offset")
                )
                total_rows = conn.query(f"SELECT count() AS n FROM {current}")[0]["n"]
                print(f"  rows in the current-state table (unmerged parts): {total_rows:,}")
                t_count = timed(
                    "baseline: SELECT count()",
                    lambda: conn.query(f"SELECT count() FROM {current}"),
                    repeat=3,
                )
                t_scan = timed(
                    "baseline: SELECT uniqExact(message_key) (reads every key)",
                    lambda: conn.query(f"SELECT uniqExact(message_key) FROM {current}"),
                    repeat=3,
                )
                final_sql = (
                    "SELECT count() AS n, sum(length(payload)) AS bytes FROM (SELECT *, "
                    "max(generation) OVER "
                    "(PARTITION BY node, subscription_id) AS g "
                    f"FROM {current} FINAL) WHERE generation = g"
                )
                result: dict[str, Any] = {}
                t_final = timed(
                    "current state, all keys (FINAL + generation window), aggregated",
                    lambda: result.update(conn.query(final_sql)[0]),
                    repeat=3,
                )
                assert result["n"] == args.keys, result
                t_final_plain = timed(
                    "FINAL without the generation filter, aggregated",
                    lambda: conn.query(
                        f"SELECT count(), sum(length(payload)) FROM {current} FINAL"
                    ),
                    repeat=3,
                )
                t_argmax = timed(
                    "argMax(payload, version) GROUP BY message_key, aggregated",
                    lambda: conn.query(
                        f"SELECT count(), sum(length(p)) FROM (SELECT message_key, "
                        f"argMax(payload, version) AS p FROM {current} GROUP BY message_key)"
                    ),
                    repeat=3,
                )
                one: list[Any] = []
                t_node = timed(
                    "current_state(node='pe7') into Python (1,000 keys)",
                    lambda: one.__setitem__(slice(None), current_state(conn, DB, node="pe7")),
                    repeat=3,
                )
                assert len(one) == args.keys // 1000, len(one)
                older = conn.query(
                    f"SELECT countIf(event_time < toDateTime64('2026-09-21 12:00:00', 9, 'UTC')) "
                    f"AS n FROM {current} FINAL"
                )[0]["n"]
                assert older == 0, "an older replay won"
                print(f"  FINAL query / uniqExact(key): {t_final / t_scan:.2f}x")
                print(
                    f"  FINAL query / count(): {t_final / t_count:8.1f}x; "
                    f"plain FINAL: {t_final_plain / t_count:.1f}x; argMax: "
                    f"{t_argmax / t_count:.1f}x; one node: {t_node * 1000:.1f} ms"
                )
        finally:
            conn.close()


if __name__ == "__main__":
    main()
