"""The SQL of every panel, written for Grafana's ClickHouse data source plugin.

Queries use the plugin's macros, expanded by its backend before ClickHouse sees them
(``pkg/macros`` of grafana/clickhouse-datasource): ``$__timeFilter(col)`` (the dashboard's time
range, seconds), ``$__timeInterval(col)`` (``toStartOfInterval`` by the panel's interval).
Template variables go through the plugin's front end: ``$__conditionalAll(cond, $var)`` drops
``cond`` (to ``1=1``) when *All* is selected, and ``${var:singlequote}`` is Grafana's quoting
of each selected value (``'a','b'``, a ``'`` inside written ``\\'``).

Every table name comes from :func:`yangkey.clickhouse.ddl.topic_tables` and every column from
the topic's typed columns, all quoted, so the dashboards follow whatever the DDL renders.
A time series query returns ``time``, the label columns, then the value columns, sorted by
time (the plugin turns such a long table into one series per label value); a table query
returns exactly :attr:`Panel.columns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from yangkey.clickhouse.columns import Column, TypedTopic
from yangkey.clickhouse.identifiers import qualified, quote_identifier, quote_literal
from yangkey.clickhouse.tables import ERRORS_TABLE, HISTORY_MERGE_TABLE, topic_tables
from yangkey.dashboards.charts import Charted

__all__ = ["NODE_FILTER", "Panel", "PanelKind"]

PanelKind = Literal["timeseries", "state-timeline", "table", "barchart"]

NODE_FILTER = "$__conditionalAll(node IN (${node:singlequote}), $node)"
INSTANCE_FILTER = "$__conditionalAll(instance_path IN (${instance:singlequote}), $instance)"


@dataclass(frozen=True)
class Panel:
    """One panel: its title, kind, SQL, and the columns its SQL returns."""

    title: str
    kind: PanelKind
    sql: str
    columns: tuple[str, ...]
    """Every column of the result, in order (time series: time, labels, values)."""
    labels: tuple[str, ...] = ()
    """Time series: the columns naming a series (the plugin makes them labels)."""
    unit: str = ""
    """A Grafana unit id (``Bps``, ``pps``, ``short``...)."""
    description: str = ""
    width: int = 12
    height: int = 8
    partition_by: str = ""
    """State timelines: the column splitting the rows into one timeline each."""

    @property
    def time_series(self) -> bool:
        """True when the plugin should return it as time series (format 0)."""
        return self.kind == "timeseries"


def _where(*conditions: str) -> str:
    return "WHERE " + "\n  AND ".join(conditions)


def instance_label(typed: TypedTopic) -> str:
    """SQL naming an instance in a legend: the node and the list keys on its path (the
    node and the instance path where the target has no keys)."""
    keys = [c for c in typed.columns if c.kind == "key"]
    parts = ["node"]
    for column in keys:
        name = quote_identifier(column.name)
        parts.append(name if column.type == "String" else f"toString({name})")
    if not keys:
        parts.append("instance_path")
    return f"concatWithSeparator(' ', {', '.join(parts)})"


def _unit(column: Column, per_second: bool) -> str:
    leaf = column.name.rpartition(".")[2]
    if per_second:
        if leaf.endswith("octets"):
            return "Bps"
        if leaf.endswith("pkts"):
            return "pps"
        return "cps"
    return "short"


def _value_name(charted: Charted) -> str:
    return f"{charted.column.name}/s" if charted.chart == "counter" else charted.column.name


def counter_rate(typed: TypedTopic, charted: Charted, database: str) -> Panel:
    """Per-second rate of a counter per instance and interval: the sum of the increases
    between consecutive samples over the seconds between them. A sample lower than the one
    before counts through the wrap (``wrap``); a changed discontinuity time starts over
    (no increase from that sample), as RFC 8343 says of interface counters."""
    table = qualified(database, topic_tables(typed.topic, database).ihist)
    value = quote_identifier(charted.column.name)
    restart = "n = 1"
    marker = ""
    if charted.discontinuity is not None:
        mark = quote_identifier(charted.discontinuity)
        marker = f"\n        lagInFrame(toNullable({mark})) OVER w AS previous_marker,"
        restart = f"n = 1 OR NOT ({mark} <=> previous_marker)"
    name = _value_name(charted)
    sql = f"""SELECT time, instance, sum(delta) / sum(seconds) AS {quote_identifier(name)}
FROM
(
    SELECT
        $__timeInterval(event_time) AS time,
        {instance_label(typed)} AS instance,
        {value} AS sample,
        lagInFrame({value}) OVER w AS previous,{marker}
        lagInFrame(toNullable(event_time)) OVER w AS previous_time,
        row_number() OVER w AS n,
        multiIf(
            {restart}, NULL,
            sample >= previous, sample - previous,
            sample + ({charted.wrap - 1} - previous) + 1
        ) AS delta,
        dateDiff('millisecond', previous_time, event_time) / 1000 AS seconds
    FROM {table}
    {_where(f"{value} IS NOT NULL", "$__timeFilter(event_time)", NODE_FILTER, INSTANCE_FILTER)}
    WINDOW w AS (PARTITION BY node, instance_path ORDER BY event_time
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
WHERE delta IS NOT NULL AND seconds > 0
GROUP BY time, instance
ORDER BY time, instance"""
    return Panel(
        title=f"{charted.column.name} per second",
        kind="timeseries",
        sql=sql,
        columns=("time", "instance", name),
        labels=("instance",),
        unit=_unit(charted.column, per_second=True),
        description=f"Increase of the counter {charted.column.name} per second and instance "
        f"(a wrap at 2^{charted.wrap.bit_length() - 1} counted through"
        + (f", a changed {charted.discontinuity} starts over)." if charted.discontinuity else ").")
        + " Needs two samples of an instance in the range.",
    )


def gauge(typed: TypedTopic, charted: Charted, database: str) -> Panel:
    table = qualified(database, topic_tables(typed.topic, database).ihist)
    value = quote_identifier(charted.column.name)
    # not "AS {value}": ClickHouse would read the alias (an aggregate) in WHERE
    mean = f"mean {charted.column.name}"
    sql = f"""SELECT
    $__timeInterval(event_time) AS time,
    {instance_label(typed)} AS instance,
    avg({value}) AS {quote_identifier(mean)}
FROM {table}
{_where(f"{value} IS NOT NULL", "$__timeFilter(event_time)", NODE_FILTER, INSTANCE_FILTER)}
GROUP BY time, instance
ORDER BY time, instance"""
    return Panel(
        title=charted.column.name,
        kind="timeseries",
        sql=sql,
        columns=("time", "instance", mean),
        labels=("instance",),
        unit=_unit(charted.column, per_second=False),
        description=f"{charted.column.name} per instance (average per interval).",
    )


def state_timeline(typed: TypedTopic, charted: Charted, database: str) -> Panel:
    table = qualified(database, topic_tables(typed.topic, database).ihist)
    value = quote_identifier(charted.column.name)
    # LIMIT 1 BY drops a message ingest read twice (at-least-once)
    sql = f"""SELECT event_time AS time, {instance_label(typed)} AS instance, {value} AS {value}
FROM {table}
{_where(f"{value} IS NOT NULL", "$__timeFilter(event_time)", NODE_FILTER, INSTANCE_FILTER)}
ORDER BY time, instance
LIMIT 1 BY node, instance_path, version"""
    return Panel(
        title=charted.column.name,
        kind="state-timeline",
        sql=sql,
        columns=("time", "instance", charted.column.name),
        partition_by="instance",
        description=f"{charted.column.name} per instance over time.",
    )


def current_state(typed: TypedTopic, database: str) -> Panel:
    """The live instances now (``<topic>__instances``), one row each, every leaf but nested
    lists (JSON text) shown."""
    table = qualified(database, topic_tables(typed.topic, database).instances)
    shown = [c for c in typed.columns if c.kind != "list"]
    keys = [c.name for c in shown if c.kind == "key"]
    values = [c.name for c in shown if c.kind != "key"]
    columns = ("node", *keys, "updated", *values)
    select = ",\n    ".join(
        [
            "node",
            *(quote_identifier(k) for k in keys),
            "event_time AS updated",
            *(quote_identifier(v) for v in values),
        ]
    )
    sql = f"""SELECT
    {select}
FROM {table}
{_where(NODE_FILTER, INSTANCE_FILTER)}
ORDER BY node, instance_path
LIMIT 1000"""
    return Panel(
        title="Current state",
        kind="table",
        sql=sql,
        columns=columns,
        width=24,
        height=10,
        description="The live instances, each leaf as the newest message that decided it "
        "(yang-patch merged; deleted instances left out).",
    )


def messages_per_node(topic: str, database: str) -> Panel:
    table = qualified(database, topic_tables(topic, database).history)
    sql = f"""SELECT $__timeInterval(event_time) AS time, node, count() AS messages
FROM {table}
{_where("$__timeFilter(event_time)", NODE_FILTER)}
GROUP BY time, node
ORDER BY time, node"""
    return Panel(
        title="Messages per node",
        kind="timeseries",
        sql=sql,
        columns=("time", "node", "messages"),
        labels=("node",),
        unit="short",
        description=f"Keyed messages of {topic} per node and interval.",
    )


def topic_errors(topic: str, database: str) -> Panel:
    table = qualified(database, ERRORS_TABLE)
    sql = f"""SELECT error_kind AS kind, error AS reason, count() AS messages,
    max(received_at) AS last_seen
FROM {table}
{_where(f"kafka_topic = {quote_literal(topic)}", "$__timeFilter(received_at)")}
GROUP BY kind, reason
ORDER BY messages DESC, kind, reason
LIMIT 100"""
    return Panel(
        title="Messages not stored",
        kind="table",
        sql=sql,
        columns=("kind", "reason", "messages", "last_seen"),
        description=f"Messages of {topic} the tables could not store (undecodable, expired).",
    )


# -- the overview ---------------------------------------------------------------------------


def overview(database: str, dead_letter_topic: str) -> list[Panel]:
    """Every topic at once: messages per topic, node and subscription, the partition spread,
    and the dead letters with their reasons."""
    history = qualified(database, HISTORY_MERGE_TABLE)
    errors = qualified(database, ERRORS_TABLE)
    dead = quote_literal(dead_letter_topic)
    stamped = "coalesce(kafka_timestamp, received_at)"
    return [
        Panel(
            title="Messages per topic",
            kind="timeseries",
            sql=f"""SELECT
    $__timeInterval(event_time) AS time, kafka_topic AS topic, count() AS messages
FROM {history}
{_where("$__timeFilter(event_time)", NODE_FILTER)}
GROUP BY time, topic
ORDER BY time, topic""",
            columns=("time", "topic", "messages"),
            labels=("topic",),
            unit="short",
        ),
        Panel(
            title="Messages per node",
            kind="timeseries",
            sql=f"""SELECT $__timeInterval(event_time) AS time, node, count() AS messages
FROM {history}
{_where("$__timeFilter(event_time)", NODE_FILTER)}
GROUP BY time, node
ORDER BY time, node""",
            columns=("time", "node", "messages"),
            labels=("node",),
            unit="short",
        ),
        Panel(
            title="Messages per node and subscription",
            kind="table",
            sql=f"""SELECT node, subscription_id, count() AS messages,
    uniqExact(message_key) AS keys, max(event_time) AS last_event
FROM {history}
{_where("$__timeFilter(event_time)", NODE_FILTER)}
GROUP BY node, subscription_id
ORDER BY node, subscription_id""",
            columns=("node", "subscription_id", "messages", "keys", "last_event"),
        ),
        Panel(
            title="Messages per topic partition",
            kind="barchart",
            sql=f"""SELECT concat(kafka_topic, ' #', toString(kafka_partition)) AS partition,
    count() AS messages
FROM {history}
{_where("$__timeFilter(event_time)", NODE_FILTER)}
GROUP BY kafka_topic, kafka_partition
ORDER BY kafka_topic, kafka_partition""",
            columns=("partition", "messages"),
            description="The keying's spread: a partition far above its topic's others is "
            "skew (a hot node or instance).",
        ),
        Panel(
            title="Dead letters per kind",
            kind="timeseries",
            sql=f"""SELECT
    $__timeInterval({stamped}) AS time, error_kind AS kind, count() AS dead_letters
FROM {errors}
{_where(f"kafka_topic = {dead}", f"$__timeFilter({stamped})")}
GROUP BY time, kind
ORDER BY time, kind""",
            columns=("time", "kind", "dead_letters"),
            labels=("kind",),
            unit="short",
            description=f"Notifications the producer rejected ({dead_letter_topic}).",
        ),
        Panel(
            title="Dead-letter reasons",
            kind="table",
            sql=f"""SELECT error_kind AS kind, error AS reason, count() AS messages,
    max({stamped}) AS last_seen, any(source) AS example_source
FROM {errors}
{_where(f"kafka_topic = {dead}", f"$__timeFilter({stamped})")}
GROUP BY kind, reason
ORDER BY messages DESC, kind, reason
LIMIT 100""",
            columns=("kind", "reason", "messages", "last_seen", "example_source"),
        ),
    ]


def node_variable_query(table: str) -> str:
    return f"SELECT DISTINCT node FROM {table} ORDER BY node"


def instance_variable_query(typed: TypedTopic, database: str) -> str:
    table = qualified(database, topic_tables(typed.topic, database).ihist)
    return (
        f"SELECT DISTINCT instance_path, {instance_label(typed)} AS instance\n"
        f"FROM {table}\nWHERE {NODE_FILTER}\nORDER BY instance"
    )


def topic_panels(
    typed: TypedTopic, charted: Sequence[Charted], database: str
) -> list[tuple[str, list[Panel]]]:
    """The rows of a topic's dashboard: (row title, panels)."""
    rows: list[tuple[str, list[Panel]]] = [
        (
            "Messages",
            [messages_per_node(typed.topic, database), topic_errors(typed.topic, database)],
        )
    ]
    counters = [counter_rate(typed, c, database) for c in charted if c.chart == "counter"]
    gauges = [gauge(typed, c, database) for c in charted if c.chart == "gauge"]
    states = [state_timeline(typed, c, database) for c in charted if c.chart == "state"]
    if counters:
        rows.append(("Counters (per-second rates)", counters))
    if gauges:
        rows.append(("Gauges", gauges))
    if states:
        rows.append(("States", states))
    rows.append(("Now", [current_state(typed, database)]))
    return rows
