"""``yangkey produce``'s options: their declarations, help and conversion into a JobConfig.

Each option's destination is a :class:`~yangkey.spark.config.JobConfig` field and its callback
converts the value, so :func:`job_config` is a plain constructor call; a value that cannot be
converted is a usage error before anything starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

from yangkey.cli.options import (
    BOOTSTRAP,
    CATALOG_TOPIC,
    DEFAULT_NODE,
    MASTER,
    SCHEMA_REGISTRY,
    SHARED_CATALOG,
    UNTIL,
    format_option,
    kafka_config_options,
    subscriptions_option,
)
from yangkey.config import parse_duration
from yangkey.errors import ConfigError, YangkeyError
from yangkey.kafka.config import client_overrides, parse_kv
from yangkey.messages import EMPTY_UPDATES
from yangkey.registry.client import RegistrySettings
from yangkey.spark.config import DEFAULT_MAX_RECORDS_PER_TASK, JobConfig

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str) -> int:
    """``64m`` / ``1g`` / ``4096`` -> bytes."""
    match = _SIZE.match(text)
    if not match:
        raise click.BadParameter(f"{text!r}: use a number of bytes, optionally with k, m or g")
    unit = (match.group(2) or "").lower()[:1]
    return int(match.group(1)) * _UNITS[unit]


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


PRODUCE_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    subscriptions_option,
    click.option(
        "--input",
        "inputs",
        required=True,
        multiple=True,
        metavar="PATH|URI|kafka://TOPIC",
        help="A JSON-lines / XML file, a directory of them, a Hadoop URI (hdfs://, s3a://),"
        " or kafka://TOPIC for the raw topic. Repeatable (batch only).",
    ),
    BOOTSTRAP.but(required=False, note="Produce to them (and read kafka:// inputs from them)."),
    MASTER.but(note="[default: local[*]]"),
    click.option(
        "--ship-env",
        is_flag=True,
        help="Cluster masters: pack this virtualenv (venv-pack, cached) into spark.archives and"
        " run the executors' Python from it. Without it, executors need yangkey installed at"
        " PYSPARK_PYTHON's path, which a preflight task checks.",
    ),
    kafka_config_options("producer"),
    kafka_config_options("consumer", short=False),
    click.option(
        "--source-bootstrap",
        metavar="HOST:PORT",
        help="Bootstrap servers of the raw topic when it lives on another cluster.",
    ),
    click.option(
        "--from",
        "start",
        default="earliest",
        show_default=True,
        metavar="WHEN",
        help="Where to start reading kafka:// inputs: earliest, latest, an offset,"
        " PARTITION:OFFSET pairs (0:120,1:98), an ISO-8601 time or @EPOCH_MS. With"
        " --stream only used when the checkpoint is new.",
    ),
    UNTIL.but(
        default="latest",
        show_default=True,
        note="for batch reads of kafka:// inputs, in the forms of --from.",
    ),
    click.option(
        "--no-keys",
        "keys",
        is_flag=True,
        callback=_field(lambda off: False if off else None),
        help="Producer knob 1 off: no message keys (round robin over partitions).",
    ),
    click.option(
        "--single-topic",
        metavar="NAME",
        help="Producer knob 2 off: every message to this one topic instead of a topic per"
        " subscription branch. (Knob 3, the subscription-type level, is topic_policy"
        ".type_level in the subscriptions file.)",
    ),
    click.option(
        "--no-learn",
        "learn",
        is_flag=True,
        callback=_field(lambda off: not off),
        help="Reject notifications of subscriptions missing from the file instead of"
        " learning them from telemetry-message yang-push-subscription metadata.",
    ),
    SHARED_CATALOG.but(
        note="write the subscriptions, learned ones too, through it, and learn from it the ones"
        " other producers learned (yangkey ingest --shared-catalog creates their tables)."
    ),
    CATALOG_TOPIC,
    click.option(
        "--instance-feed",
        is_flag=True,
        help="Add header yangkey-instances (one typed row per instance) to every message, for a"
        " ClickHouse server's instance tables fed by its Kafka engine. Costs the producer ~2.5x;"
        " yangkey ingest (embedded) computes the same rows itself.",
    ),
    click.option(
        "--empty-updates",
        type=click.Choice(EMPTY_UPDATES),
        default="count",
        show_default=True,
        help="An update without data (a heartbeat: 6WIND through NetGauze sends push-updates"
        " with empty contents) is no error: count it in the summary, or also send it to the"
        " dead-letter topic as kind empty-update.",
    ),
    DEFAULT_NODE,
    SCHEMA_REGISTRY.but(
        note="Basic auth: http://user:pass@host:8081. Each derived topic's value schema is"
        " registered (or looked up) under <topic>-value before any message is sent (not with"
        " --dry-run), and every message carries its id in header schema-id."
    ),
    _kv_field(
        "--schema-registry-config",
        "schema_registry_config",
        "Schema registry client setting, e.g. ssl.ca.location=ca.pem (secrets better as env"
        " YANGKEY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO=user:pass). Repeatable.",
    ),
    click.option(
        "--create-topics",
        is_flag=True,
        help="Create missing topics first: catalog partitions and retention,"
        " cleanup.policy=compact for current-state topics, plus the dead-letter topic.",
    ),
    _kv_field(
        "--topic-config",
        "topic_configs",
        "Extra config for topics that --create-topics creates, e.g. min.insync.replicas=2."
        " Repeatable.",
    ),
    click.option(
        "--delivery",
        type=click.Choice(["exactly-once", "at-least-once"]),
        default="exactly-once",
        show_default=True,
        help="exactly-once: one transaction per task plus commit markers (consumers use"
        " isolation.level=read_committed); at-least-once: idempotent producer only.",
    ),
    click.option(
        "--run-id",
        metavar="ID",
        help="Names this run's transactional ids and commit markers (letters, digits, _ and ."
        "). A run id that has committed tasks resumes: exactly the input its markers do not"
        " cover is produced (new raw-topic offsets, new file bytes); input that changed under a"
        " committed task is an error. Default: derived from the inputs, subscriptions, broker"
        " and knobs (batch: the same command again resumes), or the checkpoint's identity"
        " (stream).",
    ),
    click.option(
        "--transactional-id-prefix",
        "transactional_prefix",
        default="yangkey",
        show_default=True,
        help="Prefix of transactional ids and marker groups (for broker ACLs).",
    ),
    click.option(
        "--layout",
        type=click.Choice(["auto", "lines", "document"]),
        default="auto",
        show_default=True,
        help="Files: one notification per line (JSON lines, XML per line) or one per file;"
        " auto looks at the first line.",
    ),
    click.option(
        "--split-size",
        default="64m",
        show_default=True,
        metavar="SIZE",
        callback=_field(parse_size),
        help="Local files bigger than this are read by several tasks (cut at line starts).",
    ),
    click.option(
        "--max-records-per-task",
        type=click.IntRange(1),
        default=DEFAULT_MAX_RECORDS_PER_TASK,
        show_default=True,
        help="kafka:// inputs: offsets per Spark task (one transaction each).",
    ),
    click.option(
        "--stream",
        is_flag=True,
        help="Run continuously (Structured Streaming, foreachBatch into the same sink).",
    ),
    click.option(
        "--checkpoint", metavar="DIR", help="Checkpoint directory (required with --stream)."
    ),
    click.option(
        "--trigger-interval",
        metavar="DURATION",
        callback=_field(_duration),
        help="--stream: micro-batch interval, e.g. 10s. Default: as fast as possible.",
    ),
    click.option(
        "--available-now", is_flag=True, help="--stream: process what is there now, then stop."
    ),
    click.option(
        "--max-per-trigger",
        type=click.IntRange(1),
        metavar="N",
        help="--stream: at most N Kafka records (or N files) per micro-batch.",
    ),
    click.option(
        "--outage-budget",
        default="120s",
        show_default=True,
        metavar="DURATION",
        callback=_field(lambda text: float(parse_duration(text))),
        help="kafka:// inputs: how long metadata and offset look-ups retry (with backoff) while"
        " the broker is unreachable before the run fails.",
    ),
    click.option(
        "--stale-after",
        default="30s",
        show_default=True,
        metavar="DURATION",
        callback=_field(lambda text: float(parse_duration(text))),
        help="Exactly-once: another run under the same --transactional-id-prefix whose driver"
        " has not beaten for this long counts as crashed, and its open transactions are aborted"
        " at start (a live run is left alone).",
    ),
    click.option(
        "--restart-on-failure",
        type=click.IntRange(0),
        default=0,
        show_default=True,
        metavar="N",
        help="--stream: restart the query from its checkpoint up to N times after a failure"
        " (broker outage beyond the budget, a lost executor); configuration and input errors"
        " are never retried.",
    ),
    click.option(
        "--dry-run",
        is_flag=True,
        help="Derive keys and topics and print the counts; produce nothing.",
    ),
    _kv_field(
        "--spark-conf",
        "spark_conf",
        "Any Spark setting, e.g. spark.executor.memory=4g. Repeatable.",
    ),
    click.option(
        "--spark-log-level",
        default="ERROR",
        show_default=True,
        type=click.Choice(
            ["ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"], case_sensitive=False
        ),
        help="Level of Spark's own (log4j) log, which goes to the run's log file (named at"
        " the start and in any error line) when yangkey starts Spark, not to stderr.",
    ),
    format_option(SUMMARY_FORMATS),
)


def produce_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Declare :data:`PRODUCE_OPTIONS` on ``command``, in that order in ``--help``."""
    for option in reversed(PRODUCE_OPTIONS):
        command = option(command)
    return command


def job_config(options: dict[str, Any]) -> JobConfig:
    """``produce``'s options as a JobConfig: each option's destination is a field name
    (:data:`yangkey.spark.config.FLAT`) and its callback converts the value, except the Kafka
    client settings, where a properties file and KEY=VALUE options (later wins) make one
    field each. A combination of options that makes no run is a usage error."""
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
    try:
        return JobConfig.of(**fields)
    except ConfigError as error:
        raise click.UsageError(error.reason) from None
