"""Render the ClickHouse DDL of a catalog from the Jinja templates in ``yangkey.sql_templates``.

Per derived topic ``T`` (table names are ``T`` plus a suffix, always quoted; a topic too long
for a ClickHouse file name is cut and given a hash, see :func:`table_base`):

``T__queue``
    server mode: ``ENGINE = Kafka(<named collection>)`` reading topic ``T`` as ``RawBLOB`` with
    ``kafka_handle_error_mode = 'stream'``; embedded mode: a ``Null`` table with the Kafka
    virtual columns (:data:`yangkey.messages.QUEUE_VIRTUAL_COLUMNS`) as real columns, filled
    by :mod:`yangkey.clickhouse.ingest`. The views are the same SQL.
``T__parsed`` + view ``T__mv_parse``
    a ``Null`` table fed from the queue: the key split into node / subscription id / XPaths, the
    headers read, ``error`` set when the row cannot be stored. Parsing happens once per row.
``T__history`` + view ``T__mv_history``
    ``MergeTree ORDER BY (message_key, event_time)``, TTL = the topic retention.
``T__current`` + view ``T__mv_current``
    ``ReplacingMergeTree(version) ORDER BY message_key``; ``version`` is a UInt256 packing
    (generation, event time ns, sequence number, Kafka offset), highest wins; a message without
    an event time counts 0 there, not its Kafka timestamp (a replay gets a new one).
view ``T__mv_errors``
    rows with an ``error`` into the database-wide ``errors`` table.

Per topic whose typed columns are known (:func:`yangkey.clickhouse.columns.typed_topics`; the
instance feed: docs/design.md#instance-feed):

``T__iparsed`` + view ``T__mv_iparse``
    a ``Null`` table: the ``yangkey-instances`` header of each good message exploded, one row
    per instance, each JSON object read once into typed columns.
``T__ihist`` + view ``T__mv_ihist``
    instance history, ``MergeTree ORDER BY (node, instance_path, event_time)``, TTL = retention.
``T__istate`` + view ``T__mv_istate``, view ``T__instances``
    instance state, ``ReplacingMergeTree(version) ORDER BY (node, instance_path, covers, under,
    scope)``: the newest row of each set of leaves an edit decides; ``T__instances`` shows the
    live instances, each leaf the value of the highest version that decided it (yang-patch).

Per database: ``errors`` (undecodable messages of every topic plus the dead-letter topic, whose
queue ``D__queue`` has the view ``D__mv_errors``), and the ``Merge`` tables ``history`` and
``current_state`` over every topic's tables. In cluster mode each stored table ``X`` is
``X_local`` (Replicated*) plus a ``Distributed`` table ``X`` sharded by the message key; the views
write to the distributed tables; every statement has ``ON CLUSTER``.

Statements come in dependency order: a view is created after its source and target, and each
topic's queue view (which starts Kafka consumption in server mode) comes last for that topic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from yangkey.clickhouse.columns import TypedTopic, feed_tuple_type
from yangkey.clickhouse.identifiers import check_database_name, table_base
from yangkey.clickhouse.tables import (
    CURRENT_MERGE_TABLE,
    ERRORS_TABLE,
    HISTORY_MERGE_TABLE,
    TopicTables,
    topic_tables,
)
from yangkey.clickhouse.templating import environment
from yangkey.errors import ConfigError
from yangkey.messages import ROW_COLUMNS, VERSION_COLUMN, XPATH_SEPARATOR
from yangkey.topics import TopicSpec

if TYPE_CHECKING:
    from yangkey.catalog import Catalog

Mode = Literal["server", "embedded"]
CurrentStatePolicy = Literal["all", "compacted"]

#: One XPath of the key's third line: characters other than quotes and ``|``, or a quoted
#: literal (``'…'`` or ``"…"``, which may contain ``|``, `` | `` and LF).
XPATH_TOKEN_RE = r"""(?:[^'"|]|'[^']*'|"[^"]*")+"""
#: The whole third line: tokens joined by the separator (`` | ``).
_SEPARATOR_RE = XPATH_SEPARATOR.replace("|", r"\|")
XPATH_LINE_RE = rf"^{XPATH_TOKEN_RE}(?:{_SEPARATOR_RE}{XPATH_TOKEN_RE})*$"

DEFAULT_ERRORS_RETENTION = 30 * 86400
#: Kafka engine settings that carry credentials (``kafka_sasl_password``, ...): they belong in
#: the named collection, and DDL never holds a secret.
_SECRET_SETTING = re.compile(r"password|secret|credential|token|sasl|ssl_key", re.IGNORECASE)


@dataclass(frozen=True)
class DdlOptions:
    """How to render: target flavour, names, and the Kafka engine settings (server mode)."""

    database: str = "yangkey"
    mode: Mode = "server"
    cluster: str | None = None
    """Cluster mode: ON CLUSTER, Replicated* engines, Distributed tables (server mode only)."""
    kafka_collection: str = "yangkey_kafka"
    """Named collection holding kafka_broker_list and credentials (never rendered)."""
    kafka_brokers: str | None = None
    """If set, also render ``CREATE NAMED COLLECTION IF NOT EXISTS`` with this broker list only."""
    consumer_group: str = "yangkey-clickhouse"
    group_per_topic: bool = True
    """Consumer group ``<consumer_group>.<topic>`` per queue table, so that a rebalance of one
    topic does not stop the others; off: every queue table joins ``consumer_group``."""
    kafka_num_consumers: int = 1
    kafka_max_block_size: int | None = None
    kafka_poll_timeout_ms: int | None = None
    kafka_flush_interval_ms: int | None = None
    kafka_thread_per_consumer: bool | None = None
    kafka_settings: Mapping[str, str | int | bool] = field(default_factory=dict)
    """Further Kafka engine settings, rendered after the ones above, sorted by name."""
    current_state: CurrentStatePolicy = "all"
    """Which topics get a current-state table: all, or only compacted (current-state) topics."""
    dead_letter_topic: str | None = None
    """Also read this topic (rejections of the producer) into the errors table."""
    errors_retention_seconds: int = DEFAULT_ERRORS_RETENTION
    replica_path: str = "/clickhouse/tables/{shard}/{database}/{table}"
    replica_name: str = "{replica}"
    sharding_key: str = "cityHash64(message_key)"
    table_settings: Mapping[str, str | int | bool] = field(default_factory=dict)
    """MergeTree SETTINGS of the history, current-state and errors tables."""

    def __post_init__(self) -> None:
        if self.mode not in ("server", "embedded"):
            raise ConfigError(f"unknown DDL mode {self.mode!r}: use 'server' or 'embedded'")
        if self.cluster is not None and self.mode == "embedded":
            raise ConfigError("--cluster needs server mode: embedded ClickHouse has no cluster")
        if self.cluster == "":
            raise ConfigError("the cluster name cannot be empty")
        if not self.database:
            raise ConfigError("the database name cannot be empty")
        check_database_name(self.database)
        if self.kafka_num_consumers < 1:
            raise ConfigError("kafka_num_consumers must be at least 1")
        if self.current_state not in ("all", "compacted"):
            raise ConfigError("current_state must be 'all' or 'compacted'")
        for name in (*self.kafka_settings, *self.table_settings):
            if not name.replace("_", "").isalnum():
                raise ConfigError(f"invalid setting name {name!r}")
        for name in self.kafka_settings:
            if _SECRET_SETTING.search(name):
                raise ConfigError(
                    f"Kafka setting {name} is a credential: put it in the named collection "
                    f"{self.kafka_collection}, never in DDL"
                )


@dataclass(frozen=True)
class Statement:
    """One DDL statement (no trailing semicolon)."""

    kind: str
    """database | named-collection | table | view"""
    name: str
    """The object created, ``database.object`` (unquoted, for display)."""
    sql: str
    topic: str | None = None


class _Renderer:
    def __init__(self, options: DdlOptions, typed: Mapping[str, TypedTopic]) -> None:
        self.options = options
        self.typed = typed
        self.env = environment()
        self.base_context: dict[str, object] = {
            "opts": options,
            "cluster": options.cluster,
            "db": options.database,
            "xpath_token_re": XPATH_TOKEN_RE,
            "xpath_line_re": XPATH_LINE_RE,
            "table_settings": list(sorted(options.table_settings.items())),
        }
        self.statements: list[Statement] = []

    def render(self, template: str, **context: object) -> str:
        text = self.env.get_template(template).render({**self.base_context, **context})
        lines = [line.rstrip() for line in text.strip().splitlines()]
        return "\n".join(line for line in lines if line)

    def add(
        self, kind: str, name: str, template: str, for_topic: str | None = None, **context: object
    ) -> None:
        context.setdefault("topic", for_topic)
        sql = self.render(template, **context)
        display = (
            name
            if kind in ("database", "named-collection")
            else (f"{self.options.database}.{name}")
        )
        self.statements.append(Statement(kind=kind, name=display, sql=sql, topic=for_topic))

    # -- objects ---------------------------------------------------------------------------

    def stored_table(
        self,
        template: str,
        table: str,
        local_table: str,
        topic: str | None,
        sharding_key: str,
        **context: object,
    ) -> None:
        """A MergeTree-family table; in cluster mode the local one plus a Distributed one."""
        self.add("table", local_table, template, topic, table=local_table, **context)
        if self.options.cluster:
            self.add(
                "table",
                table,
                "distributed_table.sql.j2",
                topic,
                table=table,
                local_table=local_table,
                sharding_key=sharding_key,
            )

    def view(
        self, spec: TopicSpec, view: str, template: str, source: str, **context: object
    ) -> None:
        """A materialized view of ``spec``'s from ``source`` (into ``target``, if it has one)."""
        self.add("view", view, template, for_topic=spec.name, view=view, source=source, **context)

    def kafka_settings(self, topic: str) -> list[tuple[str, object]]:
        o = self.options
        group = f"{o.consumer_group}.{topic}" if o.group_per_topic else o.consumer_group
        values: list[tuple[str, object]] = [
            ("kafka_topic_list", topic),
            ("kafka_group_name", group),
            ("kafka_format", "RawBLOB"),
            ("kafka_handle_error_mode", "stream"),
            ("kafka_num_consumers", o.kafka_num_consumers),
        ]
        optional: list[tuple[str, object]] = [
            ("kafka_max_block_size", o.kafka_max_block_size),
            ("kafka_poll_timeout_ms", o.kafka_poll_timeout_ms),
            ("kafka_flush_interval_ms", o.kafka_flush_interval_ms),
            ("kafka_thread_per_consumer", o.kafka_thread_per_consumer),
        ]
        values += [(name, value) for name, value in optional if value is not None]
        fixed = {name for name, _ in values}
        for name, value in sorted(o.kafka_settings.items()):
            if name in fixed:
                raise ConfigError(
                    f"Kafka setting {name} is set by yangkey and cannot be overridden"
                )
            values.append((name, value))
        return values

    def queue(self, table: str, topic: str) -> None:
        self.add(
            "table",
            table,
            "queue_table.sql.j2",
            for_topic=topic,
            table=table,
            kafka_settings=self.kafka_settings(topic),
        )

    def topic(self, spec: TopicSpec) -> None:
        o = self.options
        names = topic_tables(spec.name, o.database, cluster=o.cluster is not None)
        with_current = o.current_state == "all" or spec.compaction
        errors = ERRORS_TABLE
        self.stored_table(
            "history_table.sql.j2",
            names.history,
            names.history_local,
            spec.name,
            o.sharding_key,
            retention_seconds=spec.retention_seconds,
        )
        if with_current:
            self.stored_table(
                "current_table.sql.j2",
                names.current,
                names.current_local,
                spec.name,
                o.sharding_key,
                # a compacted topic keeps the last value of every key forever: so does the table
                retention_seconds=0 if spec.compaction else spec.retention_seconds,
            )
        self.add(
            "table", names.parsed, "parsed_table.sql.j2", for_topic=spec.name, table=names.parsed
        )
        self.view(spec, names.mv_history, "mv_history.sql.j2", names.parsed, target=names.history)
        if with_current:
            self.view(
                spec, names.mv_current, "mv_current.sql.j2", names.parsed, target=names.current
            )
        self.view(
            spec,
            names.mv_errors,
            "mv_errors.sql.j2",
            names.parsed,
            target=errors,
            retention_seconds=spec.retention_seconds,
            # a compacted topic's current-state table has no TTL (see above)
            keeps_current=with_current and spec.compaction,
        )
        typed = self.typed.get(spec.name)
        if typed is not None:
            self.instance_tables(spec, names, typed)
        self.queue(names.queue, spec.name)
        self.view(spec, names.mv_parse, "mv_parse.sql.j2", names.queue, target=names.parsed)

    def instance_tables(self, spec: TopicSpec, names: TopicTables, typed: TypedTopic) -> None:
        """Instance history, instance state, the view over it, and their views from parsed."""
        key_columns = [c for c in typed.columns if c.kind == "key"]
        value_columns = [c for c in typed.columns if c.kind != "key"]
        sharding = "cityHash64(node, instance_path)"
        common: dict[str, object] = {"target": typed.target}
        self.stored_table(
            "instance_history_table.sql.j2",
            names.ihist,
            names.ihist_local,
            spec.name,
            sharding,
            retention_seconds=spec.retention_seconds,
            typed_columns=[(c.name, c.type, "") for c in typed.columns],
            **common,
        )
        self.stored_table(
            "instance_state_table.sql.j2",
            names.istate,
            names.istate_local,
            spec.name,
            sharding,
            state_columns=[
                ("node", "LowCardinality(String)"),
                ("instance_path", "String"),
                ("covers", "Bool"),
                ("under", "String"),
                ("scope", "Array(LowCardinality(String))"),
                ("subscription_id", "UInt64"),
                ("event_time", "DateTime64(9, 'UTC')"),
                ("version", "UInt256"),
                ("deleted", "Bool"),
                *((c.name, c.type) for c in typed.columns),
            ],
            view=names.instances,
            **common,
        )
        columns: dict[str, object] = {
            "key_columns": key_columns,
            "value_columns": value_columns,
        }
        self.view(spec, names.instances, "instances_view.sql.j2", names.istate, **columns)
        typed_columns = [(c.name, c.type) for c in typed.columns]
        self.add(
            "table",
            names.iparsed,
            "instance_parsed_table.sql.j2",
            for_topic=spec.name,
            table=names.iparsed,
            typed_columns=typed_columns,
        )
        self.view(
            spec,
            names.mv_ihist,
            "mv_instance_history.sql.j2",
            names.iparsed,
            target=names.ihist,
            typed_columns=typed_columns,
        )
        self.view(
            spec,
            names.mv_istate,
            "mv_instance_state.sql.j2",
            names.iparsed,
            target=names.istate,
            columns=typed.columns,
        )
        self.view(
            spec,
            names.mv_iparse,
            "mv_instance_parse.sql.j2",
            names.parsed,
            target=names.iparsed,
            columns=typed.columns,
            tuple_type=feed_tuple_type(typed.columns),
        )

    def dead_letter(self, topic: str) -> None:
        names = topic_tables(topic, self.options.database)
        self.queue(names.queue, topic)
        self.add(
            "view",
            names.mv_errors,
            "mv_dead_letter.sql.j2",
            for_topic=topic,
            view=names.mv_errors,
            source=names.queue,
            target=ERRORS_TABLE,
        )

    def merge_tables(self) -> None:
        row_columns = list(ROW_COLUMNS)
        ingested = ["`ingested_at` DateTime('UTC')"]
        self.add(
            "table",
            HISTORY_MERGE_TABLE,
            "merge_table.sql.j2",
            table=HISTORY_MERGE_TABLE,
            columns=row_columns,
            extra=ingested,
            pattern="__history$",
            description="History of every topic (Merge over the *__history tables)",
        )
        self.add(
            "table",
            CURRENT_MERGE_TABLE,
            "merge_table.sql.j2",
            table=CURRENT_MERGE_TABLE,
            columns=[*row_columns, VERSION_COLUMN],
            extra=ingested,
            pattern="__current$",
            description="Current state of every topic (Merge over the *__current tables; "
            "read with FINAL)",
        )


def render_ddl(
    topics: Sequence[TopicSpec],
    options: DdlOptions,
    typed: Mapping[str, TypedTopic] | None = None,
) -> list[Statement]:
    """Every statement for ``topics``, in dependency order; deterministic for equal input.

    ``typed`` maps topic names to their typed columns (:func:`typed_topics` of a catalog): those
    topics also get instance tables."""
    seen: dict[str, str] = {}
    for spec in topics:
        base = table_base(spec.name, options.database)
        if base in seen and seen[base] != spec.name:
            raise ConfigError(f"topics {seen[base]!r} and {spec.name!r} map to the same tables")
        seen[base] = spec.name
    if (
        options.dead_letter_topic is not None
        and table_base(options.dead_letter_topic, options.database) in seen
    ):
        raise ConfigError(
            f"dead-letter topic {options.dead_letter_topic!r} is also a subscription topic"
        )
    renderer = _Renderer(options, typed or {})
    if options.kafka_brokers is not None and options.mode == "server":
        renderer.add("named-collection", options.kafka_collection, "named_collection.sql.j2")
    renderer.add("database", options.database, "database.sql.j2")
    renderer.stored_table(
        "errors_table.sql.j2",
        ERRORS_TABLE,
        f"{ERRORS_TABLE}_local" if options.cluster else ERRORS_TABLE,
        None,
        "rand()",
        retention_seconds=options.errors_retention_seconds,
    )
    for spec in topics:
        renderer.topic(spec)
    if options.dead_letter_topic is not None:
        renderer.dead_letter(options.dead_letter_topic)
    renderer.merge_tables()
    return renderer.statements


def render_catalog(catalog: Catalog, options: DdlOptions) -> list[Statement]:
    """:func:`render_ddl` for a compiled catalog, with its dead-letter topic."""
    if options.dead_letter_topic is None:
        options = replace(options, dead_letter_topic=catalog.dead_letter_topic)
    from yangkey.clickhouse.columns import typed_topics  # noqa: PLC0415 - yangson on demand

    return render_ddl(catalog.topics, options, typed_topics(catalog))


def to_script(statements: Iterable[Statement], header: Iterable[str] = ()) -> str:
    """One SQL script: ``-- header`` lines, then each statement followed by ``;``."""
    # a line break in a header line (a file name) must not end the comment
    parts = [f"-- {part}".rstrip() for line in header for part in line.splitlines() or [""]]
    body = [f"{statement.sql};" for statement in statements]
    if parts:
        return "\n".join(parts) + "\n\n" + "\n\n".join(body) + "\n"
    return "\n\n".join(body) + "\n"
