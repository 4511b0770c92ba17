"""``yangkey dashboards``: write the Grafana dashboards of a subscriptions file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from yangkey.cli.options import DATABASE, OUTPUT_DIR, subscriptions_option
from yangkey.cli.reporting import load_catalog, reports_errors
from yangkey.errors import ConfigError

EPILOG = """\b
Examples:
  yangkey dashboards --subscriptions subscriptions.yaml -o dashboards/
  # the compose stack's Grafana loads deploy/grafana/dashboards (the example subscriptions)
  yangkey dashboards -s examples/subscriptions.yaml -o deploy/grafana/dashboards
"""


def dashboard_text(model: dict[str, object]) -> str:
    """The JSON file of a dashboard (stable: sorted keys, two-space indent, final newline)."""
    return json.dumps(model, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_dashboards(
    subscriptions: str,
    yang_dirs: tuple[str, ...],
    database: str,
    out: Path,
    *,
    strict: bool = False,
) -> list[Path]:
    """Write every dashboard of ``subscriptions`` into ``out`` (``overview.json`` and
    ``<topic>.json``)."""
    from yangkey.dashboards.grafana import catalog_dashboards  # noqa: PLC0415

    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    dashboards = catalog_dashboards(catalog, database)
    written: list[Path] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for dashboard in dashboards:
            path = out / dashboard.file_name
            path.write_text(dashboard_text(dashboard.model), encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror}", source=str(out)) from None
    return written


@click.command("dashboards", epilog=EPILOG)
@subscriptions_option
@DATABASE.but(default="yangkey", show_default=True)
@OUTPUT_DIR.but(
    default=Path("dashboards"),
    show_default=True,
    note="the dashboard JSON files (one per topic, plus the overview).",
)
@reports_errors
def dashboards(
    *,
    subscriptions: str,
    yang_dirs: tuple[str, ...],
    strict: bool,
    database: str,
    output_dir: Path,
) -> None:
    """Write Grafana dashboards for the topics of a subscriptions file.

    One overview (messages per topic, node and subscription, the partition spread, the dead
    letters and their reasons) and one dashboard per derived topic over its typed tables:
    counters (yang:counter32/64 and types derived from them) as per-second rates per
    instance, gauges and decimal64 leaves over time, enumerations as state timelines, the
    current state as a table, messages per node. Variables: the ClickHouse data source, node
    and instance. For Grafana's ClickHouse plugin (grafana-clickhouse-datasource 4.20+);
    point a dashboard provider at the directory (deploy/grafana/ in this repository).
    """
    for path in write_dashboards(
        subscriptions, tuple(yang_dirs), database, output_dir, strict=strict
    ):
        click.echo(f"wrote {path}", err=True)
