"""Wiring of the producer job: SparkSession, sources, the per-partition run, the summary.

Sources (``--input``, repeatable):

* a local file or directory (no scheme, or ``file://``): the driver lists the files and cuts
  big ones into line-aligned ranges (counting lines as it goes, so positions are exact
  ``path:line``); each range is one Spark partition;
* any other Hadoop URI (``hdfs://``, ``s3a://``…): Spark's ``binaryFile`` source, one
  record set per file;
* ``kafka://TOPIC``: the raw topic a YANG-Push receiver fills (:mod:`yangkey.spark.kafka_source`).

Every partition runs :func:`yangkey.spark.sink.produce_partition` and returns its counts;
the driver sums the results of successful attempts only (exact under retries). Each planned
range carries its task number, which names its transactional id and commit marker; a run id
that already has markers resumes (:mod:`yangkey.spark.markers`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession

from yangkey import errors as yangkey_errors
from yangkey.catalog import Catalog
from yangkey.config import parse_duration
from yangkey.errors import ConfigError, InputError, YangkeyError
from yangkey.kafka.config import (
    connection_settings,
    consumer_config,
    producer_config,
)
from yangkey.registry.client import RegistrySettings, process_ids, register_topic_schemas
from yangkey.spark.executors import is_local_master, local_input_warnings, prepare_executors
from yangkey.spark.kafka_source import (
    DEFAULT_OUTAGE_BUDGET,
    KafkaRange,
    RawKafkaSource,
    parse_kafka_input,
    plan_kafka,
    read_kafka_range,
)
from yangkey.spark.markers import (
    HadoopCheckpoint,
    LocalCheckpoint,
    Marker,
    MarkerStore,
    PlannedRange,
    StreamIdentity,
    check_no_foreign_markers,
    file_range_key,
    kafka_range_key,
    resume_plan,
    stream_identity,
)
from yangkey.spark.preflight import admin_for, check_topics, topic_specs
from yangkey.spark.sink import PartitionResult, SinkSpec, produce_partition
from yangkey.spark.stopping import Stopper
from yangkey.spark.transform import (
    DEFAULT_MAX_MESSAGE_BYTES,
    BuilderSpec,
    FileRange,
    LayoutChoice,
    RawRecord,
    Tally,
    builder_for,
    plan_ranges,
    split_records,
)

Delivery = Literal["exactly-once", "at-least-once"]

DEFAULT_MASTER = "local[*]"
DEFAULT_SPLIT_SIZE = 64 * 1024 * 1024
DEFAULT_MAX_RECORDS_PER_TASK = 250_000
SPARK_PRODUCER_DEFAULTS: Mapping[str, object] = {
    # A broker outage longer than this fails the task (and, after retries, the job).
    "message.timeout.ms": 120_000,
    # Spark batches are big: 10 min per task transaction (the broker's default max is 15).
    "transaction.timeout.ms": 600_000,
    "queue.buffering.max.messages": 200_000,
    "batch.num.messages": 10_000,
}
BINARY_FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"
TEST_FAIL_AFTER_ENV = "YANGKEY_TEST_FAIL_AFTER"
TEST_FAIL_AFTER_CONF = "spark.yangkey.test.fail_after"


# --------------------------------------------------------------------------- configuration


@dataclass
class JobConfig:
    """Everything ``yangkey produce`` and ``spark_jobs/produce_keyed.py`` accept."""

    subscriptions: str
    inputs: tuple[str, ...]
    bootstrap: str | None = None
    master: str | None = None
    stream: bool = False
    checkpoint: str | None = None
    producer_overrides: Mapping[str, object] = field(default_factory=dict)
    consumer_overrides: Mapping[str, object] = field(default_factory=dict)
    source_bootstrap: str | None = None
    keys: bool | None = None
    single_topic: str | None = None
    learn: bool = True
    default_node: str | None = None
    yang_dirs: tuple[str, ...] = ()
    schema_registry: RegistrySettings | None = None
    """Register each derived topic's value schema there and set the ``schema-id`` header."""
    create_topics: bool = False
    topic_configs: Mapping[str, str] = field(default_factory=dict)
    delivery: Delivery = "exactly-once"
    transactional_prefix: str = "yangkey"
    run_id: str | None = None
    start: str = "earliest"
    until: str = "latest"
    layout: LayoutChoice = "auto"
    split_size: int = DEFAULT_SPLIT_SIZE
    max_records_per_task: int = DEFAULT_MAX_RECORDS_PER_TASK
    dry_run: bool = False
    trigger_interval: str | None = None
    available_now: bool = False
    max_per_trigger: int | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    spark_log_level: str = "ERROR"
    app_name: str = "yangkey-produce"
    preflight: bool = True
    """Check the broker and the topics on the driver before starting (tests turn it off)."""
    ship_env: bool = False
    """Executors run ``./environment/bin/python`` from ``spark.archives`` (``--ship-env``)."""
    fail_after: int | None = None
    """Test hook (``yangkey.test.fail_after``): attempt 0 of each task crashes after N."""
    outage_budget: float = DEFAULT_OUTAGE_BUDGET
    """Seconds metadata and offset look-ups of kafka:// inputs retry while the broker is down."""
    restart_on_failure: int = 0
    """--stream: restart the query this many times after a failure (from its checkpoint)."""


@dataclass
class Summary:
    """The outcome of a run (or of the batches of a stream so far)."""

    run_id: str
    tally: Tally = field(default_factory=Tally)
    partitions: int = 0
    skipped: int = 0
    """Partitions an earlier attempt or run had committed (not produced again)."""
    batches: int = 0
    seconds: float = 0.0
    dead_letter_topic: str = ""
    dry_run: bool = False

    def add(self, results: Iterable[PartitionResult]) -> None:
        for result in results:
            self.partitions += 1
            self.skipped += int(result.skipped)
            self.tally.merge(result.tally)

    @property
    def rate(self) -> float:
        return self.tally.records / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "records": self.tally.records,
            "messages": self.tally.messages,
            "rejected": self.tally.rejections,
            "produced": dict(sorted(self.tally.produced.items())),
            "rejected_by_kind": dict(sorted(self.tally.rejected.items())),
            "dead_letter_topic": self.dead_letter_topic,
            "partitions": self.partitions,
            "skipped_partitions": self.skipped,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
            "dry_run": self.dry_run,
        }


# --------------------------------------------------------------------------- files


def _is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file://")


def _local_path(uri: str) -> Path:
    return Path(uri[len("file://") :] if uri.startswith("file://") else uri).expanduser()


def list_local_files(uri: str) -> list[Path]:
    # Absolute on the driver: executors run in other working directories.
    path = Path(os.path.abspath(_local_path(uri)))
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(
            p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
        if not files:
            raise InputError("the directory holds no input files", source=uri)
        return files
    raise InputError("no such file or directory", source=uri)


def plan_files(uri: str, split_size: int, layout: LayoutChoice) -> list[FileRange]:
    ranges: list[FileRange] = []
    for path in list_local_files(uri):
        try:
            size = path.stat().st_size
            if size == 0:
                continue
            with path.open("rb") as stream:
                ranges.extend(plan_ranges(stream, str(path), size, split_size, layout))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    return ranges


# --------------------------------------------------------------------------- tasks


def _planned_input(
    planned: PlannedRange, source_config: Mapping[str, object]
) -> tuple[str, Iterable[RawRecord]]:
    """(range key, records) of one planned range; a file range is read (and hashed) first."""
    if isinstance(planned, KafkaRange):
        return kafka_range_key(planned), read_kafka_range(source_config, planned)
    try:
        with open(planned.path, "rb") as stream:
            stream.seek(planned.start)
            data = stream.read(planned.end - planned.start)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=planned.path) from None
    if len(data) != planned.end - planned.start:
        raise InputError(
            f"the file shrank while the job ran (bytes {planned.start}-{planned.end} planned)",
            source=planned.path,
        )
    key = file_range_key(planned.path, planned.start, planned.end, data)
    return key, split_records(data, planned.path, planned.layout, planned.first_line)


def _binary_files(rows: Iterable[Any], layout: LayoutChoice) -> tuple[str, list[RawRecord]]:
    """binaryFile rows (path, content): range key over their paths and contents, records."""
    files = sorted((str(row[0]), bytes(row[1])) for row in rows)
    digest = hashlib.sha256()
    records: list[RawRecord] = []
    for path, content in files:
        digest.update(path.encode() + b"\0" + hashlib.sha256(content).digest())
        records.extend(split_records(content, path, layout))
    return f"files:{len(files)}:{digest.hexdigest()[:32]}", records


def _partition_task(
    builder_spec: Any,
    sink: SinkSpec,
    batch_id: int,
    kind: str,
    source_config: Mapping[str, object],
    layout: LayoutChoice,
    progress: Any,
) -> Callable[[int, Iterable[Any]], Iterable[PartitionResult]]:
    """``plan`` partitions hold one (task number, range); ``files`` binaryFile rows (batch);
    ``files-stream`` the same in a micro-batch; ``records`` streaming (value, position)."""

    def run(index: int, items: Iterable[Any]) -> Iterable[PartitionResult]:
        context = TaskContext.get()
        task = context.partitionId() if context is not None else index
        attempt = context.attemptNumber() if context is not None else 0
        builder = builder_for(builder_spec.value)
        records: Iterable[RawRecord]
        key = ""
        if kind == "plan":
            task, planned = next(iter(items))  # one planned range per Spark partition
            key, records = _planned_input(planned, source_config)
        elif kind == "files":
            key, records = _binary_files(items, layout)
        elif kind == "files-stream":
            records = (
                r for row in items for r in split_records(bytes(row[1]), str(row[0]), layout)
            )
        else:
            records = ((bytes(row[0] or b""), str(row[1])) for row in items)
        result = produce_partition(records, builder, sink, task, attempt, batch_id, key)
        if progress is not None:
            progress.add(result.tally.records)
        yield result

    return run


# --------------------------------------------------------------------------- errors


def spark_failure(exc: BaseException, what: str = "the Spark job") -> YangkeyError:
    """A Spark/Py4J exception -> the YangkeyError a task raised, or one clear line."""
    if isinstance(exc, YangkeyError):
        return exc
    text = str(exc)
    found: tuple[str, str] | None = None
    for line in text.splitlines():
        marker = line.find("yangkey.errors.")
        if marker < 0:
            continue
        name, sep, message = line[marker + len("yangkey.errors.") :].partition(": ")
        if sep and name.isidentifier():
            found = (name, message.strip())
    attempts = ""
    for line in text.splitlines():
        if "failed" in line and "times, most recent failure" in line:
            start = line.find("failed ")
            attempts = line[start : line.find(",", start)].strip()
            break
    if found is not None:
        name, message = found
        cls = getattr(yangkey_errors, name, YangkeyError)
        if not (isinstance(cls, type) and issubclass(cls, YangkeyError)):
            cls = YangkeyError
        suffix = f" (task {attempts})" if attempts else ""
        source, sep, reason = message.partition(": ")
        if not sep:
            source, reason = "spark task", message
        return cls(reason + suffix, source=source)
    candidates = [
        match.group(1)
        for line in text.splitlines()
        if (match := _EXCEPTION_LINE.match(line.strip())) is not None
    ]
    python_side = [c for c in candidates if not c.startswith(("org.", "java.", "scala."))]
    if python_side:
        reason = python_side[-1]
    elif candidates:
        reason = candidates[0]
    else:
        reason = next((line for line in text.splitlines() if line.strip()), type(exc).__name__)
    return YangkeyError(f"{what} failed: {reason.strip()}", source="spark")


_EXCEPTION_LINE = re.compile(r"^(?::\s*)?([\w.$]+(?:Error|Exception|Crash)\b(?::.*)?)$")


# --------------------------------------------------------------------------- session


def _quiet_log4j2(level: str) -> Path:
    """A log4j2 config for the driver JVM: Spark's console layout at ``level``."""
    path = Path(tempfile.gettempdir()) / f"yangkey-log4j2-{level.lower()}.properties"
    if not path.exists():
        path.write_text(
            f"rootLogger.level = {level.lower()}\n"
            "rootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\n"
            "appender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n",
            encoding="utf-8",
        )
    return path


def worker_python(
    master: str | None, spark_conf: Mapping[str, str], environ: Mapping[str, str]
) -> str | None:
    """The interpreter Spark's Python workers must run, or None to leave PySpark's choice.

    The user's ``spark.pyspark.python`` wins, then their ``PYSPARK_PYTHON``; otherwise a local
    master runs this very interpreter, the one that imported yangkey. Cluster masters keep
    Spark's own resolution: the environment ships with ``--archives`` (see the README).
    """
    chosen = spark_conf.get("spark.pyspark.python")
    if chosen:
        return chosen
    if environ.get("PYSPARK_PYTHON"):
        return None
    if (master or "").startswith("local"):
        return sys.executable
    return None


def build_session(config: JobConfig) -> SparkSession:
    """``SparkSession`` for the job: ``--master`` if given, else spark-submit's, else local."""
    builder: Any = SparkSession.builder.appName(config.app_name)
    master = config.master
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = DEFAULT_MASTER  # plain Python, not spark-submit: run locally
    if master is not None:
        builder = builder.master(master)
    settings: dict[str, str] = {
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
    }
    python = worker_python(master, config.spark_conf, os.environ)
    if python is not None:
        # Python workers run SparkContext.pythonExec, which PySpark takes from this variable
        # (else `python3` on PATH, which need not see yangkey); the builder's
        # spark.pyspark.python does not reach it when the driver is plain Python.
        os.environ["PYSPARK_PYTHON"] = python
    launching = "PYSPARK_GATEWAY_PORT" not in os.environ
    if launching and "spark.driver.extraJavaOptions" not in config.spark_conf:
        # Our JVM: keep its start-up chatter below the chosen level from the first line.
        settings["spark.driver.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile=file:{_quiet_log4j2(config.spark_log_level)}"
        )
    if launching and (master or "").startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings.update(config.spark_conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*pandas.*", category=FutureWarning)
        session: SparkSession = builder.getOrCreate()
    session.sparkContext.setLogLevel(config.spark_log_level)
    return session


# --------------------------------------------------------------------------- preparation


@dataclass
class Prepared:
    """The driver's view of a run before Spark starts."""

    builder_spec: BuilderSpec
    catalog: Catalog
    sink: SinkSpec
    source_config: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    created_topics: tuple[str, ...] = ()
    plan: list[tuple[int, PlannedRange]] = field(default_factory=list)
    """Batch: one (task number, range) per Spark partition (file ranges, raw-topic offsets)."""
    committed: list[Marker] = field(default_factory=list)
    """Batch: markers of tasks an earlier attempt of this run committed (not run again)."""
    fenced: int = 0
    """Transactions of an interrupted attempt of this run that were aborted at start."""
    stream: StreamIdentity | None = None
    """Streaming: the checkpoint's identity, once bound."""
    remote: list[str] = field(default_factory=list)
    """Batch: Hadoop URIs read with Spark's binaryFile source instead."""
    py_files: list[str] = field(default_factory=list)
    """Added to the executors' Python path (``--ship-env``: an editable yangkey's code)."""


def _milliseconds(config: Mapping[str, object], key: str) -> int:
    try:
        return int(str(config[key]))
    except ValueError:
        raise ConfigError(
            f"{key}={config[key]!r}: expected a number of milliseconds", source="producer config"
        ) from None


def _fail_after(config: JobConfig) -> int | None:
    if config.fail_after is not None:
        return config.fail_after
    text = os.environ.get(TEST_FAIL_AFTER_ENV) or config.spark_conf.get(TEST_FAIL_AFTER_CONF)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{text!r} is not a number", source=TEST_FAIL_AFTER_ENV) from None


_RUN_ID = re.compile(r"^[A-Za-z0-9_.]{1,64}$")


def legacy_stream_run_id(checkpoint: str) -> str:
    """The run id of a checkpoint made before checkpoints carried an identity."""
    absolute = str(Path(checkpoint).expanduser().resolve())
    return "s" + hashlib.sha256(absolute.encode()).hexdigest()[:12]


def default_run_id(config: JobConfig, subscriptions_text: str = "") -> str:
    """``--run-id``, else: batch, derived from what the command reads and writes, so running
    the same command again resumes (and produces only what is new); streaming, a placeholder
    that the checkpoint's identity replaces (:func:`yangkey.spark.markers.stream_identity`)."""
    if config.run_id:
        if not _RUN_ID.match(config.run_id):
            raise ConfigError(
                f"{config.run_id!r}: use 1-64 letters, digits, '_' or '.'", source="--run-id"
            )
        return config.run_id
    if config.stream and config.checkpoint:
        return legacy_stream_run_id(config.checkpoint)
    if config.dry_run:
        return uuid.uuid4().hex[:12]
    inputs = [
        uri if not _is_local(uri) else str(_local_path(uri).resolve()) for uri in config.inputs
    ]
    what = {
        "subscriptions": hashlib.sha256(subscriptions_text.encode()).hexdigest(),
        "inputs": inputs,
        "from": config.start,
        "until": config.until,
        "bootstrap": config.bootstrap,
        "source": config.source_bootstrap,
        "knobs": [config.keys, config.single_topic, config.learn, config.default_node],
        "schema": config.schema_registry.shown if config.schema_registry else None,
        "layout": config.layout,
        "delivery": config.delivery,
    }
    return "b" + hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


def prepare(config: JobConfig) -> Prepared:
    """Compile the catalog, build client configs, check or create topics: all on the driver,
    before any JVM starts, so configuration errors cost nothing."""
    if not config.inputs:
        raise ConfigError(
            "give at least one --input (a file, a directory or kafka://TOPIC)", source="produce"
        )
    if config.stream and not config.checkpoint:
        raise ConfigError(
            "--stream needs --checkpoint DIR (where Spark records progress)", source="produce"
        )
    if config.stream and len(config.inputs) != 1:
        raise ConfigError("--stream reads exactly one --input", source="produce")
    builder_spec = BuilderSpec.from_file(
        config.subscriptions,
        yang_dirs=config.yang_dirs,
        keys=config.keys,
        single_topic=config.single_topic,
        learn=config.learn,
        default_node=config.default_node,
    )
    catalog = builder_spec.catalog()
    builder_spec.knobs(catalog)  # validates the knob combination early
    exactly_once = config.delivery == "exactly-once"
    overrides = dict(config.producer_overrides)
    if "transactional.id" in overrides:
        raise ConfigError(
            "transactional.id is derived per task (prefix, run id, partition); set"
            " --transactional-id-prefix or --run-id instead",
            source="producer config",
        )
    defaults = dict(SPARK_PRODUCER_DEFAULTS)
    if not exactly_once:
        defaults.pop("transaction.timeout.ms")
    merged = {**defaults, **overrides}
    message_ms = _milliseconds(merged, "message.timeout.ms")
    if exactly_once:
        # librdkafka refuses message.timeout.ms > transaction.timeout.ms: the value the
        # operator set wins and the default of the other one adjusts to it.
        transaction_ms = _milliseconds(merged, "transaction.timeout.ms")
        if message_ms > transaction_ms:
            if "message.timeout.ms" not in overrides:
                message_ms = merged["message.timeout.ms"] = transaction_ms
            elif "transaction.timeout.ms" not in overrides:
                merged["transaction.timeout.ms"] = message_ms
            else:
                raise ConfigError(
                    f"message.timeout.ms ({message_ms}) must not exceed transaction.timeout.ms"
                    f" ({transaction_ms})",
                    source="producer config",
                )
    if config.dry_run:
        producer = dict(merged)
        producer.setdefault("bootstrap.servers", config.bootstrap or "dry-run:9092")
    else:
        producer = producer_config(config.bootstrap, merged)
    if exactly_once and (
        str(producer.get("enable.idempotence", "true")).lower() == "false"
        or str(producer.get("acks", "all")).lower() not in ("all", "-1")
    ):
        raise ConfigError(
            "exactly-once delivery needs acks=all and idempotence; drop those settings or pass"
            " --delivery at-least-once",
            source="producer config",
        )
    delivery_seconds = message_ms / 1000.0
    timeout = delivery_seconds + max(2.0, min(10.0, delivery_seconds / 4))
    schema_ids = _schema_ids(config, catalog)
    sink = SinkSpec(
        producer_config=producer,
        dead_letter_topic=catalog.dead_letter_topic,
        run_id=default_run_id(config, builder_spec.subscriptions_text),
        transactional_prefix=config.transactional_prefix,
        exactly_once=exactly_once,
        timeout=timeout,
        fail_after=_fail_after(config),
        dry_run=config.dry_run,
        schema_registry=config.schema_registry if schema_ids else None,
        schema_ids=schema_ids,
    )
    source_config: dict[str, object] = {}
    if any(uri.startswith("kafka://") for uri in config.inputs):
        source_bootstrap = config.source_bootstrap or config.bootstrap
        source_config = consumer_config(
            source_bootstrap,
            f"{config.transactional_prefix}-reader-{sink.run_id}",
            {"enable.partition.eof": False, **config.consumer_overrides},
        )
    prepared = Prepared(builder_spec, catalog, sink, source_config)
    prepared.warnings.extend(local_input_warnings(config))
    if not config.dry_run and config.preflight:
        created, warned, limit = check_topics(
            sink.producer_config,
            topic_specs(catalog, config.single_topic),
            create=config.create_topics,
            extra_configs=config.topic_configs,
        )
        prepared.created_topics = created
        prepared.warnings.extend(warned)
        _fit_message_limit(prepared, limit)
    if config.stream and _is_local(str(config.checkpoint)):
        bind_checkpoint(config, prepared)
    if not config.stream:
        plan, prepared.remote = plan_inputs(config, source_config)
        prepared.plan = list(enumerate(plan))
        if exactly_once and not config.dry_run and config.preflight and plan:
            _resume(config, prepared, plan)
    return prepared


def _schema_ids(config: JobConfig, catalog: Catalog) -> dict[str, int]:
    """``{topic: schema id}`` from ``--schema-registry``, registered once per run on the
    driver before any message is sent (a dry run registers nothing)."""
    if config.schema_registry is None or config.dry_run:
        return {}
    if config.single_topic is not None:
        raise ConfigError(
            "--single-topic mixes every subscription branch in one topic, which has no one"
            " value schema; drop --schema-registry or --single-topic",
            source="produce",
        )
    registry = process_ids(config.schema_registry)
    return register_topic_schemas(registry, catalog, yang_dirs=config.yang_dirs)


def _fit_message_limit(prepared: Prepared, topic_limit: int | None) -> None:
    """Size-check against the smaller of the producer's and the topics' limits; a producer
    limit above a topic's would let librdkafka build batches the broker refuses."""
    producer = dict(prepared.sink.producer_config)
    limit = int(str(producer.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES)))
    if topic_limit is not None and topic_limit < limit:
        limit = topic_limit
        producer["message.max.bytes"] = limit
    prepared.sink = replace(prepared.sink, producer_config=producer, max_message_bytes=limit)


def _resume(config: JobConfig, prepared: Prepared, plan: list[PlannedRange]) -> None:
    """Fence what an interrupted attempt of this run left open, then plan what its markers
    do not cover under task numbers it never used."""
    sink = prepared.sink
    store = MarkerStore(
        admin_for(sink.producer_config),
        connection_settings(sink.producer_config),
        sink.transactional_prefix,
        sink.run_id,
        sink.dead_letter_topic,
    )
    markers, handed_out = store.read()
    open_tasks = [task for task in range(handed_out) if task not in markers]
    if open_tasks:
        prepared.fenced = store.fence(open_tasks)
        markers, handed_out = store.read()  # a commit the fenced attempt had begun completes
    resumed = resume_plan(plan, markers, handed_out, config.split_size, sink.run_id)
    prepared.plan = resumed.plan
    prepared.committed = resumed.committed
    if resumed.plan:
        store.record(resumed.plan[-1][0] + 1)


# --------------------------------------------------------------------------- progress


class Progress:
    """Records done (from finished tasks) and tasks done, polled from the driver."""

    def __init__(self, session: SparkSession, update: Callable[[str], None] | None) -> None:
        self.session = session
        self.update = update
        self.records = session.sparkContext.accumulator(0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.base = 0

    def __enter__(self) -> Progress:
        if self.update is not None:
            self._thread = threading.Thread(target=self._loop, name="yangkey-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _loop(self) -> None:
        tracker = self.session.sparkContext.statusTracker()
        while not self._stop.wait(0.5):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            records = self.base + int(self.records.value)
            if self.update is not None:
                tasks = f", {done}/{total} tasks" if total else ""
                self.update(f"{records:,} records done{tasks}")


# --------------------------------------------------------------------------- running


def plan_inputs(
    config: JobConfig, source_config: Mapping[str, object]
) -> tuple[list[FileRange | KafkaRange], list[str]]:
    """Batch inputs -> (planned ranges, Hadoop URIs for Spark's binaryFile source).

    Runs on the driver before Spark starts: a missing file or raw topic costs no JVM.
    """
    plan: list[FileRange | KafkaRange] = []
    remote: list[str] = []
    for uri in config.inputs:
        if uri.startswith("kafka://"):
            plan.extend(
                plan_kafka(
                    parse_kafka_input(uri),
                    source_config,
                    config.start,
                    config.until,
                    config.max_records_per_task,
                    config.outage_budget,
                )
            )
        elif _is_local(uri):
            plan.extend(plan_files(uri, config.split_size, config.layout))
        else:
            remote.append(uri)
    if remote and plan:
        raise ConfigError("mix local inputs and Hadoop URIs in separate runs", source="--input")
    return plan, remote


def _source_rdd(session: SparkSession, prepared: Prepared) -> tuple[Any, str] | None:
    """The batch input as (RDD, kind); None when there is nothing to read."""
    if prepared.remote:
        frame = (
            session.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(prepared.remote)
            .select("path", "content")
        )
        return frame.rdd, "files"
    if not prepared.plan:
        return None
    return session.sparkContext.parallelize(prepared.plan, len(prepared.plan)), "plan"


def committed_results(prepared: Prepared) -> list[PartitionResult]:
    """The tasks an earlier attempt of the run committed, as skipped results."""
    return [PartitionResult(m.task, 0, 0, m.tally, True) for m in prepared.committed]


def run_batch(
    session: SparkSession,
    config: JobConfig,
    prepared: Prepared,
    update: Callable[[str], None] | None = None,
) -> Summary:
    started = time.monotonic()
    summary = Summary(
        prepared.sink.run_id,
        dead_letter_topic=prepared.catalog.dead_letter_topic,
        dry_run=config.dry_run,
    )
    try:
        source = _source_rdd(session, prepared)
    except Exception as exc:  # spark_failure passes a YangkeyError through as it is
        raise spark_failure(exc, "reading the input") from None
    if source is None:
        summary.add(committed_results(prepared))
        summary.seconds = time.monotonic() - started
        return summary
    rdd, kind = source
    summary.add(committed_results(prepared))
    context = session.sparkContext
    broadcast = context.broadcast(prepared.builder_spec)
    try:
        with Progress(session, update) as progress:
            task = _partition_task(
                broadcast,
                prepared.sink,
                0,
                kind,
                prepared.source_config,
                config.layout,
                progress.records,
            )
            try:
                results: list[PartitionResult] = rdd.mapPartitionsWithIndex(task).collect()
            except Exception as exc:
                raise spark_failure(exc) from None
    finally:
        broadcast.destroy()
    summary.add(results)
    summary.batches = 1
    summary.seconds = time.monotonic() - started
    return summary


def _stream_frame(
    session: SparkSession, config: JobConfig, prepared: Prepared
) -> tuple[DataFrame, str]:
    uri = config.inputs[0]
    if uri.startswith("kafka://"):
        session.dataSource.register(RawKafkaSource)
        options = {
            "topic": parse_kafka_input(uri),
            "config": json.dumps(prepared.source_config),
            "start": config.start,
            "max_per_trigger": str(config.max_per_trigger or 0),
            "max_records_per_task": str(config.max_records_per_task),
            "outage_budget": str(config.outage_budget),
        }
        return session.readStream.format(RawKafkaSource.name()).options(**options).load(), (
            "records"
        )
    reader = (
        session.readStream.format("binaryFile")
        .schema(BINARY_FILE_SCHEMA)
        .option("recursiveFileLookup", "true")
    )
    if config.max_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(config.max_per_trigger))
    # A scheme-less path would resolve against the cluster's default file system (HDFS).
    path = _local_path(uri).resolve().as_uri() if _is_local(uri) else uri
    return reader.load(path).select("path", "content"), "files-stream"


def bind_checkpoint(
    config: JobConfig, prepared: Prepared, session: SparkSession | None = None
) -> StreamIdentity:
    """Tie the stream's run id to the checkpoint's identity; refuse foreign markers ahead."""
    checkpoint = str(config.checkpoint)
    files: LocalCheckpoint | HadoopCheckpoint
    if _is_local(checkpoint):
        files = LocalCheckpoint(checkpoint)
    else:
        files = HadoopCheckpoint(checkpoint, session)
    try:
        identity = stream_identity(files, config.run_id, legacy_stream_run_id(checkpoint))
    except OSError as exc:
        raise ConfigError(f"cannot use the checkpoint: {exc}", source=checkpoint) from None
    sink = replace(prepared.sink, run_id=identity.run_id, identity=identity.identity)
    prepared.sink = sink
    prepared.stream = identity
    if sink.exactly_once and not sink.dry_run and config.preflight:
        store = MarkerStore(
            admin_for(sink.producer_config),
            connection_settings(sink.producer_config),
            sink.transactional_prefix,
            sink.run_id,
            sink.dead_letter_topic,
        )
        check_no_foreign_markers(store.read()[0], identity, checkpoint)
    return identity


def _quiet_query_errors(session: SparkSession) -> None:
    """A failed query is reported as one ``error:`` line (or a restart warning): Spark's own
    log of it, a JVM stack trace, would only bury that line."""
    with contextlib.suppress(Exception):
        jvm: Any = getattr(session, "_jvm")  # noqa: B009 - private, untyped
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "org.apache.spark.sql.execution.streaming", jvm.org.apache.logging.log4j.Level.OFF
        )


def run_stream(
    session: SparkSession,
    config: JobConfig,
    prepared: Prepared,
    on_batch: Callable[[int, Summary], None] | None = None,
    update: Callable[[str], None] | None = None,
    stopper: Stopper | None = None,
) -> Summary:
    """Structured Streaming with checkpoints; every micro-batch goes through the same sink.

    The run id belongs to the checkpoint (written into it when it is created), and the
    commit markers record the batch id and that identity: a batch Spark replays after a
    driver crash finds its partitions committed and skips them; markers of another
    checkpoint make the stream refuse to start.
    """
    started = time.monotonic()
    if prepared.stream is None:
        bind_checkpoint(config, prepared, session)
    summary = Summary(
        prepared.sink.run_id,
        dead_letter_topic=prepared.catalog.dead_letter_topic,
        dry_run=config.dry_run,
    )
    try:
        frame, kind = _stream_frame(session, config, prepared)
    except Exception as exc:
        raise spark_failure(exc, "opening the stream") from None
    if config.spark_log_level == "ERROR":
        _quiet_query_errors(session)
    context = session.sparkContext
    broadcast = context.broadcast(prepared.builder_spec)
    failure: list[YangkeyError] = []

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        task = _partition_task(
            broadcast,
            prepared.sink,
            int(batch_id),
            kind,
            prepared.source_config,
            config.layout,
            None,
        )
        try:
            results = batch.rdd.mapPartitionsWithIndex(task).collect()
        except Exception as exc:
            error = spark_failure(exc, f"micro-batch {batch_id}")
            failure.append(error)
            raise
        part = Summary(summary.run_id)
        part.add(results)
        summary.add(results)
        summary.batches += 1
        summary.seconds = time.monotonic() - started
        if on_batch is not None:
            on_batch(int(batch_id), part)
        if update is not None:
            update(f"{summary.tally.records:,} records in {summary.batches} batch(es)")

    writer = (
        frame.writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", str(config.checkpoint))
        .queryName(f"yangkey-produce-{summary.run_id}")
    )
    if config.available_now:
        writer = writer.trigger(availableNow=True)
    elif config.trigger_interval:
        seconds = parse_duration(config.trigger_interval)
        writer = writer.trigger(processingTime=f"{seconds} seconds")
    try:
        query = writer.start()
    except Exception as exc:
        broadcast.destroy()
        raise spark_failure(exc, "starting the streaming query") from None
    if stopper is not None:
        stopper.query = query
        if stopper.signum is not None:  # the signal came while the query was starting
            query.stop()
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        # Stop the query before Spark goes down under it (no py4j errors from a dying
        # gateway), then let the caller report the interruption.
        with contextlib.suppress(Exception):
            query.stop()
        raise
    except Exception as exc:
        if failure:
            raise failure[-1] from None
        raise spark_failure(exc, "the streaming query") from None
    finally:
        broadcast.destroy()
    summary.seconds = time.monotonic() - started
    return summary


WORKER_DAEMON_CONF = {"spark.python.daemon.module": "yangkey.spark.daemon"}
"""Python workers that die with the JVM that started them (:mod:`yangkey.spark.daemon`)."""
_NOT_RESTARTED = (ConfigError, InputError)


def run(
    config: JobConfig,
    spark: SparkSession | None = None,
    *,
    update: Callable[[str], None] | None = None,
    on_batch: Callable[[int, Summary], None] | None = None,
    on_restart: Callable[[YangkeyError, int], None] | None = None,
    prepared: Prepared | None = None,
    stopper: Stopper | None = None,
) -> Summary:
    """Run the job. With ``spark`` given, that session is used and left running; otherwise
    one is built from ``config`` and stopped at the end. A stream that fails is restarted
    from its checkpoint up to ``config.restart_on_failure`` times (``on_restart`` hears of
    each); configuration and input errors are never retried."""
    prepared = prepared or prepare(config)
    try:
        if spark is None and is_local_master(config.master):
            # Only where executors run this interpreter: a cluster's executors may lack
            # yangkey until --ship-env's code arrives, after the daemon has started.
            config = replace(config, spark_conf={**WORKER_DAEMON_CONF, **config.spark_conf})
        session = spark or build_session(config)
    except Exception as exc:  # no Java, a bad --master or --spark-conf: one line, no traceback
        raise spark_failure(exc, "starting Spark") from None
    stopper = stopper or Stopper()
    try:
        prepare_executors(session, config, prepared.py_files)
        if not config.stream:
            stopper.session = session
            return run_batch(session, config, prepared, update)
        restarts = 0
        while True:
            try:
                return run_stream(session, config, prepared, on_batch, update, stopper)
            except _NOT_RESTARTED:
                raise
            except YangkeyError as exc:
                if restarts >= config.restart_on_failure or stopper.signum is not None:
                    raise
                restarts += 1
                if on_restart is not None:
                    on_restart(exc, restarts)
                time.sleep(min(30.0, 2.0**restarts))
    finally:
        if spark is None:
            session.stop()
