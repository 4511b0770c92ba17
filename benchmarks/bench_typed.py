"""Typed instance tables benchmark on embedded ClickHouse (chdb); prints figures and ratios.

1. Ingestion through the typed views: queue rows of the example counters topic
   (``/ietf-interfaces:interfaces/interface/statistics``), each message carrying
   ``--per-message`` interfaces in its ``yangkey-instances`` header, inserted into the embedded
   queue table (parse view, message-level history/current/errors, instance history, instance
   state: every view fires), against a bare insert of the same instance rows into a MergeTree
   with the instance history's columns. Both are ``INSERT ... SELECT`` (the engine alone),
   ``--repeat`` times each, interleaved, into emptied tables; the medians are printed, wall
   clock and process CPU time (chdb runs in this process: its threads count), with the load
   average, since wall clock on a shared machine follows the load.
2. The instance feed in Python (producer or ingest side): notifications decoded and turned into
   the header, per instance.
3. The README's per-minute ``in-octets`` rate query over ``--rate-rows`` instance rows of the
   instance history (``--rate-rows 10000000`` for the issue's figure).

    python benchmarks/bench_typed.py [--messages 20000] [--per-message 10] [--nodes 100]
        [--repeat 5] [--parallel-views] [--feed-notifications 2000] [--rate-rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yangkey.catalog import load_catalog
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_catalog
from yangkey.clickhouse.identifiers import qualified, quote_literal
from yangkey.clickhouse.instances import CatalogFeeds
from yangkey.clickhouse.tables import topic_tables
from yangkey.messages import (
    HEADER_CONTENT_TYPE,
    HEADER_EVENT_TIME,
    HEADER_GENERATION,
    HEADER_INSTANCES,
    HEADER_SEQUENCE_NUMBER,
)
from yangkey.notifications import decode

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "netops-stats-if-interfaces-interface-statistics"
DB = "yangkey"  # the README's cookbook names it
IF = "/ietf-interfaces:interfaces/interface"
#: The headers of the synthetic messages, as a producer with --instance-feed writes them.
_HEADER_ARRAY = (
    "["
    + ", ".join(
        quote_literal(name)
        for name in (
            HEADER_CONTENT_TYPE,
            HEADER_EVENT_TIME,
            HEADER_SEQUENCE_NUMBER,
            HEADER_GENERATION,
            HEADER_INSTANCES,
        )
    )
    + "]"
)


def timed(label: str, function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    elapsed = time.perf_counter() - start
    print(f"  {label:<62} {elapsed:8.3f} s")
    return elapsed


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured(function: Callable[[], Any]) -> tuple[float, float]:
    """(wall, process CPU) seconds of ``function()``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    function()
    return time.perf_counter() - wall, cpu_seconds() - cpu


def load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def queue_rows(messages: int, per_message: int, nodes: int) -> str:
    """A SELECT from numbers() giving queue rows with the instance feed header: message m is
    node pe<m % nodes> reporting interfaces eth0..eth<per_message - 1>, 10 s after the last."""
    instance = (
        f"concat('{{\"@path\":\"{IF}[name=''eth', toString(i), "
        '\'\'\']/statistics","@op":"replace",\''
        ', \'"interface.name":"eth\', toString(i), \'","in-octets":"\', '
        'toString(number * 1000 + i), \'","out-octets":"\', toString(number * 500 + i), '
        '\'","in-errors":"0","discontinuity-time":"2026-01-01T00:00:00Z"}\')'
    )
    return f"""
        SELECT
            concat('{{"m":', toString(number), '}}') AS value,
            '{TOPIC}' AS _topic,
            concat('pe', toString(number % {nodes}), '\\n1043\\n',
                   arrayStringConcat(arrayMap(i -> concat('{IF}[name=''eth', toString(i),
                                                          ''']/statistics'),
                                              range({per_message})), ' | ')) AS _key,
            number AS _offset,
            number % 6 AS _partition,
            toDateTime(1790000000 + intDiv(number, 100) * 10) AS _timestamp,
            toDateTime64(1790000000 + intDiv(number, 100) * 10, 3) AS _timestamp_ms,
            {_HEADER_ARRAY} AS `_headers.name`,
            ['application/yang-data+json',
             toString(toDateTime64(now() - 86400 + intDiv(number, 100) * 10, 0, 'UTC')),
             toString(number), '1',
             concat('[', arrayStringConcat(arrayMap(i -> {instance}, range({per_message})), ','),
                    ']')] AS `_headers.value`,
            '' AS _raw_message,
            '' AS _error
        FROM numbers({messages})
    """


def notification(n: int, interfaces: int) -> bytes:
    """A periodic counters push-update of node pe<n % 100>."""
    stats = [
        {
            "name": f"eth{i}",
            "statistics": {
                "in-octets": str(n * 1000 + i),
                "out-octets": str(n * 500 + i),
                "in-errors": 0,
                "discontinuity-time": "2026-01-01T00:00:00Z",
            },
        }
        for i in range(interfaces)
    ]
    update = {
        "id": 1043,
        "datastore-contents": {"ietf-interfaces:interfaces": {"interface": stats}},
    }
    envelope = {
        "event-time": "2026-11-20T10:00:00Z",
        "hostname": f"pe{n % 100}",
        "sequence-number": n,
        "contents": {"ietf-yang-push:push-update": update},
    }
    return json.dumps({"ietf-yp-notification:envelope": envelope}).encode()


def cookbook(name: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", readme, re.DOTALL)
    return next(b for b in blocks if b.startswith(f"-- cookbook: {name}\n"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--per-message", type=int, default=10)
    # the state view aggregates each insert block: --nodes equal to --messages makes every
    # instance row a distinct instance, its worst case
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--parallel-views", action="store_true")
    parser.add_argument("--feed-notifications", type=int, default=2_000)
    parser.add_argument("--rate-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    catalog = load_catalog(ROOT / "examples" / "subscriptions.yaml")
    names = topic_tables(TOPIC, DB)
    ihist = qualified(DB, names.ihist)
    with tempfile.TemporaryDirectory() as path:
        conn = ChdbConnection(path)
        try:
            version = conn.query("SELECT version() AS v")[0]["v"]
            instances = args.messages * args.per_message
            print(
                f"chdb {version}, {args.messages:,} messages x {args.per_message} interfaces = "
                f"{instances:,} instance rows"
            )
            apply(conn, render_catalog(catalog, DdlOptions(database=DB, mode="embedded")), DB)
            if args.messages > 0:
                print("\n1. ingestion through the typed views (INSERT ... SELECT FROM numbers)")
                rows_sql = queue_rows(args.messages, args.per_message, args.nodes)
                staged = qualified(DB, "bench_queue_rows")
                conn.command(f"CREATE TABLE {staged} ENGINE = Memory AS {rows_sql}")
                stored = [names.ihist, names.istate, names.history, names.current, "errors"]
                same = qualified(DB, "bench_instance_rows")
                bare = qualified(DB, "bench_bare")
                # the views of one table run one after the other unless this is set
                settings = " SETTINGS parallel_view_processing = 1" if args.parallel_views else ""
                typed_runs: list[tuple[float, float]] = []
                bare_runs: list[tuple[float, float]] = []
                print(f"  load average before: {load()}")
                for run in range(args.repeat):
                    for table in stored:
                        conn.command(f"TRUNCATE TABLE {qualified(DB, table)}")
                    typed_runs.append(
                        measured(
                            lambda: conn.command(
                                f"INSERT INTO {qualified(DB, names.queue)} SELECT * FROM {staged}"
                                + settings
                            )
                        )
                    )
                    if run == 0:
                        counts = conn.query(
                            f"SELECT (SELECT count() FROM {ihist}) AS h, "
                            f"(SELECT count() FROM {qualified(DB, 'errors')}) AS e"
                        )[0]
                        assert counts["h"] == instances and counts["e"] == 0, counts
                        conn.command(
                            f"CREATE TABLE {same} ENGINE = Memory AS SELECT * FROM {ihist}"
                        )
                        conn.command(
                            f"CREATE TABLE {bare} AS {ihist} ENGINE = MergeTree "
                            "ORDER BY (node, instance_path, event_time)"
                        )
                    conn.command(f"TRUNCATE TABLE {bare}")
                    bare_runs.append(
                        measured(lambda: conn.command(f"INSERT INTO {bare} SELECT * FROM {same}"))
                    )
                t_pipe, c_pipe = (statistics.median(r[i] for r in typed_runs) for i in (0, 1))
                t_bare, c_bare = (statistics.median(r[i] for r in bare_runs) for i in (0, 1))
                print(f"  load average after:  {load()}  (medians of {args.repeat} runs)")
                print(
                    "  queue -> parse -> message tables + instance history + state: "
                    f"{t_pipe:.3f} s wall, {c_pipe:.3f} s CPU"
                )
                print(
                    f"  the same instance rows into a bare MergeTree: {t_bare:.3f} s wall, "
                    f"{c_bare:.3f} s CPU"
                )
                print(
                    f"  typed views {instances / t_pipe:12,.0f} instance rows/s wall, "
                    f"{instances / c_pipe:,.0f} per CPU second "
                    f"({args.messages / t_pipe:,.0f} messages/s)"
                )
                print(
                    f"  bare insert {instances / t_bare:12,.0f} rows/s wall, "
                    f"{instances / c_bare:,.0f} per CPU second "
                    f"(ratio typed/bare: {t_pipe / t_bare:.1f}x wall, {c_pipe / c_bare:.1f}x CPU)"
                )
                live = qualified(DB, names.instances)
                read: list[dict[str, Any]] = []
                t_read, c_read = measured(
                    lambda: read.extend(
                        conn.query(f"SELECT count() AS n FROM {live} WHERE NOT ignore(*)")
                    )
                )
                print(
                    f"  the live instances (__instances view, {read[0]['n']:,} instances): "
                    f"{t_read:.3f} s wall, {c_read:.3f} s CPU"
                )
                for table in (staged, same, bare):
                    conn.command(f"DROP TABLE {table}")

            if args.feed_notifications > 0:
                print(
                    f"\n2. instance feed in Python, {args.feed_notifications:,} notifications "
                    f"x {args.per_message} interfaces"
                )
                feeds = CatalogFeeds(catalog)
                feed = feeds.feed(TOPIC)
                assert feed is not None
                raws = [notification(n, args.per_message) for n in range(args.feed_notifications)]
                notes = [decode(raw, "bench", feeds.ns_modules) for raw in raws]
                t_feed = timed(
                    "feed from decoded notifications (producer side)",
                    lambda: [feed.header(note) for note in notes],
                )
                t_both = timed(
                    "decode + feed (ingest side, header missing)",
                    lambda: [feeds.header(TOPIC, raw, "bench") for raw in raws],
                )
                n_inst = args.feed_notifications * args.per_message
                print(f"  producer side {n_inst / t_feed:12,.0f} instances/s")
                print(f"  ingest side   {n_inst / t_both:12,.0f} instances/s")

            if args.rate_rows > 0:
                print(
                    f"\n3. per-minute in-octets rate (README cookbook) over {args.rate_rows:,} "
                    "instance rows"
                )
                conn.command(f"TRUNCATE TABLE {ihist}")
                interfaces = 1000
                conn.command(
                    f"INSERT INTO {ihist} (node, subscription_id, instance_path, operation, "
                    "leaves, generation, event_time, sequence_number, kafka_partition, "
                    "kafka_offset, version, "
                    "`interface.name`, `in-octets`, `discontinuity-time`) "
                    f"SELECT concat('pe', toString(number % {interfaces} % 10)), 1043, "
                    f"concat('{IF}[name=''eth', toString(intDiv(number % {interfaces}, 10)), "
                    "''']/statistics'), 'replace', ['in-octets'], 1, "
                    f"toDateTime64(now() - 86400, 9, 'UTC') + toIntervalSecond(intDiv(number, "
                    f"{interfaces}) * 10), intDiv(number, {interfaces}), 0, number, number, "
                    f"concat('eth', toString(intDiv(number % {interfaces}, 10))), "
                    f"intDiv(number, {interfaces}) * 12345, toDateTime64('2026-01-01 00:00:00', 9, "
                    f"'UTC') FROM numbers({args.rate_rows})"
                )
                # counted in the engine: fetching every result row into Python is not the query
                query = f"SELECT count() AS n FROM ({cookbook('in-octets rate')})"
                result: list[dict[str, Any]] = []
                t_rate = timed(
                    "rate query (window lag per instance, sum per minute)",
                    lambda: result.extend(conn.query(query)),
                )
                print(
                    f"  {result[0]['n']:,} (node, interface, minute) rows; "
                    f"{args.rate_rows / t_rate:,.0f} instance rows/s"
                )
        finally:
            conn.close()


if __name__ == "__main__":
    main()
