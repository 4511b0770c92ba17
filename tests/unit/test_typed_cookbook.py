"""The README cookbook queries, exactly as written there, on chdb with demo-like data.

The interface state comes from the demo's own data set (:func:`yangkey.demo.sample.generate`), whose
expected outcome (last oper-status per interface, deleted interfaces) is computed independently
of the pipeline; the counters are a series with a wrap and a counter reset whose rates the test
computes in Python.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typed_helpers import Pipe, envelope

from yangkey.catalog import Catalog, load_catalog
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.demo.sample import generate

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
U64 = 2**64


def cookbook(name: str) -> str:
    """The SQL block of the README headed ``-- cookbook: <name>``."""
    blocks = re.findall(r"```sql\n(.*?)```", README, re.DOTALL)
    found = [b for b in blocks if b.startswith(f"-- cookbook: {name}\n")]
    assert len(found) == 1, f"README has no single cookbook block {name!r}"
    return found[0]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT / "examples" / "subscriptions.yaml")


@pytest.fixture(scope="module")
def demo(conn: ChdbConnection, catalog: Catalog) -> tuple[Pipe, Any]:
    """The README's database ``yangkey``, with the demo data set, every record read twice
    (at-least-once ingest), and the counter series of :data:`SERIES`."""
    pipe = Pipe(conn, catalog, db="yangkey")
    data = generate(nodes=3, interfaces=5, rounds=6, seed=11)
    pipe.send_all([r for r in data.records if isinstance(pipe.builder.build(r, "demo"), list)])
    replays = list(pipe.replays)
    for topic in {row.topic for row in replays}:
        insert_rows(conn, pipe.db, topic, [row for row in replays if row.topic == topic])
    pipe.send_all([
        envelope(
            {"ietf-interfaces:interfaces": {"interface": [{"name": name, "statistics": {
                "in-octets": str(octets), "discontinuity-time": discontinuity}}]}},
            seq=0, time=when.isoformat(), sub=1043, host=node,
        )
        for node, name, when, octets, discontinuity in SERIES
    ])
    return pipe, data.expected


# Counters: 15 s samples over three minutes (recent: the statistics topic keeps 2 days).
START = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)
BOOT = "2026-01-01T00:00:00Z"
REBOOT = "2026-11-20T00:00:00Z"


def _series() -> list[tuple[str, str, datetime, int, str]]:
    out: list[tuple[str, str, datetime, int, str]] = []
    for i in range(12):
        when = START + timedelta(seconds=15 * i)
        # eth0: 1000 bytes/s, reset to a small value (new discontinuity time) at sample 6
        if i < 6:
            out.append(("pe1.nyc", "eth0", when, 5_000 + 15_000 * i, BOOT))
        else:
            out.append(("pe1.nyc", "eth0", when, 100 + 15_000 * (i - 6), REBOOT))
        # eth1: 2^20 bytes per sample, wrapping through 2^64 at sample 5
        out.append(("pe1.nyc", "eth1", when, (U64 - 3 * 2**20 + 2**20 * i) % U64, BOOT))
    return out


SERIES = _series()


def expected_rates() -> dict[tuple[str, str, datetime], tuple[int, int]]:
    """(node, interface, minute) -> (octets, bits per second), from the series directly."""
    sums: dict[tuple[str, str, datetime], list[float]] = {}
    last: dict[tuple[str, str], tuple[datetime, int, str]] = {}
    for node, name, when, octets, discontinuity in SERIES:
        previous = last.get((node, name))
        last[(node, name)] = (when, octets, discontinuity)
        if previous is None or previous[2] != discontinuity:
            continue
        minute = when.replace(second=0)
        total = sums.setdefault((node, name, minute), [0, 0.0])
        total[0] += (octets - previous[1]) % U64
        total[1] += (when - previous[0]).total_seconds()
    return {k: (int(v[0]), round(v[0] * 8 / v[1])) for k, v in sums.items()}


def test_in_octets_rate_handles_wrap_and_discontinuity(
    conn: ChdbConnection, demo: tuple[Pipe, Any]
) -> None:
    rows = conn.query(cookbook("in-octets rate"))
    got = {
        (r["node"], r["interface"], datetime.fromisoformat(r["minute"]).replace(tzinfo=UTC)):
            (int(r["octets"]), int(r["bits_per_second"]))
        for r in rows
        if r["node"] == "pe1.nyc" and r["interface"] in ("eth0", "eth1")
    }
    want = expected_rates()
    assert got == want
    # the wrap minute still shows the steady 2^20 bytes per 15 s, not a huge or negative value
    assert {bps for (_, name, _), (_, bps) in want.items() if name == "eth1"} == {
        round(2**20 * 8 / 15)
    }


def test_oper_status_down_now(conn: ChdbConnection, demo: tuple[Pipe, Any]) -> None:
    _, expected = demo
    rows = conn.query(cookbook("down now"))
    got = sorted((r["node"], r["name"]) for r in rows)
    want = sorted(k for k, status in expected.interface_status.items() if status == "down")
    assert want and got == want
    assert not set(got) & expected.deleted


def test_history_of_one_instance(conn: ChdbConnection, demo: tuple[Pipe, Any]) -> None:
    _, expected = demo
    sql = cookbook("instance history")
    changed = [k for k in expected.interface_status if k[0] == "pe1.nyc"]
    node, name = changed[0]
    sql = sql.replace("'pe1.nyc'", f"'{node}'").replace("name=''eth0''", f"name=''{name}''")
    rows = conn.query(sql)
    assert rows, sql
    # every record was inserted twice: LIMIT 1 BY version shows each change once
    times = [r["event_time"] for r in rows]
    assert times == sorted(set(times))
    assert rows[0]["operation"] == "replace"  # the sync-on-start push-update
    last_status = [r["oper-status"] for r in rows if r["oper-status"] is not None][-1]
    assert last_status == expected.interface_status[(node, name)]
