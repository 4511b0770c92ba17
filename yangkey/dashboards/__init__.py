"""Grafana dashboards over the typed tables, generated from the compiled subscriptions.

The same catalog that renders the ClickHouse DDL (:mod:`yangkey.clickhouse.ddl`) gives, per
derived topic, its typed columns (:func:`yangkey.clickhouse.columns.typed_topics`); this edge
turns them into dashboards for Grafana's official ClickHouse data source plugin
(``grafana-clickhouse-datasource``). Reading order:

* :mod:`yangkey.dashboards.charts` decides how a leaf is shown, from its YANG type: counters
  (``yang:counter32``/``counter64`` and types derived from them) as per-second rates,
  gauges over time, enumerations as state timelines;
* :mod:`yangkey.dashboards.queries` writes the SQL of each panel (with the plugin's macros
  and template variables), and says which columns it returns;
* :mod:`yangkey.dashboards.grafana` lays the panels out into dashboard JSON;
* :mod:`yangkey.dashboards.commands` holds ``yangkey dashboards``.

Nothing in the core imports this package.
"""
