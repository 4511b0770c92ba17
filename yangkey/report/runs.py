"""``--report PATH`` of ``produce``, ``ingest`` and ``demo``: a run's own figures, plus the
tables where the run has them.

* ``produce`` has no tables: its summary (records, messages per topic, rejects per kind,
  seconds) and, per derived topic it wrote to, the messages per partition that Kafka's
  offsets give (the whole topic, earlier runs included; compaction may have removed some);
* ``ingest`` and ``demo``: the tables it filled (:func:`yangkey.report.data.from_tables`)
  with the run's figures on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.errors import ConfigError
from yangkey.report.data import Report, from_tables

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.apply import Connection

__all__ = ["kafka_partitions", "run_figures", "tables_report", "write"]


def write(report: Report, path: Path) -> Path:
    """Render ``report`` into ``path`` (its directory created)."""
    from yangkey.report.page import render  # noqa: PLC0415 - plotly on demand

    text = render(report)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report: {exc.strerror}", source=str(path)) from None
    return path


def run_figures(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The figures of a producer run (``Summary.to_dict()``)."""
    return [
        ("records read", f"{summary['records']:,}"),
        ("messages produced", f"{summary['messages']:,}"),
        ("rejected (dead letter)", f"{summary['rejected']:,}"),
        ("producer seconds", f"{summary['seconds']:.1f}"),
        ("records per second", f"{summary['records_per_second']:,.0f}"),
    ]


def kafka_partitions(
    bootstrap: str, topics: list[str], overrides: Mapping[str, object] | None = None
) -> list[tuple[str, int, int]]:
    """(topic, partition, messages) from each partition's offsets (high minus low)."""
    from confluent_kafka import Consumer, TopicPartition  # noqa: PLC0415

    from yangkey.kafka.config import consumer_config  # noqa: PLC0415

    consumer = Consumer(consumer_config(bootstrap, "yangkey-report", overrides))
    try:
        metadata = consumer.list_topics(timeout=15)
        out = []
        for topic in sorted(topics):
            found = metadata.topics.get(topic)
            if found is None:
                continue
            for partition in sorted(found.partitions):
                low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=15
                )
                out.append((topic, partition, max(0, high - low)))
        return out
    finally:
        consumer.close()


def produce_report(
    summary: Mapping[str, Any],
    *,
    bootstrap: str | None,
    overrides: Mapping[str, object] | None = None,
) -> Report:
    """A producer run's report: its summary, the partition spread from Kafka's offsets."""
    report = Report(
        title=f"yangkey produce: run {summary['run_id']}",
        source=f"producer run {summary['run_id']}" + (f", Kafka {bootstrap}" if bootstrap else ""),
    )
    report.figures = run_figures(summary)
    report.keys = [(topic, count, 0) for topic, count in summary["produced"].items()]
    report.dead_letters = [
        (kind, summary["dead_letter_topic"], count)
        for kind, count in summary["rejected_by_kind"].items()
    ]
    report.notes.append(
        "Messages per topic and rejects per kind: this run's summary. It has no message keys, "
        "nodes or latency: run `yangkey report` on the tables that ingest the topics."
    )
    if bootstrap and summary["produced"] and not summary.get("dry_run"):
        report.partitions = kafka_partitions(bootstrap, list(summary["produced"]), overrides)
        report.notes.append(
            "Messages per partition: Kafka's offsets of each topic (high minus low watermark), "
            "the whole topic, earlier runs included."
        )
    return report


def tables_report(
    conn: Connection,
    database: str,
    *,
    title: str,
    catalog: Catalog | None = None,
    figures: list[tuple[str, str]] | None = None,
) -> Report:
    """The tables' report, the run's ``figures`` first; ``catalog`` gives partition counts."""
    report = Report(title=title, source=f"{conn.description}, database {database}")
    report.figures = list(figures or [])
    if catalog is not None:
        report.topic_partitions = {spec.name: spec.partitions for spec in catalog.topics}
    return from_tables(conn, database, report)


def ingest_figures(result: Any) -> list[tuple[str, str]]:
    """The figures of an ingest run (``yangkey.clickhouse.ingest.IngestResult``)."""
    return [
        ("messages ingested", f"{result.total:,}"),
        ("to the errors table", f"{result.total_errors:,}"),
        ("ingest seconds", f"{result.seconds:.1f}"),
        ("ingested per second", f"{result.rate:,.0f}"),
    ]
