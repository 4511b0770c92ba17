"""``click`` commands of the ClickHouse edge: ``ddl generate|apply``, ``ingest``, and (from
:mod:`yangkey.clickhouse.query_commands`) ``state``, ``history``, ``sql``. Register them on the
main CLI with :func:`register` (or ``cli.add_command`` on each of :data:`COMMANDS`).

Errors are raised as :class:`yangkey.errors.YangkeyError` subclasses for the main CLI to print.
A server is given as ``--clickhouse http[s]://user@host:port[/database]``; the password is read
from ``CLICKHOUSE_PASSWORD`` only (never from the command line, never printed).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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
    QUIET,
    REPORT,
    SHARED_CATALOG,
    SHARED_CATALOG_IMPLIED,
    kafka_config_options,
    shared_catalog_servers,
    subscriptions_option,
    subscriptions_options,
    target_options,
)
from yangkey.cli.options import (
    quiet as quiet_globally,
)
from yangkey.cli.reporting import load_catalog, reports_errors, skipped_summary
from yangkey.clickhouse.query_commands import UINT64_MAX, history, sql_command, state
from yangkey.clickhouse.targets import connected
from yangkey.errors import ConfigError

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.clickhouse.ddl import DdlOptions, Mode
    from yangkey.kafka.catalog_topic import CatalogTopic
    from yangkey.topics import TopicSpec

__all__ = ["COMMANDS", "ddl", "history", "ingest", "register", "sql_command", "state"]

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_FILES = {"server": "server.sql", "embedded": "embedded.sql"}


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
    attrs={"type": click.IntRange(1, UINT64_MAX), "default": 1, "show_default": True},
)
CURRENT_STATE = Declaration(
    ("--current-state",),
    "current_state",
    "Which topics get a current-state table.",
    attrs={"type": click.Choice(["all", "compacted"]), "default": "all", "show_default": True},
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
    from yangkey.clickhouse.shared_topics import SharedTopics  # noqa: PLC0415
    from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415

    shared = shared_catalog_servers(shared_catalog, bootstrap)
    if subscriptions is None and shared is None:
        raise click.UsageError("give --subscriptions, --shared-catalog or both")
    catalog = (
        load_catalog(subscriptions, yang_dirs, strict=strict) if subscriptions is not None else None
    )
    summary = skipped_summary(catalog) if catalog is not None else ""
    follower: SharedTopics | None = None
    if shared is not None:
        with quiet_librdkafka(), _catalog_topic(catalog, shared, catalog_topic) as reader:
            follower = SharedTopics.of(reader, catalog, yang_dirs=yang_dirs, warn=_warn)
            topics = follower.merge()
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
        if follower is None:
            assert catalog is not None
            statements = render_catalog(catalog, options)
        else:
            dead_letter = replace(options, dead_letter_topic=_dead_letter_topic(catalog))
            statements = render_ddl(topics, dead_letter, follower.typed)
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


def _dead_letter_topic(catalog: Catalog | None) -> str:
    from yangkey.config import SubscriptionsFile  # noqa: PLC0415

    return (
        catalog.dead_letter_topic if catalog is not None else SubscriptionsFile().dead_letter_topic
    )


def _catalog_topic(
    catalog: Catalog | None, bootstrap: str, topic: str, *, create: bool = False
) -> CatalogTopic:
    from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415

    replication = catalog.file.internal("catalog") if catalog is not None else (None, None)
    return CatalogTopic(bootstrap, topic, create=create, replication=replication)


def _warn(warning: str) -> None:
    click.echo(f"warning: {warning}", err=True)


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
    from yangkey.clickhouse.connection import ServerConnection  # noqa: PLC0415
    from yangkey.clickhouse.ddl import render_catalog, render_ddl  # noqa: PLC0415
    from yangkey.clickhouse.shared_topics import SharedTopics  # noqa: PLC0415
    from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415

    shared = shared_catalog_servers(shared_catalog, bootstrap)
    if follow and shared is None:
        raise click.UsageError("--follow follows the shared catalog: give --shared-catalog")
    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)

    def report(result: ApplyResult, where: str) -> None:
        if quiet_globally():
            return  # `yangkey -q ddl apply`: errors only
        for statement in result.existing:
            click.echo(f"exists   {statement.kind:<16} {statement.name}", err=True)
        for statement in result.created:
            click.echo(f"created  {statement.kind:<16} {statement.name}", err=True)
        click.echo(
            f"{len(result.created)} created, {len(result.existing)} already existed ({where})",
            err=True,
        )
        if catalog.skipped:
            click.echo(skipped_summary(catalog), err=True)

    with connected(clickhouse, embedded, database, create=True) as (conn, db):
        options = _ddl_options(
            mode="server" if isinstance(conn, ServerConnection) else "embedded",
            database=db,
            cluster=cluster,
            kafka_collection=kafka_collection,
            consumer_group=consumer_group,
            num_consumers=num_consumers,
            current_state=current_state,
        )
        if shared is None:
            report(apply(conn, render_catalog(catalog, options), db), conn.description)
            return
        # Following, it creates the catalog topic if it is the first to need it.
        with (
            quiet_librdkafka(),
            _catalog_topic(catalog, shared, catalog_topic, create=follow) as reader,
        ):
            follower = SharedTopics.of(reader, catalog, yang_dirs=yang_dirs, warn=_warn)
            with_dead_letter = replace(options, dead_letter_topic=catalog.dead_letter_topic)
            statements = render_ddl(follower.merge(), with_dead_letter, follower.typed)
            report(apply(conn, statements, db), conn.description)
            if not follow:
                return

            def create(topics: list[TopicSpec]) -> None:
                """The tables of each topic the shared catalog gains."""
                only = replace(options, dead_letter_topic=None)
                for statement in apply(conn, render_ddl(topics, only, follower.typed), db).created:
                    click.echo(f"created  {statement.kind:<16} {statement.name}", err=True)

            click.echo(f"following kafka://{shared}/{catalog_topic} (Ctrl-C stops)", err=True)
            try:
                follower.follow(create)
            except KeyboardInterrupt:
                click.echo("stopped following the shared catalog", err=True)


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
@QUIET
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
    from yangkey.clickhouse.progress import IngestProgress  # noqa: PLC0415
    from yangkey.kafka.config import client_overrides  # noqa: PLC0415
    from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415
    from yangkey.kafka.process import require_listening  # noqa: PLC0415

    quiet = quiet or quiet_globally()  # `yangkey -q ingest …` as `ingest -q`
    require_listening(bootstrap)  # a dead broker in a second, not after the metadata timeout
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
                events=IngestProgress(enabled=not quiet),
                database=database,
                dead_letter=not no_dead_letter,
                kafka_config={"logger": logger, **overrides},
                shared=shared,
            )
    finally:
        if shared is not None:
            shared.close()
    if report is not None:
        from yangkey.report.runs import write_ingest_report  # noqa: PLC0415

        written = write_ingest_report(report, embedded, database, catalog, result)
        if not quiet:
            click.echo(f"report: {written}", err=True)
    if quiet:
        return
    if result.missing_topics:
        click.echo(f"{len(result.missing_topics)} topic(s) not found in Kafka", err=True)
    if catalog.skipped:
        click.echo(f"ingest: {skipped_summary(catalog)}", err=True)


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
