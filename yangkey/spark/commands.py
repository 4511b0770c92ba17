"""``yangkey produce``: the Spark producer job from the command line.

The same command is the entry point of ``spark_jobs/produce_keyed.py`` under spark-submit.
"""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
import orjson
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from yangkey.config import parse_duration
from yangkey.errors import ConfigError, YangkeyError
from yangkey.kafka.config import client_overrides, parse_kv
from yangkey.options import (
    bootstrap_option,
    format_option,
    kafka_config_options,
    resolve_format,
    schema_registry_option,
    subscriptions_option,
)
from yangkey.registry.client import RegistrySettings
from yangkey.reporting import fail
from yangkey.spark.config import DEFAULT_MAX_RECORDS_PER_TASK, JobConfig
from yangkey.spark.job import run
from yangkey.spark.planning import Prepared, prepare
from yangkey.spark.progress import Summary, every
from yangkey.spark.stopping import Stopper

PIPED_PROGRESS_EVERY = 5.0
"""Seconds between progress lines when stderr is not a terminal."""
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str) -> int:
    """``64m`` / ``1g`` / ``4096`` -> bytes."""
    match = _SIZE.match(text)
    if not match:
        raise click.BadParameter(f"{text!r}: use a number of bytes, optionally with k, m or g")
    unit = (match.group(2) or "").lower()[:1]
    return int(match.group(1)) * _UNITS[unit]


EPILOG = """\b
Examples:
  # JSON-lines files -> derived topics, creating missing topics first
  yangkey produce --subscriptions examples/subscriptions.yaml \\
      --input dumps/ --bootstrap 127.0.0.1:9092 --create-topics

\b
  # the raw topic a YANG-Push receiver fills, from a point in time up to now
  yangkey produce --subscriptions subs.yaml --input kafka://yang-push-raw \\
      --bootstrap kafka:9092 --from 2026-11-20T10:00:00Z --until latest

\b
  # continuously, on a cluster, with checkpoints
  yangkey produce --subscriptions subs.yaml --input kafka://yang-push-raw \\
      --bootstrap kafka:9092 --stream --checkpoint hdfs:///yangkey/ckpt \\
      --master spark://master:7077 --trigger-interval 10s

\b
  # on a standalone cluster, shipping this virtualenv to the executors (spark.archives);
  # without --ship-env a preflight task checks that they can import yangkey
  yangkey produce --subscriptions subs.yaml --input hdfs:///raw/ --bootstrap kafka:9092 \\
      --master spark://master:7077 --ship-env

\b
  # spark-submit takes the same options
  spark-submit --master yarn spark_jobs/produce_keyed.py --subscriptions subs.yaml ...

\b
  # what would be produced, without Kafka
  yangkey produce --subscriptions subs.yaml --input dumps/ --dry-run

\b
Delivery: by default every Spark task writes in one Kafka transaction (transactional.id
= PREFIX-RUNID-PARTITION) and records a commit marker with it, so a retried, speculative
or re-run task never makes duplicates visible to read_committed consumers. A broker outage
longer than message.timeout.ms (default 120 s) fails the task, and after Spark's retries
the job, with an error: nothing is dropped silently. Rejected notifications go to the
catalog's dead-letter topic with headers yangkey-error, yangkey-error-kind, yangkey-source.

\b
Kafka settings come from, later wins: yangkey's defaults (murmur2_random partitioner,
idempotence, acks=all), --producer-config-file, YANGKEY_KAFKA_<KEY> environment variables
(YANGKEY_KAFKA_SASL_PASSWORD -> sasl.password), --producer-config KEY=VALUE.
"""


def _field(convert: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback that turns an option's value into its JobConfig field; a value it
    cannot convert is a usage error, reported before anything starts."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            return convert(value)
        except YangkeyError as error:
            raise click.BadParameter(error.reason) from None
        except ValueError as error:
            raise click.BadParameter(str(error)) from None

    return callback


SUMMARY_FORMATS = ("table", "json")


def _kv_field(name: str, dest: str, help_text: str) -> Callable[[Any], Any]:
    return click.option(
        name,
        dest,
        multiple=True,
        metavar="KEY=VALUE",
        callback=_field(lambda items: parse_kv(items, source=name)),
        help=help_text,
    )


def _duration(text: str | None) -> str | None:
    if text is not None:
        parse_duration(text)
    return text


@click.command(epilog=EPILOG, context_settings={"max_content_width": 100})
@subscriptions_option
@click.option(
    "--input",
    "inputs",
    required=True,
    multiple=True,
    metavar="PATH|URI|kafka://TOPIC",
    help="A JSON-lines / XML file, a directory of them, a Hadoop URI (hdfs://, s3a://),"
    " or kafka://TOPIC for the raw topic. Repeatable (batch only).",
)
@bootstrap_option(
    required=False, help_text="Kafka bootstrap servers to produce to (and to read kafka:// from)."
)
@click.option(
    "--master",
    metavar="URL",
    help="Spark master: local[*] (default), local[4], spark://host:7077, yarn, k8s://…",
)
@click.option(
    "--ship-env",
    is_flag=True,
    help="Cluster masters: pack this virtualenv (venv-pack, cached) into spark.archives and"
    " run the executors' Python from it. Without it, executors need yangkey installed at"
    " PYSPARK_PYTHON's path, which a preflight task checks.",
)
@kafka_config_options("producer", name="producer_config")
@kafka_config_options("consumer", short=False, name="consumer_config")
@click.option(
    "--source-bootstrap",
    metavar="HOST:PORT",
    help="Bootstrap servers of the raw topic when it lives on another cluster.",
)
@click.option(
    "--from",
    "start",
    default="earliest",
    show_default=True,
    metavar="POSITION",
    help="Where to start reading kafka:// inputs: earliest, latest, an offset,"
    " PARTITION:OFFSET pairs (0:120,1:98), an ISO-8601 time or @EPOCH_MS. With"
    " --stream only used when the checkpoint is new.",
)
@click.option(
    "--until",
    default="latest",
    show_default=True,
    metavar="POSITION",
    help="Where batch reads of kafka:// inputs stop (exclusive), same forms as --from.",
)
@click.option(
    "--no-keys",
    "keys",
    is_flag=True,
    callback=_field(lambda off: False if off else None),
    help="Producer knob 1 off: no message keys (round robin over partitions).",
)
@click.option(
    "--single-topic",
    metavar="NAME",
    help="Producer knob 2 off: every message to this one topic instead of a topic per"
    " subscription branch. (Knob 3, the subscription-type level, is topic_policy"
    ".type_level in the subscriptions file.)",
)
@click.option(
    "--no-learn",
    "learn",
    is_flag=True,
    callback=_field(lambda off: not off),
    help="Reject notifications of subscriptions missing from the file instead of"
    " learning them from telemetry-message yang-push-subscription metadata.",
)
@click.option(
    "--shared-catalog",
    is_flag=True,
    help="Write the subscriptions, learned ones too, through the shared catalog topic, and"
    " learn from it the ones other producers learned (yangkey ingest --shared-catalog"
    " creates their tables).",
)
@click.option(
    "--catalog-topic",
    default="_yangkey_catalog",
    show_default=True,
    envvar="YANGKEY_CATALOG_TOPIC",
    help="The shared catalog's compacted topic.",
)
@click.option(
    "--instance-feed",
    is_flag=True,
    help="Add header yangkey-instances (one typed row per instance) to every message, for a"
    " ClickHouse server's instance tables fed by its Kafka engine. Costs the producer ~2.5x;"
    " yangkey ingest (embedded) computes the same rows itself.",
)
@click.option(
    "--node",
    "default_node",
    metavar="NAME",
    help="Node name for notifications that carry neither hostname nor manifest name.",
)
@schema_registry_option(
    required=False,
    name="schema_registry",
    help_text="A Confluent-compatible schema registry (basic auth: http://user:pass@host:8081)."
    " Each derived topic's value schema is registered (or looked up) under <topic>-value"
    " before any message is sent (not with --dry-run), and every message carries its id in"
    " header schema-id.",
)
@_kv_field(
    "--schema-registry-config",
    "schema_registry_config",
    "Schema registry client setting, e.g. ssl.ca.location=ca.pem (secrets better as env"
    " YANGKEY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO=user:pass). Repeatable.",
)
@click.option(
    "--create-topics",
    is_flag=True,
    help="Create missing topics first: catalog partitions and retention,"
    " cleanup.policy=compact for current-state topics, plus the dead-letter topic.",
)
@_kv_field(
    "--topic-config",
    "topic_configs",
    "Extra config for topics that --create-topics creates, e.g. min.insync.replicas=2. Repeatable.",
)
@click.option(
    "--delivery",
    type=click.Choice(["exactly-once", "at-least-once"]),
    default="exactly-once",
    show_default=True,
    help="exactly-once: one transaction per task plus commit markers (consumers use"
    " isolation.level=read_committed); at-least-once: idempotent producer only.",
)
@click.option(
    "--run-id",
    metavar="ID",
    help="Names this run's transactional ids and commit markers (letters, digits, _ and ."
    "). A run id that has committed tasks resumes: exactly the input its markers do not"
    " cover is produced (new raw-topic offsets, new file bytes); input that changed under a"
    " committed task is an error. Default: derived from the inputs, subscriptions, broker"
    " and knobs (batch: the same command again resumes), or the checkpoint's identity"
    " (stream).",
)
@click.option(
    "--transactional-id-prefix",
    "transactional_prefix",
    default="yangkey",
    show_default=True,
    help="Prefix of transactional ids and marker groups (for broker ACLs).",
)
@click.option(
    "--layout",
    type=click.Choice(["auto", "lines", "document"]),
    default="auto",
    show_default=True,
    help="Files: one notification per line (JSON lines, XML per line) or one per file;"
    " auto looks at the first line.",
)
@click.option(
    "--split-size",
    default="64m",
    show_default=True,
    metavar="SIZE",
    callback=_field(parse_size),
    help="Local files bigger than this are read by several tasks (cut at line starts).",
)
@click.option(
    "--max-records-per-task",
    type=click.IntRange(1),
    default=DEFAULT_MAX_RECORDS_PER_TASK,
    show_default=True,
    help="kafka:// inputs: offsets per Spark task (one transaction each).",
)
@click.option(
    "--stream",
    is_flag=True,
    help="Run continuously (Structured Streaming, foreachBatch into the same sink).",
)
@click.option("--checkpoint", metavar="DIR", help="Checkpoint directory (required with --stream).")
@click.option(
    "--trigger-interval",
    metavar="DURATION",
    callback=_field(_duration),
    help="--stream: micro-batch interval, e.g. 10s. Default: as fast as possible.",
)
@click.option(
    "--available-now", is_flag=True, help="--stream: process what is there now, then stop."
)
@click.option(
    "--max-per-trigger",
    type=click.IntRange(1),
    metavar="N",
    help="--stream: at most N Kafka records (or N files) per micro-batch.",
)
@click.option(
    "--outage-budget",
    default="120s",
    show_default=True,
    metavar="DURATION",
    callback=_field(lambda text: float(parse_duration(text))),
    help="kafka:// inputs: how long metadata and offset look-ups retry (with backoff) while"
    " the broker is unreachable before the run fails.",
)
@click.option(
    "--stale-after",
    default="30s",
    show_default=True,
    metavar="DURATION",
    callback=_field(lambda text: float(parse_duration(text))),
    help="Exactly-once: another run under the same --transactional-id-prefix whose driver"
    " has not beaten for this long counts as crashed, and its open transactions are aborted"
    " at start (a live run is left alone).",
)
@click.option(
    "--restart-on-failure",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    metavar="N",
    help="--stream: restart the query from its checkpoint up to N times after a failure"
    " (broker outage beyond the budget, a lost executor); configuration and input errors"
    " are never retried.",
)
@click.option(
    "--dry-run", is_flag=True, help="Derive keys and topics and print the counts; produce nothing."
)
@_kv_field(
    "--spark-conf", "spark_conf", "Any Spark setting, e.g. spark.executor.memory=4g. Repeatable."
)
@click.option(
    "--spark-log-level",
    default="ERROR",
    show_default=True,
    type=click.Choice(
        ["ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"], case_sensitive=False
    ),
    help="Log level of Spark's own (log4j) logging on stderr.",
)
@format_option(SUMMARY_FORMATS)
def produce(fmt: str | None, **options: Any) -> None:
    """Read raw YANG-Push notifications, derive message keys and topics, produce to Kafka.

    Runs on Spark: local[*] by default, any cluster with --master (or under spark-submit).
    Each input notification becomes one keyed message per matching subscription branch, on
    the topic derived from the branch's schema path; rejected input goes to the dead-letter
    topic with its raw bytes, the reason and its position (file:line or
    kafka://topic@partition:offset). Prints the counts per topic at the end.
    """
    with Stopper().installed() as stopper:
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        prepared: Prepared | None = None
        try:
            config = job_config(options)
            if not config.bootstrap and not config.dry_run:
                raise click.UsageError("--bootstrap is required (or use --dry-run)")
            if config.stream and not config.checkpoint:
                raise click.UsageError("--stream needs --checkpoint DIR")
            if config.trigger_interval and not config.stream:
                raise ConfigError("--trigger-interval needs --stream", source="produce")
            if config.restart_on_failure and not config.stream:
                raise ConfigError("--restart-on-failure needs --stream", source="produce")
            prepared = prepare(config)
            if config.ship_env:
                _ship_env(config, prepared, err)
            if not config.dry_run:
                err.print(_start_line(prepared), markup=False, highlight=False)
            if prepared.sink.schema_registry is not None:
                err.print(
                    f"schema registry {prepared.sink.schema_registry.shown}:"
                    f" {len(prepared.sink.schema_ids)} subject(s) <topic>-value registered or"
                    " found",
                    markup=False,
                    highlight=False,
                )
            for note in prepared.notes:
                err.print(note, markup=False, highlight=False)
            for warning in prepared.warnings:
                err.print(f"[yellow]warning:[/yellow] {escape(warning)}")
            if prepared.created_topics:
                err.print(
                    f"created {len(prepared.created_topics)} topic(s): "
                    + ", ".join(prepared.created_topics)
                )

            def on_restart(error: YangkeyError, attempt: int) -> None:
                err.print(
                    f"warning: the stream failed ({error.message()}); restart {attempt} of"
                    f" {config.restart_on_failure} from the checkpoint",
                    markup=False,
                    highlight=False,
                )

            def on_batch(batch_id: int, part: Summary) -> None:
                err.print(
                    f"batch {batch_id}: {part.tally.records:,} records ->"
                    f" {part.tally.messages:,} messages, {part.tally.rejections:,} rejected"
                )

            if err.is_terminal:
                with err.status("starting Spark…") as status:
                    summary = run(
                        config,
                        prepared=prepared,
                        on_batch=on_batch,
                        on_restart=on_restart,
                        update=status.update,
                        stopper=stopper,
                    )
            else:
                # A pipe or a log gets a progress line every few seconds (a stream has its
                # batch lines instead).
                def line(text: str) -> None:
                    err.print(text, markup=False, highlight=False)

                if not config.stream:
                    line("starting Spark…")
                summary = run(
                    config,
                    prepared=prepared,
                    on_batch=on_batch,
                    on_restart=on_restart,
                    update=None if config.stream else every(PIPED_PROGRESS_EVERY, line),
                    stopper=stopper,
                )
        except YangkeyError as error:
            if stopper.signum is None:
                fail(error, _resume_hint(prepared))
        except KeyboardInterrupt:
            stopper.signum = stopper.signum or signal.SIGINT
        if stopper.signum is not None:
            err.print(f"interrupted{_resume_hint(prepared)}", markup=False, highlight=False)
            sys.exit(stopper.exit_code)
        if resolve_format(fmt, SUMMARY_FORMATS) == "json":
            click.echo(orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2).decode())
            return
        print_summary(summary, Console())


def job_config(options: dict[str, Any]) -> JobConfig:
    """``produce``'s options as a JobConfig: each option's destination is a field name and its
    callback converts the value, except the Kafka client settings, where a properties file
    and KEY=VALUE options (later wins) make one field each."""
    fields = dict(options)
    fields.pop("profile", None)  # consumed by the profile's callback
    for client in ("producer", "consumer"):
        fields[f"{client}_overrides"] = client_overrides(
            properties_file=fields.pop(f"{client}_config_file"),
            kv=fields.pop(f"{client}_config"),
        )
    url, registry_config = fields.pop("schema_registry"), fields.pop("schema_registry_config")
    fields["schema_registry"] = RegistrySettings.from_options(url, registry_config) if url else None
    if not fields.pop("shared_catalog"):
        fields["catalog_topic"] = None
    return JobConfig(**fields)


def _start_line(prepared: Prepared) -> str:
    sink = prepared.sink
    if prepared.stream is not None:
        state = "new checkpoint" if prepared.stream.created else "resuming from its checkpoint"
        return f"run {sink.run_id} (stream, {state})"
    if not sink.exactly_once:
        return f"run {sink.run_id} (at-least-once: no resume)"
    if prepared.committed or prepared.fenced:
        fenced = (
            f", {prepared.fenced} open transaction(s) of an interrupted attempt aborted"
            if prepared.fenced
            else ""
        )
        return (
            f"run {sink.run_id}: resuming, {len(prepared.committed)} task(s) already"
            f" committed, {len(prepared.plan)} to run{fenced}"
        )
    return f"run {sink.run_id}"


def _resume_hint(prepared: Prepared | None) -> str:
    if prepared is None or prepared.sink.dry_run or not prepared.sink.exactly_once:
        return ""
    if prepared.stream is not None:
        return f" (run {prepared.sink.run_id}: start it again on the same checkpoint to resume)"
    return (
        f" (run {prepared.sink.run_id}: committed tasks stay committed; run the same command"
        f" again, or with --run-id {prepared.sink.run_id}, to resume)"
    )


def _ship_env(config: JobConfig, prepared: Prepared, err: Console) -> None:
    """``--ship-env``: the archive into ``spark.archives`` (executors' Python is switched to it
    once the session exists, see :func:`yangkey.spark.executors.prepare_executors`)."""
    from yangkey.spark.executors import is_local_master  # noqa: PLC0415
    from yangkey.spark.ship_env import EXECUTOR_PYTHON, ship_running_env  # noqa: PLC0415

    if config.stream and any(uri.startswith("kafka://") for uri in config.inputs):
        # Tried on a standalone cluster: Spark plans Python streaming sources in a Python
        # process the *driver* starts with the same interpreter as the executors' readers.
        raise ConfigError(
            "cannot serve --stream from kafka://: Spark runs the Python streaming"
            f" source on the driver too, with the executors' {EXECUTOR_PYTHON}; install yangkey"
            " at the same interpreter path on every node and set PYSPARK_PYTHON instead",
            source="--ship-env",
        )
    if is_local_master(config.master):
        config.ship_env = False
        prepared.warnings.append(
            "--ship-env: a local master runs this interpreter; nothing shipped"
        )
        return
    if err.is_terminal:
        with err.status("packing this virtualenv for the executors…"):
            shipped = ship_running_env()
    else:
        shipped = ship_running_env()
    err.print(shipped.describe(), markup=False, highlight=False, soft_wrap=True)
    if shipped.code is not None:
        prepared.py_files.append(str(shipped.code))
    config.spark_conf = {
        **config.spark_conf,
        **shipped.spark_conf(config.spark_conf.get("spark.archives")),
    }


def print_summary(summary: Summary, console: Console) -> None:
    tally = summary.tally
    verb = "would produce" if summary.dry_run else "produced"
    table = Table("topic", "messages", title=f"run {summary.run_id}: {verb}")
    for topic, count in sorted(tally.produced.items()):
        table.add_row(topic, f"{count:,}")
    if tally.rejections:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in sorted(tally.rejected.items()))
        table.add_row(
            f"{summary.dead_letter_topic} (dead letter: {kinds})", f"{tally.rejections:,}"
        )
    console.print(table)
    skipped = f", {summary.skipped} already committed (skipped)" if summary.skipped else ""
    batches = f" in {summary.batches} micro-batches" if summary.batches > 1 else ""
    console.print(
        f"{tally.records:,} records -> {tally.messages:,} messages,"
        f" {tally.rejections:,} rejected; {summary.partitions} Spark"
        f" task{'s' if summary.partitions != 1 else ''}{skipped}{batches};"
        f" {summary.seconds:.1f}s ({summary.rate:,.0f} records/s)",
        highlight=False,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``spark-submit spark_jobs/produce_keyed.py --subscriptions … --input … --bootstrap …``:
    the same options as ``yangkey produce``."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # Standalone: click reports usage errors itself and always ends with SystemExit.
        produce.main(args=args, prog_name="produce_keyed.py")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0
