"""``yangkey report``: an HTML page of what the ClickHouse tables hold."""

from __future__ import annotations

from pathlib import Path

import click

from yangkey.cli.options import (
    DATABASE,
    DATABASE_FROM_URL,
    OUTPUT,
    subscriptions_options,
    target_options,
)
from yangkey.cli.reporting import reports_errors

EPILOG = """\b
Examples:
  yangkey report --embedded ch -o report.html
  yangkey report --embedded ch --subscriptions subscriptions.yaml   # counts empty partitions
  yangkey report --clickhouse http://yangkey@localhost:8123 -o /tmp/telemetry.html
"""


@click.command("report", epilog=EPILOG)
@target_options
@DATABASE.but(note=DATABASE_FROM_URL)
@subscriptions_options(
    required=False,
    note="Optional: its partition counts make empty partitions count in the skew.",
)
@OUTPUT.but(
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("yangkey-report.html"),
    note="the HTML page.",
)
@click.option("--title", default="yangkey report", show_default=True, help="The page's title.")
@reports_errors
def report(
    *,
    clickhouse: str | None,
    embedded: str | None,
    database: str | None,
    subscriptions: str | None,
    yang_dirs: tuple[str, ...],
    strict: bool,
    output: Path,
    title: str,
) -> None:
    """Write one self-contained HTML page about the data in the ClickHouse tables.

    Records per topic and partition (skew as largest / mean per topic, and a histogram of
    partition loads), distinct message keys per topic, messages per node and subscription,
    dead letters and unstored messages by kind and reason, throughput (by Kafka timestamp and
    by insert time) and latency percentiles (device event time -> Kafka -> ClickHouse). The
    charts are drawn by plotly.js, inlined: the page opens without a network.
    """
    from yangkey.clickhouse.targets import connected  # noqa: PLC0415
    from yangkey.report.runs import tables_report, write  # noqa: PLC0415

    catalog = None
    if subscriptions is not None:
        from yangkey.cli.reporting import load_catalog  # noqa: PLC0415

        catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    with connected(clickhouse, embedded, database) as (conn, db):
        data = tables_report(conn, db, title=title, catalog=catalog)
    click.echo(f"wrote {write(data, output)}", err=True)
