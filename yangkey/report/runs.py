"""``--report PATH`` of ``produce``, ``ingest`` and ``demo``: a run's own figures, plus the
tables where the run has them.

* ``produce`` has no tables: its summary (records, messages per topic, rejects per kind,
  seconds);
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
    from yangkey.clickhouse.connection import Connection

__all__ = [
    "ingest_figures",
    "produce_report",
    "run_figures",
    "tables_report",
    "write",
    "write_ingest_report",
]


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


def produce_report(summary: Mapping[str, Any], *, bootstrap: str | None) -> Report:
    """A producer run's report: what its summary says."""
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
    # Kafka's offsets would overcount a partition: transaction markers and the records of
    # aborted attempts take offsets too. The tables count what was committed.
    report.notes.append(
        "Messages per topic and rejects per kind: this run's summary. Partitions, message "
        "keys, nodes and latency come from the tables: `yangkey report` (or `ingest --report`) "
        "once the topics are ingested."
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


def write_ingest_report(
    path: Path, embedded: str, database: str, catalog: Catalog, result: Any
) -> Path:
    """``ingest --report``: the tables ingest filled (embedded in ``embedded``), with the run's
    figures on top; returns the file written."""
    from yangkey.clickhouse.connection import open_embedded  # noqa: PLC0415

    conn = open_embedded(embedded)
    try:
        data = tables_report(
            conn,
            database,
            title="yangkey ingest",
            catalog=catalog,
            figures=ingest_figures(result),
        )
    finally:
        conn.close()
    return write(data, path)
