"""Grafana dashboard JSON (the classic dashboard model, schemaVersion 41) for the panels of
:mod:`yangkey.dashboards.queries`.

One overview dashboard (every topic, the dead letters) and one dashboard per derived topic
that has typed columns. Every panel reads the data source chosen by the dashboard's
``datasource`` variable (any ``grafana-clickhouse-datasource``; the compose stack provisions
one); the ``node`` and ``instance`` variables filter the panels (multi-value, *All* by
default). Output is deterministic: same catalog, same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yangkey.catalog import Catalog
from yangkey.clickhouse.columns import TypedTopic
from yangkey.clickhouse.identifiers import qualified
from yangkey.clickhouse.tables import HISTORY_MERGE_TABLE, topic_tables
from yangkey.dashboards import queries
from yangkey.dashboards.charts import chart_topic, derivation_chains
from yangkey.dashboards.queries import Panel

__all__ = ["PLUGIN", "PLUGIN_VERSION", "Dashboard", "catalog_dashboards"]

PLUGIN = "grafana-clickhouse-datasource"
#: The plugin release these dashboards are written for (docker-compose.yml installs it).
PLUGIN_VERSION = "4.20.0"
SCHEMA_VERSION = 41
TAG = "yangkey"
DATASOURCE = {"type": PLUGIN, "uid": "${datasource}"}
GRID_WIDTH = 24


@dataclass(frozen=True)
class Dashboard:
    """One dashboard: its file name, the panels (for tests) and the JSON model."""

    uid: str
    title: str
    name: str
    """The file name without ``.json``: ``overview``, or the topic."""
    rows: tuple[tuple[str, tuple[Panel, ...]], ...]
    model: dict[str, Any]

    @property
    def file_name(self) -> str:
        return f"{self.name}.json"

    @property
    def panels(self) -> list[Panel]:
        return [panel for _, panels in self.rows for panel in panels]


def _uid(name: str) -> str:
    # Grafana's uid: at most 40 characters of [a-zA-Z0-9_-]; topic names are longer.
    return f"yangkey-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def _datasource_variable() -> dict[str, Any]:
    return {
        "type": "datasource",
        "name": "datasource",
        "label": "ClickHouse",
        "query": PLUGIN,
        "current": {},
        "hide": 0,
        "includeAll": False,
        "multi": False,
        "options": [],
        "refresh": 1,
        "regex": "",
    }


def _query_variable(name: str, label: str, sql: str) -> dict[str, Any]:
    return {
        "type": "query",
        "name": name,
        "label": label,
        "datasource": DATASOURCE,
        "definition": sql,
        "query": {"refId": f"{name}-variable", "queryType": "sql", "rawSql": sql},
        "current": {"text": ["All"], "value": ["$__all"]},
        "hide": 0,
        "includeAll": True,
        "multi": True,
        "options": [],
        "refresh": 1,
        "regex": "",
        "sort": 0,
    }


def _field_config(panel: Panel) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    if panel.unit:
        defaults["unit"] = panel.unit
    if panel.kind == "timeseries" and panel.labels:
        # one series per label value, named by it (not "messages {node=...}")
        defaults["displayName"] = "${__field.labels." + panel.labels[0] + "}"
    if panel.kind == "state-timeline":
        defaults["displayName"] = "${__field.labels." + panel.partition_by + "}"
        defaults["color"] = {"mode": "palette-classic"}
    return {"defaults": defaults, "overrides": []}


def _options(panel: Panel) -> dict[str, Any]:
    if panel.kind == "timeseries":
        return {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        }
    if panel.kind == "state-timeline":
        return {
            "showValue": "auto",
            "mergeValues": True,
            "rowHeight": 0.8,
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "single", "sort": "none"},
        }
    if panel.kind == "barchart":
        return {
            "orientation": "horizontal",
            "xField": panel.columns[0],
            "showValue": "auto",
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": False},
            "tooltip": {"mode": "single", "sort": "none"},
        }
    return {"showHeader": True, "cellHeight": "sm", "footer": {"show": False, "reducer": []}}


def _transformations(panel: Panel) -> list[dict[str, Any]]:
    if panel.partition_by:
        # one timeline per instance: the plugin returns one long table
        return [
            {
                "id": "partitionByValues",
                "options": {
                    "fields": [panel.partition_by],
                    "keepFields": False,
                    "naming": {"asLabels": True},
                },
            }
        ]
    return []


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "targets": [
            {
                "refId": "A",
                "datasource": DATASOURCE,
                "editorType": "sql",
                "format": 0 if panel.time_series else 1,
                "queryType": "timeseries" if panel.time_series else "table",
                "pluginVersion": PLUGIN_VERSION,
                "rawSql": panel.sql,
            }
        ],
        "fieldConfig": _field_config(panel),
        "options": _options(panel),
        "transformations": _transformations(panel),
    }


def _layout(rows: Sequence[tuple[str, Sequence[Panel]]]) -> list[dict[str, Any]]:
    """Row panels, each followed by its panels packed left to right."""
    out: list[dict[str, Any]] = []
    y = 0
    next_id = 1
    for title, panels in rows:
        out.append(
            {
                "id": next_id,
                "type": "row",
                "title": title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": GRID_WIDTH, "x": 0, "y": y},
                "panels": [],
            }
        )
        next_id += 1
        y += 1
        x = 0
        line_height = 0
        for panel in panels:
            if x + panel.width > GRID_WIDTH:
                x, y, line_height = 0, y + line_height, 0
            out.append(_panel_json(panel, next_id, x, y))
            next_id += 1
            x += panel.width
            line_height = max(line_height, panel.height)
        y += line_height
    return out


def _dashboard(
    name: str,
    uid: str,
    title: str,
    description: str,
    rows: Sequence[tuple[str, Sequence[Panel]]],
    variables: list[dict[str, Any]],
) -> Dashboard:
    model: dict[str, Any] = {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": [TAG],
        "timezone": "utc",
        "editable": True,
        "graphTooltip": 1,
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "refresh": "1m",
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "timepicker": {},
        "templating": {"list": [_datasource_variable(), *variables]},
        "annotations": {"list": []},
        "links": [
            {
                "title": "yangkey",
                "type": "dashboards",
                "tags": [TAG],
                "asDropdown": True,
                "icon": "external link",
                "tooltip": "Every yangkey dashboard",
                "url": "",
                "includeVars": True,
                "keepTime": True,
                "targetBlank": False,
            }
        ],
        "panels": _layout(rows),
    }
    frozen = tuple((name, tuple(panels)) for name, panels in rows)
    return Dashboard(uid=uid, title=title, name=name, rows=frozen, model=model)


def overview_dashboard(database: str, dead_letter_topic: str) -> Dashboard:
    history = qualified(database, HISTORY_MERGE_TABLE)
    panels = queries.overview(database, dead_letter_topic)
    return _dashboard(
        "overview",
        _uid(f"overview {database}"),
        "yangkey: overview",
        "Every derived topic: messages per topic, node and subscription, the spread over "
        "partitions, and the notifications the producer rejected.",
        [("Messages", panels[:4]), ("Dead letters", panels[4:])],
        [_query_variable("node", "Node", queries.node_variable_query(history))],
    )


def topic_dashboard(
    typed: TypedTopic, chains: dict[str, frozenset[str]], database: str
) -> Dashboard:
    charted = chart_topic(typed, chains)
    ihist = qualified(database, topic_tables(typed.topic, database).ihist)
    rows = queries.topic_panels(typed, charted, database)
    return _dashboard(
        typed.topic,
        _uid(f"{database} {typed.topic}"),
        f"yangkey: {typed.topic}",
        f"Topic {typed.topic} (target {typed.target}): its typed instance tables.",
        rows,
        [
            _query_variable("node", "Node", queries.node_variable_query(ihist)),
            _query_variable(
                "instance", "Instance", queries.instance_variable_query(typed, database)
            ),
        ],
    )


def catalog_dashboards(catalog: Catalog, database: str = "yangkey") -> list[Dashboard]:
    """The overview and one dashboard per typed topic of ``catalog`` (topic order)."""
    from yangkey.clickhouse.columns import typed_topics  # noqa: PLC0415
    from yangkey.instances import catalog_modules  # noqa: PLC0415

    typed = typed_topics(catalog)
    chains = derivation_chains(catalog.schema().data_model(catalog_modules(catalog)).schema_data)
    dashboards = [overview_dashboard(database, catalog.dead_letter_topic)]
    dashboards += [
        topic_dashboard(typed[spec.name], chains, database)
        for spec in catalog.topics
        if spec.name in typed
    ]
    return dashboards
