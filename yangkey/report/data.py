"""What a report says, and where it comes from.

From the ClickHouse tables (:func:`from_tables`; the ``history`` and ``errors`` tables of the
DDL, over every topic): messages per topic and Kafka partition, distinct message keys per
topic, messages per node and subscription, the dead letters and other unstored messages by
kind and reason, throughput over the run (messages per second by the time Kafka stamped them
and by the time ClickHouse stored them), and latency percentiles between the device's event
time, the Kafka timestamp and the insert.

From a run (:mod:`yangkey.report.runs`): the run's own figures (records read, messages
produced, rejects per kind, seconds), which is all a producer run without tables can show,
plus the partition spread Kafka's offsets give.

Every figure says where it comes from (:attr:`Report.notes`), so a report of a whole table and
one of a run are not confused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.tables import ERRORS_TABLE, HISTORY_MERGE_TABLE

if TYPE_CHECKING:
    from yangkey.clickhouse.connection import Connection

__all__ = ["Latency", "Report", "Skew", "from_tables"]

#: At most this many points on the throughput chart.
THROUGHPUT_POINTS = 200


@dataclass(frozen=True)
class Skew:
    """How evenly a topic's messages spread over its partitions."""

    topic: str
    partitions: int
    messages: int
    largest: int
    mean: float

    @property
    def ratio(self) -> float:
        """Largest partition over the mean partition: 1.0 is an even spread."""
        return self.largest / self.mean if self.mean else 0.0


@dataclass(frozen=True)
class Latency:
    """Percentiles of one stage's delay, in seconds."""

    stage: str
    messages: int
    p50: float
    p90: float
    p99: float
    worst: float


@dataclass
class Report:
    """Everything one HTML page shows; each list may be empty (that section says so)."""

    title: str
    source: str
    """Where the data comes from (no credentials)."""
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    figures: list[tuple[str, str]] = field(default_factory=list)
    """(label, value) shown at the top."""
    partitions: list[tuple[str, int, int]] = field(default_factory=list)
    """(topic, partition, messages)."""
    topic_partitions: dict[str, int] = field(default_factory=dict)
    """Topic -> its partition count, when known (a partition without messages counts as 0)."""
    keys: list[tuple[str, int, int]] = field(default_factory=list)
    """(topic, messages, distinct message keys)."""
    nodes: list[tuple[str, int, int]] = field(default_factory=list)
    """(node, subscription id, messages)."""
    dead_letters: list[tuple[str, str, int]] = field(default_factory=list)
    """(kind, topic, messages): rejected notifications and messages the tables did not store."""
    reasons: list[tuple[str, str, int]] = field(default_factory=list)
    """(kind, reason, messages), the most frequent first."""
    throughput: list[tuple[str, datetime, float]] = field(default_factory=list)
    """(stage, time, messages per second)."""
    latency: list[Latency] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def skew(self) -> list[Skew]:
        """Per topic: partitions, messages, the largest partition and the mean (over every
        partition the topic has, when known; else over those with messages)."""
        counts: dict[str, list[int]] = {}
        for topic, _, messages in self.partitions:
            counts.setdefault(topic, []).append(messages)
        out = []
        for topic, values in sorted(counts.items()):
            partitions = max(self.topic_partitions.get(topic, 0), len(values))
            total = sum(values)
            out.append(Skew(topic, partitions, total, max(values), total / partitions))
        return out

    def partition_loads(self) -> list[float]:
        """Each partition's messages over its topic's mean (empty partitions included)."""
        means = {s.topic: s.mean for s in self.skew()}
        seen: dict[str, int] = {}
        loads = []
        for topic, _, messages in self.partitions:
            seen[topic] = seen.get(topic, 0) + 1
            loads.append(messages / means[topic] if means[topic] else 0.0)
        for topic, known in self.topic_partitions.items():
            loads += [0.0] * max(0, known - seen.get(topic, known))
        return loads


def _seconds(value: Any) -> float:
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _stamp(value: Any) -> datetime:
    text = str(value).replace(" ", "T")
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _throughput(
    conn: Connection, history: str, column: str, stage: str, minimum_ms: int
) -> list[tuple[str, datetime, float]]:
    span = conn.query(
        f"SELECT dateDiff('millisecond', min({column}), max({column})) AS span "
        f"FROM {history} WHERE {column} IS NOT NULL"
    )
    if not span or span[0]["span"] is None:
        return []
    bucket = max(minimum_ms, math.ceil((int(span[0]["span"]) + 1) / THROUGHPUT_POINTS))
    if bucket >= 1000:
        bucket = math.ceil(bucket / 1000) * 1000  # whole seconds read better
    rows = conn.query(
        f"SELECT toStartOfInterval(toDateTime64({column}, 3), "
        f"INTERVAL {bucket} MILLISECOND) AS at, count() AS messages "
        f"FROM {history} WHERE {column} IS NOT NULL GROUP BY at ORDER BY at"
    )
    return [(stage, _stamp(r["at"]), r["messages"] * 1000 / bucket) for r in rows]


_STAGES = (
    ("device to Kafka", "event_time", "kafka_timestamp"),
    ("Kafka to ClickHouse", "kafka_timestamp", "ingested_at"),
    ("device to ClickHouse (end to end)", "event_time", "ingested_at"),
)


def _latency(conn: Connection, history: str) -> list[Latency]:
    out = []
    for stage, start, end in _STAGES:
        rows = conn.query(
            "SELECT count() AS n, quantilesExact(0.5, 0.9, 0.99)(d) AS q, max(d) AS worst "
            f"FROM (SELECT dateDiff('millisecond', toDateTime64({start}, 3), "
            f"toDateTime64({end}, 3)) / 1000 AS d FROM {history} "
            f"WHERE {start} IS NOT NULL AND {end} IS NOT NULL)"
        )
        if not rows or not rows[0]["n"]:
            continue
        row = rows[0]
        p50, p90, p99 = (_seconds(v) for v in row["q"])
        out.append(Latency(stage, int(row["n"]), p50, p90, p99, _seconds(row["worst"])))
    return out


def from_tables(conn: Connection, database: str, report: Report) -> Report:
    """Fill ``report`` from the tables of ``database`` (every message stored so far)."""
    history = qualified(database, HISTORY_MERGE_TABLE)
    errors = qualified(database, ERRORS_TABLE)
    report.partitions = [
        (r["topic"], int(r["partition"]), int(r["messages"]))
        for r in conn.query(
            f"SELECT kafka_topic AS topic, kafka_partition AS partition, count() AS messages "
            f"FROM {history} GROUP BY topic, partition ORDER BY topic, partition"
        )
    ]
    report.keys = [
        (r["topic"], int(r["messages"]), int(r["keys"]))
        for r in conn.query(
            f"SELECT kafka_topic AS topic, count() AS messages, uniqExact(message_key) AS keys "
            f"FROM {history} GROUP BY topic ORDER BY topic"
        )
    ]
    report.nodes = [
        (r["node"], int(r["subscription_id"]), int(r["messages"]))
        for r in conn.query(
            f"SELECT node, subscription_id, count() AS messages FROM {history} "
            "GROUP BY node, subscription_id ORDER BY node, subscription_id"
        )
    ]
    report.dead_letters = [
        (r["kind"], r["topic"], int(r["messages"]))
        for r in conn.query(
            f"SELECT error_kind AS kind, kafka_topic AS topic, count() AS messages "
            f"FROM {errors} GROUP BY kind, topic ORDER BY messages DESC, kind, topic"
        )
    ]
    report.reasons = [
        (r["kind"], r["reason"], int(r["messages"]))
        for r in conn.query(
            f"SELECT error_kind AS kind, error AS reason, count() AS messages FROM {errors} "
            "GROUP BY kind, reason ORDER BY messages DESC, kind, reason LIMIT 20"
        )
    ]
    # ingested_at is DateTime (whole seconds): its buckets are at least a second
    report.throughput = _throughput(conn, history, "kafka_timestamp", "produced (Kafka)", 10)
    report.throughput += _throughput(conn, history, "ingested_at", "stored (ClickHouse)", 1000)
    report.latency = _latency(conn, history)
    stored = sum(m for _, m, _ in report.keys)
    rejected = sum(m for kind, _, m in report.dead_letters if kind.startswith("rejected"))
    report.figures += [
        ("messages stored", f"{stored:,}"),
        ("topics", f"{len(report.keys):,}"),
        ("message keys", f"{sum(k for _, _, k in report.keys):,}"),
        ("nodes", f"{len({n for n, _, _ in report.nodes}):,}"),
        ("dead letters", f"{rejected:,}"),
    ]
    report.notes.append(
        f"Partitions, keys, nodes, errors, throughput and latency: the tables of database "
        f"{database} ({conn.description}), every message they hold."
    )
    if any(stage.startswith("device") for stage in (lat.stage for lat in report.latency)):
        report.notes.append(
            "Latency from the device counts from the notification's event time (the device's "
            "clock); the insert time is whole seconds."
        )
    return report
