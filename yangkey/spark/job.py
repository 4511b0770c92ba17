"""Wiring of the producer job: SparkSession, sources, the per-partition run, the summary.

Sources (``--input``, repeatable):

* a local file or directory (no scheme, or ``file://``): the driver lists the files and cuts
  big ones into line-aligned ranges (counting lines as it goes, so positions are exact
  ``path:line``); each range is one Spark partition;
* any other Hadoop URI (``hdfs://``, ``s3a://``…): Spark's ``binaryFile`` source, one
  record set per file;
* ``kafka://TOPIC``: the raw topic a YANG-Push receiver fills. Read with confluent-kafka inside
  the tasks, not with Spark's Kafka connector: ``spark-sql-kafka-0-10`` is not published for
  every Spark release (none for 4.3 on Maven Central), while librdkafka is already a
  dependency. The driver turns ``--from``/``--until`` (offsets, ``earliest``/``latest``,
  timestamps) into per-partition offset ranges from the watermarks; each range (at most
  ``max_records_per_task`` records) is one Spark partition, so a retried task re-reads exactly
  the same records. ``--stream`` reads it through a Python streaming data source
  (:class:`RawKafkaSource`) whose offsets Spark checkpoints.

Every partition runs :func:`yangkey.spark.sink.produce_partition` and returns its counts;
the driver sums the results of successful attempts only (exact under retries).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
)

from yangkey import errors as yangkey_errors
from yangkey.catalog import Catalog
from yangkey.config import parse_duration
from yangkey.errors import BrokerError, ConfigError, InputError, YangkeyError
from yangkey.kafka.config import (
    TopicSpec,
    TopicSpecLike,
    admin_config,
    connection_settings,
    consumer_config,
    ensure_topics,
    producer_config,
)
from yangkey.spark.preflight import local_input_warnings, prepare_executors
from yangkey.spark.sink import PartitionResult, SinkSpec, produce_partition
from yangkey.spark.transform import (
    BuilderSpec,
    FileRange,
    LayoutChoice,
    RawRecord,
    Tally,
    builder_for,
    plan_ranges,
    read_range,
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
    schema_id: int | None = None
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


# --------------------------------------------------------------------------- Kafka offsets


@dataclass(frozen=True)
class KafkaRange:
    """Offsets ``[start, end)`` of one partition of the raw topic: one Spark partition."""

    topic: str
    partition: int
    start: int
    end: int


OffsetSpec = tuple[str, Any]


def parse_offset_spec(text: str, *, option: str = "--from") -> OffsetSpec:
    """``earliest`` | ``latest`` | ``N`` | ``P:N,P:N`` | ISO-8601 time | ``@EPOCH_MS``."""
    value = text.strip()
    lowered = value.lower()
    if lowered in ("earliest", "beginning"):
        return ("earliest", None)
    if lowered in ("latest", "end"):
        return ("latest", None)
    if value.startswith("@") and value[1:].isdigit():
        return ("timestamp", int(value[1:]))
    if value.isdigit():
        return ("offset", int(value))
    if ":" in value and all(
        part.partition(":")[0].strip().isdigit() and part.partition(":")[2].strip().isdigit()
        for part in value.split(",")
    ):
        pairs = (part.partition(":") for part in value.split(","))
        return ("partitions", {int(p): int(o) for p, _, o in pairs})
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(
            f"{text!r} is not an offset: use earliest, latest, an offset, PARTITION:OFFSET"
            " pairs, an ISO-8601 time (2026-11-20T10:00:00Z) or @EPOCH_MILLISECONDS",
            source=option,
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return ("timestamp", int(moment.timestamp() * 1000))


def parse_kafka_input(uri: str) -> str:
    """``kafka://TOPIC`` -> ``TOPIC``."""
    topic = uri[len("kafka://") :].strip("/")
    if not topic or "/" in topic:
        raise ConfigError("expected kafka://TOPIC (the broker comes from --bootstrap)", source=uri)
    return topic


def _watermarks(consumer: Any, topic: str, partition: int, timeout: float) -> tuple[int, int]:
    try:
        low, high = consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=timeout, cached=False
        )
    except KafkaException as exc:
        raise BrokerError(
            f"cannot read the offsets of partition {partition}: {exc}", source=f"kafka://{topic}"
        ) from None
    return int(low), int(high)


def resolve_offsets(
    consumer: Any,
    topic: str,
    partitions: Sequence[int],
    spec: OffsetSpec,
    *,
    default_high: bool,
    timeout: float = 30.0,
) -> dict[int, int]:
    """Concrete offsets per partition, clamped to what the partition holds."""
    marks = {p: _watermarks(consumer, topic, p, timeout) for p in partitions}
    kind, value = spec
    result: dict[int, int] = {}
    if kind == "timestamp":
        try:
            found = consumer.offsets_for_times(
                [TopicPartition(topic, p, int(value)) for p in partitions], timeout=timeout
            )
        except KafkaException as exc:
            raise BrokerError(
                f"cannot look up offsets by time: {exc}", source=f"kafka://{topic}"
            ) from None
        for tp in found:
            low, high = marks[tp.partition]
            # -1: no message at or after the time -> the end of the partition.
            result[tp.partition] = high if tp.offset < 0 else max(low, min(tp.offset, high))
        return result
    for p in partitions:
        low, high = marks[p]
        if kind == "earliest":
            offset = low
        elif kind == "latest":
            offset = high
        elif kind == "offset":
            offset = int(value)
        else:
            mapping: dict[int, int] = value
            offset = mapping.get(p, high if default_high else low)
        result[p] = max(low, min(offset, high))
    return result


def topic_partitions(consumer: Any, topic: str, timeout: float = 30.0) -> list[int]:
    try:
        metadata = consumer.list_topics(topic, timeout=timeout)
    except KafkaException as exc:
        raise BrokerError(f"cannot reach the broker: {exc}", source=f"kafka://{topic}") from None
    described = metadata.topics.get(topic)
    if described is None or described.error is not None or not described.partitions:
        reason = described.error.str() if described is not None and described.error else ""
        detail = f" ({reason})" if reason else ""
        raise InputError(f"the raw topic does not exist{detail}", source=f"kafka://{topic}")
    return sorted(described.partitions)


def chunk_ranges(
    topic: str, starts: Mapping[int, int], ends: Mapping[int, int], max_records: int
) -> list[KafkaRange]:
    """Split ``[start, end)`` of every partition into ranges of at most ``max_records``."""
    ranges: list[KafkaRange] = []
    for partition in sorted(starts):
        start, end = starts[partition], ends.get(partition, starts[partition])
        while start < end:
            stop = min(end, start + max_records)
            ranges.append(KafkaRange(topic, partition, start, stop))
            start = stop
    return ranges


def plan_kafka(
    topic: str,
    config: Mapping[str, object],
    start: str,
    until: str,
    max_records: int,
) -> list[KafkaRange]:
    """The driver's plan of a batch read of the raw topic."""
    consumer = Consumer(dict(config))
    try:
        partitions = topic_partitions(consumer, topic)
        starts = resolve_offsets(
            consumer,
            topic,
            partitions,
            parse_offset_spec(start, option="--from"),
            default_high=False,
        )
        ends = resolve_offsets(
            consumer,
            topic,
            partitions,
            parse_offset_spec(until, option="--until"),
            default_high=True,
        )
    finally:
        consumer.close()
    return chunk_ranges(topic, starts, ends, max_records)


def read_kafka_range(
    config: Mapping[str, object], kafka_range: KafkaRange, idle_timeout: float = 60.0
) -> Iterator[RawRecord]:
    """The raw records of one offset range, with ``kafka://topic@partition:offset`` positions."""
    topic, partition, end = kafka_range.topic, kafka_range.partition, kafka_range.end
    where = f"kafka://{topic}@{partition}"
    consumer = Consumer(dict(config))
    try:
        consumer.assign([TopicPartition(topic, partition, kafka_range.start)])
        next_offset = kafka_range.start
        last_progress = time.monotonic()
        while next_offset < end:
            batch = consumer.consume(num_messages=min(1000, end - next_offset), timeout=1.0)
            if not batch:
                position = consumer.position([TopicPartition(topic, partition)])[0].offset
                if position is not None and position >= end:
                    break  # the rest of the range is transaction markers or compacted away
                if time.monotonic() - last_progress > idle_timeout:
                    raise BrokerError(
                        f"no record between offsets {next_offset} and {end} within"
                        f" {idle_timeout:.0f}s",
                        source=where,
                    )
                continue
            last_progress = time.monotonic()
            for message in batch:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise BrokerError(f"cannot read: {error.str()}", source=where)
                offset = message.offset()
                if offset is None:
                    continue
                if offset >= end:
                    next_offset = end
                    break
                value = message.value()
                yield (value if value is not None else b""), f"{where}:{offset}"
                next_offset = offset + 1
    finally:
        consumer.close()


class _KafkaPartition(InputPartition):
    def __init__(self, kafka_range: KafkaRange) -> None:
        super().__init__(kafka_range)
        self.range = kafka_range


class RawKafkaStreamReader(DataSourceStreamReader):
    """Structured Streaming reader of the raw topic; offsets are ``{"partition": offset}``."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.topic = options["topic"]
        self.config: dict[str, object] = json.loads(options["config"])
        self.start = options.get("start", "earliest")
        self.max_per_trigger = int(options.get("max_per_trigger", "0")) or None
        self.max_records = int(options.get("max_records_per_task", "250000"))
        self._consumer: Any = None

    def _client(self) -> Any:
        if self._consumer is None:
            self._consumer = Consumer(dict(self.config))
        return self._consumer

    def initialOffset(self) -> dict[str, int]:
        consumer = self._client()
        partitions = topic_partitions(consumer, self.topic)
        spec = parse_offset_spec(self.start, option="--from")
        offsets = resolve_offsets(consumer, self.topic, partitions, spec, default_high=False)
        return {str(p): o for p, o in offsets.items()}

    def latestOffset(
        self, start: dict[str, int] | None = None, limit: Any = None
    ) -> dict[str, int]:
        consumer = self._client()
        partitions = topic_partitions(consumer, self.topic)
        latest = {str(p): _watermarks(consumer, self.topic, p, 30.0)[1] for p in partitions}
        if self.max_per_trigger and start:
            share = max(1, math.ceil(self.max_per_trigger / max(1, len(latest))))
            for key, high in latest.items():
                begin = int(start.get(key, 0))
                latest[key] = min(high, begin + share)
        return latest

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        starts = {int(p): int(start.get(p, 0)) for p in end}
        ends = {int(p): int(o) for p, o in end.items()}
        ranges = chunk_ranges(self.topic, starts, ends, self.max_records)
        return [_KafkaPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[tuple[bytes, str]]:
        assert isinstance(partition, _KafkaPartition)
        yield from read_kafka_range(self.config, partition.range)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to do: progress lives in Spark's checkpoint, not in a consumer group."""

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


class RawKafkaSource(DataSource):
    """``spark.readStream.format("yangkey_raw_kafka")``: value (binary) and position."""

    @classmethod
    def name(cls) -> str:
        return "yangkey_raw_kafka"

    def schema(self) -> str:
        return "value binary, position string"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RawKafkaStreamReader(self.options)


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


def _records_of(
    items: Iterable[Any],
    kind: str,
    source_config: Mapping[str, object],
    layout: LayoutChoice,
) -> Iterator[RawRecord]:
    """The raw records of one Spark partition, whatever the source."""
    for item in items:
        if kind == "plan":
            if isinstance(item, FileRange):
                try:
                    with open(item.path, "rb") as stream:
                        yield from read_range(stream, item)
                except OSError as exc:
                    raise InputError(
                        f"cannot read: {exc.strerror or exc}", source=item.path
                    ) from None
            else:
                yield from read_kafka_range(source_config, item)
        elif kind == "files":  # binaryFile rows: path, content
            path, content = item[0], item[1]
            yield from split_records(bytes(content), str(path), layout)
        else:  # streaming Kafka rows: value, position
            yield bytes(item[0] or b""), str(item[1])


def _partition_task(
    builder_spec: Any,
    sink: SinkSpec,
    batch_id: int,
    kind: str,
    source_config: Mapping[str, object],
    layout: LayoutChoice,
    progress: Any,
) -> Callable[[int, Iterable[Any]], Iterable[PartitionResult]]:
    def run(index: int, items: Iterable[Any]) -> Iterable[PartitionResult]:
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else index
        attempt = context.attemptNumber() if context is not None else 0
        builder = builder_for(builder_spec.value)
        records = _records_of(items, kind, source_config, layout)
        result = produce_partition(records, builder, sink, partition, attempt, batch_id)
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
    plan: list[FileRange | KafkaRange] = field(default_factory=list)
    """Batch: one entry per Spark partition (local file ranges, raw-topic offset ranges)."""
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


def default_run_id(config: JobConfig) -> str:
    """Batch: random per run. Streaming: stable per checkpoint, so a restarted query fences
    the zombies of the previous run and its commit markers skip replayed batches."""
    if config.run_id:
        return config.run_id
    if config.stream and config.checkpoint:
        absolute = str(Path(config.checkpoint).expanduser().resolve())
        return "s" + hashlib.sha256(absolute.encode()).hexdigest()[:12]
    return uuid.uuid4().hex[:12]


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
        schema_id=config.schema_id,
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
    sink = SinkSpec(
        producer_config=producer,
        dead_letter_topic=catalog.dead_letter_topic,
        run_id=default_run_id(config),
        transactional_prefix=config.transactional_prefix,
        exactly_once=exactly_once,
        timeout=timeout,
        fail_after=_fail_after(config),
        dry_run=config.dry_run,
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
        _check_topics(config, prepared)
    if not config.stream:
        prepared.plan, prepared.remote = plan_inputs(config, source_config)
    return prepared


def topic_specs(catalog: Catalog, single_topic: str | None) -> list[TopicSpecLike]:
    """The topics a run writes: derived (or the single topic) and the dead-letter topic."""
    defaults = catalog.file.defaults
    retention = parse_duration(defaults.retention)
    specs: list[TopicSpecLike] = []
    if single_topic is not None:
        specs.append(
            TopicSpec(
                single_topic,
                partitions=max([t.partitions for t in catalog.topics] or [defaults.partitions]),
                replication_factor=defaults.replication_factor,
                retention_seconds=max([t.retention_seconds for t in catalog.topics] or [retention]),
            )
        )
    else:
        specs.extend(catalog.topics)  # the catalog's topic specs are TopicSpecLike already
    specs.append(
        TopicSpec(
            catalog.dead_letter_topic,
            partitions=defaults.partitions,
            replication_factor=defaults.replication_factor,
            retention_seconds=retention,
        )
    )
    return specs


def _any_reachable(bootstrap: str, timeout: float = 3.0) -> bool:
    """True if one of ``host:port[,host:port]`` accepts a TCP connection (fails fast where
    librdkafka would retry until its timeout)."""
    for server in bootstrap.split(","):
        address = server.strip().rpartition("://")[2]
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection(
                (host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout
            ):
                return True
        except (OSError, ValueError):
            continue
    return False


def _check_topics(config: JobConfig, prepared: Prepared) -> None:
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415

    connection = connection_settings(prepared.sink.producer_config)
    bootstrap = str(connection["bootstrap.servers"])
    if not _any_reachable(bootstrap):
        raise BrokerError(
            "cannot reach the broker: no bootstrap server accepts TCP connections",
            source=f"kafka {bootstrap}",
        )
    admin = AdminClient(cast(dict[str, Any], admin_config(bootstrap, connection)))
    specs = topic_specs(prepared.catalog, config.single_topic)
    if config.create_topics:
        result = ensure_topics(admin, specs, timeout=30.0, extra_configs=config.topic_configs)
        prepared.created_topics = result.created
        prepared.warnings.extend(result.warnings)
        return
    try:
        metadata = admin.list_topics(timeout=15)
    except KafkaException as exc:
        raise BrokerError(
            f"cannot reach the broker: {exc.args[0].str() if exc.args else exc}",
            source=f"kafka {bootstrap}",
        ) from None
    missing = [spec.name for spec in specs if spec.name not in metadata.topics]
    if missing:
        raise ConfigError(
            f"{len(missing)} topic(s) do not exist: {', '.join(missing)}; pass --create-topics"
            " to create them with the catalog's partitions, compaction and retention",
            source=f"kafka {bootstrap}",
        )


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
        summary.seconds = time.monotonic() - started
        return summary
    rdd, kind = source
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
    return reader.load(path).select("path", "content"), "files"


def run_stream(
    session: SparkSession,
    config: JobConfig,
    prepared: Prepared,
    on_batch: Callable[[int, Summary], None] | None = None,
    update: Callable[[str], None] | None = None,
) -> Summary:
    """Structured Streaming with checkpoints; every micro-batch goes through the same sink.

    The run id is stable per checkpoint, and the commit markers record the batch id: a batch
    Spark replays after a driver crash finds its partitions committed and skips them.
    """
    started = time.monotonic()
    summary = Summary(
        prepared.sink.run_id,
        dead_letter_topic=prepared.catalog.dead_letter_topic,
        dry_run=config.dry_run,
    )
    try:
        frame, kind = _stream_frame(session, config, prepared)
    except Exception as exc:
        raise spark_failure(exc, "opening the stream") from None
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
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    except Exception as exc:
        if failure:
            raise failure[-1] from None
        raise spark_failure(exc, "the streaming query") from None
    finally:
        broadcast.destroy()
    summary.seconds = time.monotonic() - started
    return summary


def run(
    config: JobConfig,
    spark: SparkSession | None = None,
    *,
    update: Callable[[str], None] | None = None,
    on_batch: Callable[[int, Summary], None] | None = None,
    prepared: Prepared | None = None,
) -> Summary:
    """Run the job. With ``spark`` given, that session is used and left running; otherwise
    one is built from ``config`` and stopped at the end."""
    prepared = prepared or prepare(config)
    try:
        session = spark or build_session(config)
    except Exception as exc:  # no Java, a bad --master or --spark-conf: one line, no traceback
        raise spark_failure(exc, "starting Spark") from None
    try:
        prepare_executors(session, config, prepared.py_files)
        if config.stream:
            return run_stream(session, config, prepared, on_batch, update)
        return run_batch(session, config, prepared, update)
    finally:
        if spark is None:
            session.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``spark-submit spark_jobs/produce_keyed.py --subscriptions … --input … --bootstrap …``:
    the same options as ``yangkey produce``."""
    from yangkey.spark.commands import produce  # noqa: PLC0415 - commands imports this module

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        produce.main(args=args, prog_name="produce_keyed.py", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 1
    except YangkeyError as exc:
        print(f"error: {exc.message()}", file=sys.stderr)
        return 1
    except Exception as exc:  # click usage errors and the like
        from click import ClickException  # noqa: PLC0415

        if isinstance(exc, ClickException):
            exc.show()
            return exc.exit_code
        raise
    return 0
