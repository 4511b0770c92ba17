"""``yangkey demo``: the whole pipeline on the embedded stack, on generated data.

1. start a real Apache Kafka broker (KRaft, loopback) unless ``--bootstrap`` names one;
2. compile the subscriptions (default: the example that ships as ``yangkey.examples``, the
   file ``yangkey init`` writes), generate and apply the embedded ClickHouse DDL (chdb);
3. start the schema registry beside the broker (:mod:`yangkey.registry`, its store the
   compacted ``_schemas`` topic, served on a thread of this process) unless
   ``--schema-registry`` names one;
4. generate a realistic data set stamped relative to now (:mod:`yangkey.demo.sample`; the tables'
   TTL would drop rows with a fixed old date) and run the Spark producer job over it:
   keyed messages on derived topics (created with their partitions and compaction) carrying
   their topic's registered value schema id, rejects to the dead-letter topic;
5. ingest the derived topics and the dead-letter topic into chdb;
6. print the current state per node, messages per topic and partition, the registry's subjects
   with their ids, the dead-letter count, and check all of it against what the generator says
   a correct pipeline ends with (rows past their TTL are reported as expired, apart from rows
   lost) and the stored schema ids against the registry.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import shlex
import shutil
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from yangkey.demo.sample import Expected, generate, iter_jsonl
from yangkey.messages import XPATH_SEPARATOR
from yangkey.summary import summarize
from yangkey.topics import TopicSpec

DATABASE = "yangkey"
EXAMPLE = "subscriptions.yaml"
SCHEMA_STORE = "_schemas"


@dataclass
class DemoResult:
    records: int
    produced: dict[str, int]
    rejected: int
    ingested: dict[str, int]
    current: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    dead_letters: list[dict[str, Any]]
    expected: Expected
    ttl: dict[int, int] = field(default_factory=dict)
    """Subscription id -> seconds its rows live in the current-state table (absent: forever)."""
    problems: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    """Expected rows older than their table's TTL: dropped by ClickHouse, not lost."""
    registry: str = ""
    subjects: dict[str, int] = field(default_factory=dict)
    """``<topic>-value`` -> the id the registry holds for it (latest version)."""
    stored_ids: list[dict[str, Any]] = field(default_factory=list)
    """History rows per (topic, schema_id) as ingested from the ``schema-id`` header."""
    report: Any = None
    """The run's :class:`yangkey.report.data.Report` (the tables, the run's figures)."""
    store: Path | None = None
    """The embedded ClickHouse directory the run leaves behind, to query afterwards."""


def _event_time(text: str) -> str:
    # "2026-11-20T10:00:00.123000000Z" and "2026-11-20T10:00:00.123Z" name the same instant.
    stamp = text.rstrip("Z")
    whole, _, fraction = stamp.partition(".")
    return f"{whole}.{fraction.ljust(9, '0')[:9]}Z"


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def current_ttl(topics: Iterable[TopicSpec]) -> dict[int, int]:
    """Subscription id -> the TTL of its current-state rows, as the DDL renders it: compacted
    topics keep every key forever, others expire with the topic's retention."""
    ttl: dict[int, int] = {}
    for spec in topics:
        if spec.compaction or spec.retention_seconds <= 0:
            continue
        for sub in spec.subscription_ids:
            ttl[sub] = min(ttl.get(sub, spec.retention_seconds), spec.retention_seconds)
    return ttl


def check(result: DemoResult, now: datetime | None = None) -> tuple[list[str], list[str]]:
    """Compare the stored current state and dead letters with the generator's expectation.

    Returns (problems, expired): a missing row whose event time is older than its table's TTL
    was dropped by ClickHouse as designed and is reported apart from rows the pipeline lost.
    """
    now = now or datetime.now(UTC)
    problems: list[str] = []
    expired: list[str] = []
    stored = {
        (row["node"], int(row["subscription_id"]), XPATH_SEPARATOR.join(row["xpaths"])): row
        for row in result.current
    }
    for (node, sub, xpaths), when in sorted(result.expected.current.items()):
        row = stored.get((node, sub, xpaths))
        ttl = result.ttl.get(sub)
        if row is None and ttl is not None and _instant(when) + timedelta(seconds=ttl) <= now:
            expired.append(f"{node} {sub} {xpaths} (event time {when}, TTL {ttl} s)")
        elif row is None:
            problems.append(f"lost current state: {node} {sub} {xpaths}")
        elif _event_time(row["event_time"]) != _event_time(when):
            problems.append(
                f"stale current state for {node} {sub} {xpaths}: "
                f"{row['event_time']} instead of {when}"
            )
    extra = set(stored) - set(result.expected.current)
    problems.extend(f"unexpected current state: {key}" for key in sorted(extra))
    if len(result.dead_letters) != result.expected.bad:
        problems.append(f"{len(result.dead_letters)} dead letters instead of {result.expected.bad}")
    problems.extend(
        f"dead letter without a reason at {row['source']}"
        for row in result.dead_letters
        if not row["error"]
    )
    problems.extend(schema_id_problems(result))
    return problems, expired


def schema_id_problems(result: DemoResult) -> list[str]:
    """Stored messages whose ``schema-id`` is not the registry's id of their topic's subject."""
    from yangkey.registry.client import subject_for  # noqa: PLC0415

    problems = []
    for row in result.stored_ids:
        subject = subject_for(row["topic"])
        wanted = result.subjects.get(subject)
        if row["schema_id"] is None or row["schema_id"] != wanted:
            problems.append(
                f"{row['messages']} message(s) on {row['topic']} carry schema id"
                f" {row['schema_id']}; the registry has {wanted} for {subject}"
            )
    return problems


def _with_prefix(subscriptions: Path, prefix: str, workdir: Path) -> Path:
    import yaml  # noqa: PLC0415

    document = yaml.safe_load(subscriptions.read_text(encoding="utf-8"))
    document["organisation_prefix"] = prefix
    document["dead_letter_topic"] = f"{prefix}-dead-letter"
    workdir.mkdir(parents=True, exist_ok=True)
    copy = workdir / subscriptions.name
    copy.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return copy


@contextlib.contextmanager
def _broker(bootstrap: str | None, console: Console) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from yangkey.kafka.broker import EmbeddedKafka  # noqa: PLC0415 - edge, imported on use
    from yangkey.kafka.install import (  # noqa: PLC0415
        KAFKA_VERSION,
        install_kafka,
        installed_jars,
        terminal_progress,
    )

    if installed_jars() is None and not os.environ.get("KAFKA_HOME"):
        with terminal_progress(f"Kafka {KAFKA_VERSION}") as progress:
            install_kafka(progress=progress)
    with console.status("starting Apache Kafka (KRaft, 127.0.0.1)…"):
        broker = EmbeddedKafka(die_with_parent=True).start()
    console.print(f"[green]✓[/green] Kafka broker at {broker.bootstrap} (pid {broker.pid})")
    try:
        yield broker.bootstrap
    finally:
        broker.stop()
        console.print("[green]✓[/green] Kafka broker stopped")


@contextlib.contextmanager
def _registry(url: str | None, bootstrap: str, console: Console) -> Iterator[str]:
    if url:
        yield url
        return
    from yangkey.registry.running import running_registry  # noqa: PLC0415

    # Quiet like the Spark job's producers: a fresh broker's first idempotent producer logs a
    # harmless "coordinator load in progress" retry.
    with running_registry(bootstrap, SCHEMA_STORE, overrides={"log_level": 3}) as server:
        console.print(
            f"[green]✓[/green] schema registry at {server.url} (store: compacted topic "
            f"{SCHEMA_STORE}, {len(server.registry.store.subject_names())} subjects found)"
        )
        yield server.url


def registry_subjects(url: str, topics: Iterable[str]) -> dict[str, int]:
    """``{subject: id}`` of the topics' value subjects, read back from the registry."""
    from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: PLC0415

    from yangkey.registry.client import RegistrySettings, subject_for  # noqa: PLC0415

    settings = RegistrySettings.from_options(url)
    client = SchemaRegistryClient({"url": url, **dict(settings.config)})
    present = set(client.get_subjects())
    return {
        subject: int(client.get_latest_version(subject).schema_id or 0)
        for subject in sorted(subject_for(topic) for topic in topics)
        if subject in present
    }


def run_demo(
    subscriptions: Path,
    workdir: Path,
    *,
    bootstrap: str | None = None,
    nodes: int = 4,
    interfaces: int = 6,
    rounds: int = 3,
    master: str = "local[*]",
    console: Console | None = None,
    spark: Any = None,
    subscription_topics_prefix: str | None = None,
    schema_registry: str | None = None,
) -> DemoResult:
    """Run the pipeline; ``spark`` reuses a running SparkSession (left running), and
    ``subscription_topics_prefix`` replaces the file's organisation prefix (tests use it to get
    topics of their own on a shared broker); ``schema_registry`` is a registry to use instead of
    starting one beside the broker."""
    from yangkey.catalog import load_catalog  # noqa: PLC0415
    from yangkey.clickhouse.apply import apply  # noqa: PLC0415
    from yangkey.clickhouse.connection import open_embedded  # noqa: PLC0415
    from yangkey.clickhouse.ddl import DdlOptions, render_catalog  # noqa: PLC0415
    from yangkey.clickhouse.ingest import ingest  # noqa: PLC0415
    from yangkey.clickhouse.progress import IngestProgress  # noqa: PLC0415
    from yangkey.clickhouse.queries import current_state  # noqa: PLC0415
    from yangkey.registry.client import RegistrySettings  # noqa: PLC0415
    from yangkey.report.runs import ingest_figures, run_figures, tables_report  # noqa: PLC0415
    from yangkey.spark.config import Delivery, JobConfig, Source, SparkRuntime  # noqa: PLC0415
    from yangkey.spark.job import run  # noqa: PLC0415

    console = console or Console(stderr=True)
    if subscription_topics_prefix is not None:
        subscriptions = _with_prefix(subscriptions, subscription_topics_prefix, workdir)
    catalog = load_catalog(subscriptions)
    console.print(
        f"[green]✓[/green] compiled {len(catalog.entries)} subscriptions into "
        f"{len(catalog.topics)} topics"
    )
    data = generate(nodes=nodes, interfaces=interfaces, rounds=rounds)
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = workdir / "notifications.jsonl"
    with inputs.open("wb") as out:
        out.writelines(iter_jsonl(data.records))
    console.print(
        f"[green]✓[/green] generated {len(data.records)} notifications from {nodes} nodes "
        f"({data.expected.bad} bad) in {inputs}"
    )
    store = workdir / "clickhouse"
    shutil.rmtree(store, ignore_errors=True)
    with (
        _broker(bootstrap, console) as servers,
        _registry(schema_registry, servers, console) as registry_url,
    ):
        connection = open_embedded(store)
        try:
            statements = render_catalog(catalog, DdlOptions(database=DATABASE, mode="embedded"))
            applied = apply(connection, statements, DATABASE)
            console.print(
                f"[green]✓[/green] applied {applied.total} DDL statements to chdb at {store}"
            )
            with console.status("Spark producer job: deriving keys and topics…"):
                summary = run(
                    spark=spark,
                    config=JobConfig(
                        subscriptions=str(subscriptions),
                        bootstrap=servers,
                        source=Source(inputs=(str(inputs),)),
                        spark=SparkRuntime(master=master),
                        registry=RegistrySettings.from_options(registry_url),
                        delivery=Delivery(
                            create_topics=True,
                            # The first transactional producer on a fresh broker logs a
                            # harmless "coordinator load in progress" retry; keep the demo
                            # output clean.
                            producer_overrides={"log_level": 3},
                        ),
                    ),
                )
            produced = dict(summary.tally.produced)
            subjects = registry_subjects(registry_url, (spec.name for spec in catalog.topics))
            console.print(
                f"[green]✓[/green] Spark job: {summary.tally.records} notifications → "
                f"{summary.tally.messages} keyed messages, {summary.tally.rejections} to "
                f"{catalog.dead_letter_topic} ({summary.seconds:.1f} s)"
            )
            ingested = ingest(
                catalog,
                servers,
                store,
                connection=connection,
                database=DATABASE,
                events=IngestProgress(enabled=console.is_terminal),
            )
            console.print(
                f"[green]✓[/green] ingested {ingested.total} messages into ClickHouse "
                f"({ingested.total_errors} to the errors table)"
            )
            current = current_state(connection, DATABASE)
            partitions = connection.query(
                f"SELECT kafka_topic AS topic, kafka_partition AS partition, count() AS messages "
                f"FROM `{DATABASE}`.`history` GROUP BY topic, partition ORDER BY topic, partition"
            )
            dead_letters = connection.query(
                f"SELECT source, error_kind, error FROM `{DATABASE}`.`errors` "
                "WHERE kafka_topic = {topic:String} ORDER BY kafka_partition, kafka_offset",
                {"topic": catalog.dead_letter_topic},
            )
            stored_ids = connection.query(
                f"SELECT kafka_topic AS topic, schema_id, count() AS messages "
                f"FROM `{DATABASE}`.`history` GROUP BY topic, schema_id ORDER BY topic, schema_id"
            )
            report = tables_report(
                connection,
                DATABASE,
                title="yangkey demo",
                catalog=catalog,
                figures=run_figures(summary.to_dict()) + ingest_figures(ingested),
            )
        finally:
            connection.close()
    result = DemoResult(
        records=len(data.records),
        produced=produced,
        rejected=summary.tally.rejections,
        ingested=dict(ingested.messages),
        current=current,
        partitions=partitions,
        dead_letters=dead_letters,
        expected=data.expected,
        ttl=current_ttl(catalog.topics),
        registry=RegistrySettings.from_options(registry_url).shown,
        subjects=subjects,
        stored_ids=stored_ids,
        store=store,
        report=report,
    )
    result.problems, result.expired = check(result)
    return result


def show(result: DemoResult, console: Console) -> None:
    by_node: dict[str, list[dict[str, Any]]] = {}
    for row in result.current:
        by_node.setdefault(row["node"], []).append(row)
    for node, rows in sorted(by_node.items()):
        table = Table(
            "sub",
            "concrete XPaths (message key line 3)",
            "event time",
            "value",
            title=f"current state of {node}",
            title_justify="left",
        )
        for row in rows:
            table.add_row(
                str(row["subscription_id"]),
                Text("\n".join(row["xpaths"])),
                row["event_time"],
                Text(summarize(row["payload"])),
            )
        console.print(table)
    table = Table(
        "topic",
        "partition",
        "messages",
        title="history per topic and partition",
        title_justify="left",
    )
    for row in result.partitions:
        table.add_row(row["topic"], str(row["partition"]), str(row["messages"]))
    console.print(table)
    table = Table(
        "subject",
        "schema id",
        "messages with it",
        title=f"schema registry {result.registry}: value subjects (header schema-id)",
        title_justify="left",
    )
    carried: dict[tuple[str, int | None], int] = {}
    for row in result.stored_ids:
        carried[(f"{row['topic']}-value", row["schema_id"])] = int(row["messages"])
    for subject, schema_id in result.subjects.items():
        table.add_row(subject, str(schema_id), str(carried.get((subject, schema_id), 0)))
    console.print(table)
    table = Table(
        "source position",
        "kind",
        "reason",
        title=f"dead letters: {len(result.dead_letters)}",
        title_justify="left",
    )
    for row in result.dead_letters:
        table.add_row(Text(row["source"]), row["error_kind"], Text(row["error"]))
    console.print(table)
    for line in result.expired:
        console.print(Text("- expired by TTL, not lost: ", style="yellow") + Text(line))
    if result.problems:
        for problem in result.problems:
            console.print(Text("✗ ", style="red") + Text(problem))
    else:
        kept = len(result.expected.current) - len(result.expired)
        console.print(
            f"[green]✓[/green] current state matches the generator for all {kept} "
            "keys (on-change updates, deletes and an older "
            f"replay included); all {result.expected.bad} bad notifications reached the "
            "dead-letter topic with their reason"
        )


def invoked_as(argv0: str | None = None) -> str:
    """How to run this yangkey again from a shell: ``yangkey`` when that name on PATH is this
    program, else the path it was started by (``make demo`` runs ``.venv/bin/yangkey``, which
    no PATH names), so that the commands the demo prints work when pasted."""
    program = argv0 if argv0 is not None else sys.argv[0]
    on_path = shutil.which("yangkey")
    if "/" not in program:
        return "yangkey"
    if on_path is not None and Path(on_path).resolve() == Path(program).resolve():
        return "yangkey"
    return shlex.quote(program)


def query_commands(store: Path, node: str, program: str = "yangkey") -> list[str]:
    """The shell commands that query what a demo left in ``store`` (its chdb directory):
    current state and a page of history of ``node``, and messages per topic in SQL, run by
    ``program`` (:func:`invoked_as`)."""
    where = shlex.quote(str(store))
    who = shlex.quote(node)
    per_topic = (
        f"SELECT kafka_topic, count() AS messages FROM `{DATABASE}`.`history`"
        " GROUP BY kafka_topic ORDER BY kafka_topic"
    )
    return [
        f"{program} state --embedded {where} --node {who}",
        f"{program} history --embedded {where} --node {who} --limit 5",
        f"{program} sql --embedded {where} {shlex.quote(per_topic)}",
    ]


def show_where(result: DemoResult, workdir: Path, console: Console) -> None:
    """Where the run's data stays (the broker is gone, the chdb directory is not) and the
    exact commands that query it."""
    if result.store is None or not result.current:
        return
    node = min(row["node"] for row in result.current)
    console.print(
        Text(
            f"your data: ClickHouse (chdb) in {result.store}, the notifications in"
            f" {workdir / 'notifications.jsonl'}; query it (any time, from this directory):"
        ),
        soft_wrap=True,
    )
    for command in query_commands(result.store, node, invoked_as()):
        # whole lines, never wrapped: they are copied into a shell
        console.print(Text(f"  {command}"), soft_wrap=True)


@contextlib.contextmanager
def example_subscriptions() -> Iterator[Path]:
    """The example subscriptions file that ships in the package, as a path on disk."""
    resource = importlib.resources.files("yangkey.examples").joinpath(EXAMPLE)
    with importlib.resources.as_file(resource) as path:
        yield path
