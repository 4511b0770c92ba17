"""``click`` commands of the ClickHouse edge: ``ddl generate|apply``, ``ingest``, ``state``,
``history``. Register them on the main CLI with :func:`register` (or ``cli.add_command`` on
each of :data:`COMMANDS`).

Errors are raised as :class:`yangkey.errors.YangkeyError` subclasses for the main CLI to print.
A server is given as ``--clickhouse http[s]://user@host:port[/database]``; the password is read
from ``CLICKHOUSE_PASSWORD`` only (never from the command line, never printed).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, TypeVar

import click

from yangkey.cli.declaration import Declaration, apply_all
from yangkey.cli.options import (
    BOOTSTRAP,
    CATALOG_TOPIC,
    CONSUMER_GROUP,
    DATABASE,
    DATABASE_FROM_URL,
    EMBEDDED,
    FOLLOW,
    OUTPUT_DIR,
    REPORT,
    SHARED_CATALOG,
    SHARED_CATALOG_IMPLIED,
    TOPIC,
    UNTIL,
    format_option,
    kafka_config_options,
    resolve_format,
    resolve_target,
    shared_catalog_servers,
    subscription_filter_options,
    subscriptions_option,
    subscriptions_options,
    target_options,
)
from yangkey.cli.reporting import load_catalog, reports_errors, skipped_summary
from yangkey.errors import ConfigError

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.apply import Connection
    from yangkey.clickhouse.columns import TypedTopic
    from yangkey.clickhouse.ddl import DdlOptions, Mode
    from yangkey.shared_catalog import SharedSubscription
    from yangkey.topics import TopicSpec

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_FILES = {"server": "server.sql", "embedded": "embedded.sql"}

# Bounds of the ClickHouse columns, parameters and settings the numeric options end in (a
# {limit:UInt64} parameter would read 2**64 as 0); the same values as yangkey.clickhouse.queries,
# which is not imported here to keep `yangkey --help` light.
_UINT64_MAX = 2**64 - 1


CLUSTER = Declaration(
    ("--cluster",),
    "cluster",
    "Cluster mode (server only): ON CLUSTER, Replicated, Distributed.",
    metavar="NAME",
)
KAFKA_COLLECTION = Declaration(
    ("--kafka-collection",),
    "kafka_collection",
    "Named collection with the Kafka brokers and credentials (server mode).",
    metavar="NAME",
    attrs={"default": "yangkey_kafka", "show_default": True},
)
NUM_CONSUMERS = Declaration(
    ("--num-consumers",),
    "num_consumers",
    "kafka_num_consumers of each Kafka engine table (server mode): consumers per topic, at "
    "most its partition count.",
    attrs={"type": click.IntRange(1, _UINT64_MAX), "default": 1, "show_default": True},
)
CURRENT_STATE = Declaration(
    ("--current-state",),
    "current_state",
    "Which topics get a current-state table.",
    attrs={"type": click.Choice(["all", "compacted"]), "default": "all", "show_default": True},
)
LIMIT = Declaration(
    ("--limit",),
    "limit",
    "At most this many {what}.",
    metavar="N",
    attrs={"type": click.IntRange(1, _UINT64_MAX)},
)


def _render_options(function: F) -> F:
    return apply_all(
        function,
        DATABASE.but(note=DATABASE_FROM_URL),
        KAFKA_COLLECTION,
        CONSUMER_GROUP.but(
            default="yangkey-clickhouse",
            note="Of the Kafka tables (one '<group>.<topic>' per topic).",
        ),
        NUM_CONSUMERS,
        CURRENT_STATE,
    )


def _ddl_options(
    *,
    mode: Mode,
    database: str,
    cluster: str | None,
    kafka_collection: str,
    consumer_group: str,
    num_consumers: int,
    current_state: str,
) -> DdlOptions:
    from yangkey.clickhouse.ddl import DdlOptions  # noqa: PLC0415

    return DdlOptions(
        database=database,
        mode=mode,
        cluster=cluster,
        kafka_collection=kafka_collection,
        consumer_group=consumer_group,
        kafka_num_consumers=num_consumers,
        current_state="compacted" if current_state == "compacted" else "all",
    )


def _connect(
    clickhouse: str | None, embedded: str | None, *, create: bool = False
) -> tuple[Connection, str | None]:
    """The connection (the target from the strongest source, see
    :func:`yangkey.cli.options.resolve_target`) and the database named in the URL, if any.
    Without ``create``, a missing embedded directory is an error (a query would leave an
    empty store behind)."""
    from yangkey.clickhouse.apply import ServerConnection, connect  # noqa: PLC0415

    clickhouse, embedded = resolve_target(clickhouse, embedded)
    if embedded is not None and not create and not Path(embedded).is_dir():
        raise ConfigError(
            "no embedded ClickHouse here (`yangkey ddl apply` or `yangkey ingest` creates it)",
            source=embedded,
        )
    if clickhouse is not None:
        # clickhouse-connect logs a failed request before raising it: the error line says it.
        driver = logging.getLogger("clickhouse_connect")
        driver.addHandler(logging.NullHandler())
        driver.propagate = False
    conn = connect(clickhouse=clickhouse, embedded=embedded)
    url_database = conn.database if isinstance(conn, ServerConnection) else None
    return conn, url_database


@click.group("ddl")
def ddl() -> None:
    """ClickHouse DDL for the catalog topics: write it out, or apply it."""


@ddl.command("generate")
@subscriptions_options(required=False, note="Optional with --shared-catalog.")
@SHARED_CATALOG.but(note=f"add every subscription in it. {SHARED_CATALOG_IMPLIED}")
@BOOTSTRAP.but(required=False)
@CATALOG_TOPIC
@click.option(
    "--mode",
    type=click.Choice(["server", "embedded", "both"]),
    default="both",
    show_default=True,
    help="Kafka engine tables (server) or Null queue tables fed by `yangkey ingest` (embedded).",
)
@CLUSTER
@_render_options
@OUTPUT_DIR.but(default=None, note="server.sql / embedded.sql (default: print them).")
@reports_errors
def generate(
    *,
    subscriptions: str | None,
    yang_dirs: tuple[str, ...],
    strict: bool,
    shared_catalog: bool,
    bootstrap: str | None,
    catalog_topic: str,
    mode: str,
    cluster: str | None,
    database: str | None,
    kafka_collection: str,
    consumer_group: str,
    num_consumers: int,
    current_state: str,
    output_dir: Path | None,
) -> None:
    """Render the DDL, one .sql file per mode, in a stable order (reproducible output).

    \b
    Examples:
      yangkey ddl generate --subscriptions subscriptions.yaml --mode embedded
      yangkey ddl generate --subscriptions subscriptions.yaml -o ddl/
      yangkey ddl generate --subscriptions subscriptions.yaml --mode server --cluster main
      yangkey ddl generate --shared-catalog -b "$(yangkey kafka status --address)" \\
          --mode embedded
    """
    from yangkey.clickhouse.ddl import render_catalog, render_ddl, to_script  # noqa: PLC0415

    shared = shared_catalog_servers(shared_catalog, bootstrap)
    if subscriptions is None and shared is None:
        raise click.UsageError("give --subscriptions, --shared-catalog or both")
    catalog = (
        load_catalog(subscriptions, yang_dirs, strict=strict) if subscriptions is not None else None
    )
    summary = skipped_summary(catalog) if catalog is not None else ""
    shared_topics = (
        _shared_topics(catalog, shared, catalog_topic, yang_dirs) if shared is not None else None
    )
    source = subscriptions or f"kafka://{shared}/{catalog_topic}"
    if mode == "both":
        modes: list[Mode] = ["server"] if cluster else ["server", "embedded"]
    else:
        modes = ["server" if mode == "server" else "embedded"]
    outputs: list[tuple[str, str]] = []
    for each in modes:
        options = _ddl_options(
            mode=each,
            database=database or "yangkey",
            cluster=cluster,
            kafka_collection=kafka_collection,
            consumer_group=consumer_group,
            num_consumers=num_consumers,
            current_state=current_state,
        )
        if shared_topics is None:
            assert catalog is not None
            statements = render_catalog(catalog, options)
        else:
            topics, dead_letter_topic, typed = shared_topics
            statements = render_ddl(
                topics, replace(options, dead_letter_topic=dead_letter_topic), typed
            )
        header = _header(source, options, len(statements))
        if catalog is not None and catalog.skipped:
            # The script says what it lacks: a reader of the file sees no stderr.
            header += [f"Not included: {summary}:"] + [f"  {s.message()}" for s in catalog.skipped]
        outputs.append((OUTPUT_FILES[each], to_script(statements, header)))
    if output_dir is None:
        click.echo("\n".join(text for _, text in outputs), nl=False)
    else:
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            for name, text in outputs:
                (output_dir / name).write_text(text, encoding="utf-8")
                click.echo(f"wrote {output_dir / name}", err=True)
        except OSError as exc:
            raise ConfigError(f"cannot write: {exc.strerror}", source=str(output_dir)) from None
    if summary:
        click.echo(summary, err=True)


def _shared_topics(
    catalog: Catalog | None,
    bootstrap: str,
    catalog_topic: str,
    yang_dirs: tuple[str, ...] = (),
    *,
    create: bool = False,
) -> tuple[list[TopicSpec], str, dict[str, TypedTopic]]:
    """The file's topics and those of the shared catalog it lacks; the dead-letter topic; the
    typed columns of each topic whose schema is here (one warning line for any other)."""
    from yangkey.config import SubscriptionsFile  # noqa: PLC0415
    from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415
    from yangkey.shared_catalog import merge_topics, topic_specs  # noqa: PLC0415

    replication = catalog.file.internal("catalog") if catalog is not None else (None, None)
    with CatalogTopic(bootstrap, catalog_topic, create=create, replication=replication) as shared:
        records = shared.records()
    typed = _shared_typed(catalog, records, yang_dirs)
    if catalog is None:
        return topic_specs(records), SubscriptionsFile().dead_letter_topic, typed
    return merge_topics(catalog.topics, topic_specs(records)), catalog.dead_letter_topic, typed


def _shared_typed(
    catalog: Catalog | None, records: list[SharedSubscription], yang_dirs: tuple[str, ...]
) -> dict[str, TypedTopic]:
    from yangkey.clickhouse.columns import (  # noqa: PLC0415 - yangson on demand
        shared_branches,
        typed_topics,
    )
    from yangkey.instances import catalog_modules  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415

    modules: tuple[str, ...] = ()
    if catalog is None:
        typed: dict[str, TypedTopic] = {}
        schema = SchemaContext.cached(yang_dirs)
    else:
        typed = typed_topics(catalog)
        schema, modules = catalog.schema(), catalog_modules(catalog)
    branches, untyped = shared_branches(records, schema, modules, known=typed)
    for topic, why in untyped.items():
        click.echo(
            f"warning: {topic}: no typed instance tables (message-level tables only): {why}",
            err=True,
        )
    return {**typed, **{topic: columns for topic, (columns, _) in branches.items()}}


def _header(source: str, options: DdlOptions, count: int) -> list[str]:
    flavour = options.mode + (f", cluster {options.cluster}" if options.cluster else "")
    return [
        f"yangkey ClickHouse DDL ({flavour} mode), database {options.database}",
        f"Generated by `yangkey ddl generate` from {PurePath(source).as_posix()};",
        "do not edit: regenerate instead. Every statement is idempotent (IF NOT EXISTS).",
        f"{count} statements.",
    ]


@ddl.command("apply")
@subscriptions_option
@target_options
@CLUSTER
@_render_options
@SHARED_CATALOG.but(note=f"also every subscription in it. {SHARED_CATALOG_IMPLIED}")
@BOOTSTRAP.but(required=False)
@CATALOG_TOPIC
@FOLLOW.but(
    note="with --shared-catalog, follow it: create the tables of each new topic as a "
    "subscription brings it (server mode: the Kafka engine tables too)."
)
@reports_errors
def apply_command(
    *,
    subscriptions: str,
    yang_dirs: tuple[str, ...],
    strict: bool,
    clickhouse: str | None,
    embedded: str | None,
    cluster: str | None,
    database: str | None,
    kafka_collection: str,
    consumer_group: str,
    num_consumers: int,
    current_state: str,
    shared_catalog: bool,
    bootstrap: str | None,
    catalog_topic: str,
    follow: bool,
) -> None:
    """Create the database, tables and views (idempotent: existing objects are kept).

    \b
    Examples:
      yangkey ddl apply --subscriptions subscriptions.yaml --embedded ch
      CLICKHOUSE_PASSWORD=secret yangkey ddl apply --subscriptions subscriptions.yaml \\
          --clickhouse http://yangkey@localhost:8123
      yangkey ddl apply --subscriptions subscriptions.yaml --shared-catalog -b localhost:9092 \\
          --follow --clickhouse http://localhost:8123
    """
    from yangkey.clickhouse.apply import ApplyResult, apply  # noqa: PLC0415
    from yangkey.clickhouse.ddl import render_catalog, render_ddl  # noqa: PLC0415

    shared = shared_catalog_servers(shared_catalog, bootstrap)
    if follow and shared is None:
        raise click.UsageError("--follow follows the shared catalog: give --shared-catalog")
    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    conn, url_database = _connect(clickhouse, embedded, create=True)

    def report(result: ApplyResult, *, summary: bool = True) -> None:
        for statement in result.existing:
            click.echo(f"exists   {statement.kind:<16} {statement.name}", err=True)
        for statement in result.created:
            click.echo(f"created  {statement.kind:<16} {statement.name}", err=True)
        if summary:
            click.echo(
                f"{len(result.created)} created, {len(result.existing)} already existed "
                f"({conn.description})",
                err=True,
            )
            if catalog.skipped:
                click.echo(skipped_summary(catalog), err=True)

    try:
        db = database or url_database or "yangkey"
        options = _ddl_options(
            mode="server" if url_database is not None or _is_server(conn) else "embedded",
            database=db,
            cluster=cluster,
            kafka_collection=kafka_collection,
            consumer_group=consumer_group,
            num_consumers=num_consumers,
            current_state=current_state,
        )
        if shared is None:
            report(apply(conn, render_catalog(catalog, options), db))
            return
        # Following, it creates the catalog topic if it is the first to need it.
        topics, dead_letter_topic, typed = _shared_topics(
            catalog, shared, catalog_topic, yang_dirs, create=follow
        )
        statements = render_ddl(
            topics, replace(options, dead_letter_topic=dead_letter_topic), typed
        )
        report(apply(conn, statements, db))
        if follow:
            _follow_catalog(
                conn, db, options, {t.name for t in topics}, shared, catalog_topic, catalog
            )
    finally:
        conn.close()


def _follow_catalog(
    conn: Connection,
    database: str,
    options: DdlOptions,
    done: set[str],
    bootstrap: str,
    catalog_topic: str,
    catalog: Catalog,
    interval: float = 1.0,
) -> None:
    """Create the tables of each topic the shared catalog gains, until interrupted."""
    import time  # noqa: PLC0415

    from yangkey.clickhouse.apply import apply  # noqa: PLC0415
    from yangkey.clickhouse.ddl import render_ddl  # noqa: PLC0415
    from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415
    from yangkey.shared_catalog import topic_specs  # noqa: PLC0415

    click.echo(f"following kafka://{bootstrap}/{catalog_topic} (Ctrl-C stops)", err=True)
    replication = catalog.file.internal("catalog")
    with CatalogTopic(bootstrap, catalog_topic, replication=replication) as shared:
        try:
            while True:
                records = shared.records()
                new = [s for s in topic_specs(records) if s.name not in done]
                if new:
                    fresh = [r for r in records if any(t not in done for t in r.topics)]
                    typed = _shared_typed(catalog, fresh, ())
                    statements = render_ddl(new, replace(options, dead_letter_topic=None), typed)
                    result = apply(conn, statements, database)
                    for statement in result.created:
                        click.echo(f"created  {statement.kind:<16} {statement.name}", err=True)
                    done.update(s.name for s in new)
                time.sleep(interval)
        except KeyboardInterrupt:
            click.echo("stopped following the shared catalog", err=True)


def _is_server(conn: Connection) -> bool:
    from yangkey.clickhouse.apply import ServerConnection  # noqa: PLC0415

    return isinstance(conn, ServerConnection)


@click.command("ingest")
@subscriptions_option
@BOOTSTRAP
@EMBEDDED.but(required=True)
@DATABASE.but(default="yangkey", show_default=True)
@FOLLOW.but(note="keep consuming.")
@CONSUMER_GROUP.but(default="yangkey-embedded")
@click.option(
    "--batch-size",
    default=50_000,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="Messages per INSERT (librdkafka hands out at most 1,000,000 at a time).",
)
@click.option("--no-dead-letter", is_flag=True, help="Do not read the dead-letter topic.")
@SHARED_CATALOG.but(
    note="also ingest the topics of every subscription in it (learned ones too), creating "
    "their tables before their first message."
)
@CATALOG_TOPIC
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@kafka_config_options("consumer")
@REPORT
@reports_errors
def ingest(
    *,
    subscriptions: str,
    yang_dirs: tuple[str, ...],
    strict: bool,
    bootstrap: str,
    embedded: str,
    database: str,
    follow: bool,
    consumer_group: str,
    batch_size: int,
    no_dead_letter: bool,
    shared_catalog: bool,
    catalog_topic: str,
    quiet: bool,
    consumer_config: tuple[str, ...],
    consumer_config_file: str | None,
    report: Path | None,
) -> None:
    """Consume the catalog topics into embedded ClickHouse (creates the tables first).

    Stops when every partition is caught up, or with --follow keeps consuming until Ctrl-C
    or SIGTERM (both commit the last batch, then exit 0). Offsets are committed only after
    the rows are stored.

    \b
    Examples:
      yangkey ingest --subscriptions subscriptions.yaml --bootstrap "$BOOTSTRAP" --embedded ch
      yangkey ingest --subscriptions subscriptions.yaml --bootstrap kafka:9092 \\
          --embedded /var/lib/yangkey/ch --follow --batch-size 50000
    """
    from yangkey.clickhouse.ingest import ingest as run_ingest  # noqa: PLC0415
    from yangkey.kafka.config import client_overrides  # noqa: PLC0415
    from yangkey.kafkalogs import quiet_librdkafka  # noqa: PLC0415

    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    overrides = client_overrides(properties_file=consumer_config_file, kv=consumer_config)
    shared = None
    if shared_catalog:
        from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415

        shared = CatalogTopic(
            bootstrap,
            catalog_topic,
            overrides=overrides,
            replication=catalog.file.internal("catalog"),
        )
    try:
        with quiet_librdkafka() as logger:
            result = run_ingest(
                catalog,
                bootstrap,
                embedded,
                follow=follow,
                group=consumer_group,
                batch_size=batch_size,
                progress=not quiet,
                database=database,
                dead_letter=not no_dead_letter,
                kafka_config={"logger": logger, **overrides},
                shared=shared,
            )
    finally:
        if shared is not None:
            shared.close()
    if report is not None:
        _ingest_report(report, embedded, database, catalog, result, quiet)
    if quiet:
        return
    if result.missing_topics:
        click.echo(f"{len(result.missing_topics)} topic(s) not found in Kafka", err=True)
    if catalog.skipped:
        click.echo(f"ingest: {skipped_summary(catalog)}", err=True)


def _ingest_report(
    path: Path, embedded: str, database: str, catalog: Catalog, result: Any, quiet: bool
) -> None:
    """``--report``: the tables ingest filled, with the run's figures on top."""
    from yangkey.clickhouse.apply import open_embedded  # noqa: PLC0415
    from yangkey.report.runs import ingest_figures, tables_report, write  # noqa: PLC0415

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
    written = write(data, path)
    if not quiet:
        click.echo(f"report: {written}", err=True)


#: What a table shows of a stored message (the line formats carry every column).
TABLE_COLUMNS = (
    "node",
    "subscription_id",
    "xpaths",
    "event_time",
    "sequence_number",
    "generation",
    "kafka_topic",
    "payload",
)


def emit_rows(rows: Sequence[dict[str, Any]], fmt: str | None, *, title: str = "") -> str:
    """Print stored messages in ``fmt`` (resolved for the terminal); the format used."""
    from yangkey.cli.output import emit_rows as emit  # noqa: PLC0415
    from yangkey.clickhouse.queries import ROW_FIELDS  # noqa: PLC0415

    used = resolve_format(fmt)
    emit(
        rows,
        used,
        columns=ROW_FIELDS,
        table_columns=TABLE_COLUMNS,
        title=title,
        truncate={"payload": 120},
    )
    return used


STATE_EPILOG = """\b
Examples:
  yangkey state --embedded ./clickhouse --node router-nyc-01
  yangkey state --clickhouse http://default@127.0.0.1:8123 -x /ietf-interfaces: --format json
  yangkey state --embedded ./clickhouse | cut -f2,4     # piped: TSV, one message per line
"""


@click.command("state", epilog=STATE_EPILOG)
@target_options
@DATABASE.but(note=DATABASE_FROM_URL)
@subscription_filter_options("keys")
@click.option("--xpath-prefix", "-x", default=None, help="Keep keys with an XPath starting so.")
@TOPIC.but(what="'s current-state table")
@LIMIT.but(what="keys", default=None, note="In message key order [default: all].")
@format_option()
@reports_errors
def state(
    *,
    clickhouse: str | None,
    embedded: str | None,
    database: str | None,
    node: str | None,
    subscription_id: int | None,
    xpath_prefix: str | None,
    topic: str | None,
    limit: int | None,
    fmt: str | None,
) -> None:
    """Current state: the latest message per key (current generation).

    \b
    Examples:
      yangkey state --node pe1.nyc --embedded ch
      yangkey state --subscription-id 1042 --xpath-prefix /ietf-interfaces: --embedded ch \\
          --format json
      yangkey state --node pe1.nyc --clickhouse http://yangkey@localhost:8123
    """
    from yangkey.clickhouse.queries import current_state  # noqa: PLC0415

    conn, url_database = _connect(clickhouse, embedded)
    try:
        rows = current_state(
            conn,
            database or url_database or "yangkey",
            node=node,
            subscription_id=subscription_id,
            xpath_prefix=xpath_prefix,
            topic=topic,
            limit=limit,
        )
    finally:
        conn.close()
    emit_rows(rows, fmt, title="current state")


HISTORY_EPILOG = """\b
Examples:
  yangkey history --embedded ./clickhouse --node router-nyc-01 --since 2026-11-20T10:00:00Z
  yangkey history --embedded ./clickhouse -k $'router-nyc-01\\n1042\\n/ietf-system:system/clock'
  # the next page: the --after token of the page's last line (stderr under a table)
  yangkey history --embedded ./clickhouse --node router-nyc-01 --after TOKEN
"""


@click.command("history", epilog=HISTORY_EPILOG)
@target_options
@DATABASE.but(note=DATABASE_FROM_URL)
@click.option(
    "--key", "-k", default=None, help="Full message key (use $'node\\nid\\nxpath' in a shell)."
)
@subscription_filter_options("messages")
@TOPIC.but(what="'s messages (its history table)")
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="Where reading starts (inclusive): an RFC 3339 time.",
)
@UNTIL.but(note="an RFC 3339 time.")
@LIMIT.but(what="messages per page", default=100, show_default=True)
@click.option("--after", default=None, help="Cursor token printed by the previous page.")
@click.option(
    "--order",
    type=click.Choice(["time", "offset"]),
    default="time",
    show_default=True,
    help="time: by event time, sequence number and key; offset: by Kafka position.",
)
@click.option(
    "--current-generation",
    is_flag=True,
    help="Only messages of the newest generation of their subscription.",
)
@format_option()
@reports_errors
def history(
    *,
    clickhouse: str | None,
    embedded: str | None,
    database: str | None,
    key: str | None,
    node: str | None,
    subscription_id: int | None,
    topic: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    after: str | None,
    order: str,
    current_generation: bool,
    fmt: str | None,
) -> None:
    """History of messages, one page at a time; a page that has a next one ends with its
    cursor (``# next page: --after TOKEN``; on stderr under a table).

    \b
    Examples:
      yangkey history --node pe1.nyc --since 2026-11-20T10:00:00Z --limit 50 --embedded ch
      yangkey history --key $'pe1.nyc\\n2001\\n/ietf-system:system/clock' --embedded ch
      yangkey history --node pe1.nyc --embedded ch --after TOKEN   # the next page
    """
    from yangkey.cli.output import emit_cursor  # noqa: PLC0415
    from yangkey.clickhouse.queries import (  # noqa: PLC0415
        check_time,
        decode_cursor,
        encode_cursor,
    )
    from yangkey.clickhouse.queries import history as read_history  # noqa: PLC0415

    if key is None and node is None and topic is None:
        raise click.UsageError("give --key, --node or --topic")
    cursor = decode_cursor(after) if after else None
    for value, what in ((since, "--since"), (until, "--until")):
        if value is not None:
            check_time(value, what)  # before anything is opened
    conn, url_database = _connect(clickhouse, embedded)
    try:
        page = read_history(
            conn,
            database or url_database or "yangkey",
            key=key,
            node=node,
            since=since,
            until=until,
            limit=limit,
            after=cursor,
            subscription_id=subscription_id,
            topic=topic,
            order=order,
            current_generation=current_generation,
        )
    finally:
        conn.close()
    used = emit_rows(page.rows, fmt, title="history")
    emit_cursor(None if page.next_cursor is None else encode_cursor(page.next_cursor), used)


SQL_EPILOG = """\b
Examples:
  yangkey sql --embedded ./clickhouse \\
      "SELECT kafka_topic, count() AS n FROM yangkey.history GROUP BY kafka_topic"
  echo "SELECT version()" | yangkey sql --clickhouse http://default@127.0.0.1:8123
  yangkey sql --embedded ./clickhouse --format csv < query.sql > result.csv
"""


@click.command("sql", epilog=SQL_EPILOG)
@target_options
@format_option()
@click.argument("query", required=False, default="-")
@reports_errors
def sql_command(
    *, clickhouse: str | None, embedded: str | None, fmt: str | None, query: str
) -> None:
    """Run one ad-hoc query (QUERY, or - / nothing: read it from stdin) and print its rows."""
    from yangkey.cli.output import emit_rows as emit  # noqa: PLC0415

    text = sys.stdin.read() if query == "-" else query
    text = text.strip().rstrip(";").strip()
    if not text:
        raise click.UsageError("give a query (an argument, or on stdin)")
    conn, _ = _connect(clickhouse, embedded)
    try:
        rows = conn.query(text)
    finally:
        conn.close()
    emit(rows, resolve_format(fmt), title="")


COMMANDS: tuple[click.Command, ...] = (ddl, ingest, state, history, sql_command)


def register(cli: click.Group) -> None:
    """Add ``ddl``, ``ingest``, ``state``, ``history`` and ``sql`` to the main CLI group."""
    for command in COMMANDS:
        cli.add_command(command)


def main() -> None:  # pragma: no cover - for `python -m yangkey.clickhouse.commands`
    group = click.Group("yangkey-clickhouse", commands=list(COMMANDS))
    group(prog_name=Path(sys.argv[0]).name)


if __name__ == "__main__":  # pragma: no cover
    main()
