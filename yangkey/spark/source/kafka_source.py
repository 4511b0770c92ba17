"""The raw topic as a source: offset specs, the driver's plan, task reads, the stream reader.

Read with confluent-kafka inside the tasks, not with Spark's Kafka connector:
``spark-sql-kafka-0-10`` is not published for every Spark release (none for 4.3 on Maven
Central), while librdkafka is already a dependency. The driver turns ``--from``/``--until``
(offsets, ``earliest``/``latest``, timestamps) into per-partition offset ranges from the
watermarks; each range (at most ``max_records_per_task`` records) is one Spark partition, so
a retried task re-reads exactly the same records. ``--stream`` plans its micro-batches through
a Python streaming data source (:class:`RawKafkaSource`) whose offsets Spark checkpoints; its
rows are the micro-batch's offset ranges, not the records, which each task reads itself as a
batch task does.

Metadata and watermark look-ups ride out a broker outage: they are retried with backoff for
up to the *outage budget* (``--outage-budget``, 120 s by default, the same as the producer's
``message.timeout.ms``), then fail with one :class:`~yangkey.errors.BrokerError`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from yangkey.errors import BrokerError, ConfigError, InputError
from yangkey.kafka.config import kafka_reason
from yangkey.kafka.logs import logged
from yangkey.spark.source.splitting import RawRecord

DEFAULT_OUTAGE_BUDGET = 120.0
"""Seconds a metadata or offset look-up keeps retrying while the broker is unreachable."""
_ATTEMPT_TIMEOUT = 10.0
_MAX_BACKOFF = 5.0

T = TypeVar("T")


def within_budget(call: Callable[[float], T], what: str, source: str, budget: float) -> T:
    """``call(timeout)`` retried with backoff until it answers or ``budget`` seconds pass."""
    deadline = time.monotonic() + budget
    delay = 0.25
    while True:
        remaining = deadline - time.monotonic()
        try:
            return call(max(1.0, min(_ATTEMPT_TIMEOUT, remaining)))
        except KafkaException as exc:
            if time.monotonic() + delay >= deadline:
                raise BrokerError(
                    f"{what}: {kafka_reason(exc)} (broker unreachable for the whole outage budget"
                    f" of {budget:.0f}s, --outage-budget)",
                    source=source,
                ) from None
        time.sleep(delay)
        delay = min(delay * 2, _MAX_BACKOFF)


@dataclass(frozen=True)
class KafkaRange:
    """Offsets ``[start, end)`` of one partition of the raw topic: one Spark partition."""

    topic: str
    partition: int
    start: int
    end: int

    counts_records: ClassVar[bool] = True
    """Its work is offsets, one per record."""

    @property
    def key(self) -> str:
        """The range key its commit marker records."""
        return f"kafka:{self.topic}:{self.partition}:{self.start}:{self.end}"

    def read(self, source_config: Mapping[str, object]) -> tuple[str, Iterator[RawRecord]]:
        """(range key, records), read by a consumer with ``source_config``."""
        return self.key, read_kafka_range(source_config, self)


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


def watermarks(
    consumer: Any, topic: str, partition: int, budget: float = DEFAULT_OUTAGE_BUDGET
) -> tuple[int, int]:
    low, high = within_budget(
        lambda timeout: consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=timeout, cached=False
        ),
        f"cannot read the offsets of partition {partition}",
        f"kafka://{topic}",
        budget,
    )
    return int(low), int(high)


def resolve_offsets(
    consumer: Any,
    topic: str,
    partitions: Sequence[int],
    spec: OffsetSpec,
    *,
    default_high: bool,
    budget: float = DEFAULT_OUTAGE_BUDGET,
) -> dict[int, int]:
    """Concrete offsets per partition, clamped to what the partition holds."""
    marks = {p: watermarks(consumer, topic, p, budget) for p in partitions}
    kind, value = spec
    result: dict[int, int] = {}
    if kind == "timestamp":
        found = within_budget(
            lambda timeout: consumer.offsets_for_times(
                [TopicPartition(topic, p, int(value)) for p in partitions], timeout=timeout
            ),
            "cannot look up offsets by time",
            f"kafka://{topic}",
            budget,
        )
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


def topic_partitions(consumer: Any, topic: str, budget: float = DEFAULT_OUTAGE_BUDGET) -> list[int]:
    metadata = within_budget(
        lambda timeout: consumer.list_topics(topic, timeout=timeout),
        "cannot reach the broker",
        f"kafka://{topic}",
        budget,
    )
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
    budget: float = DEFAULT_OUTAGE_BUDGET,
) -> list[KafkaRange]:
    """The driver's plan of a batch read of the raw topic."""
    consumer = Consumer(logged(config))
    try:
        partitions = topic_partitions(consumer, topic, budget)
        starts = resolve_offsets(
            consumer,
            topic,
            partitions,
            parse_offset_spec(start, option="--from"),
            default_high=False,
            budget=budget,
        )
        ends = resolve_offsets(
            consumer,
            topic,
            partitions,
            parse_offset_spec(until, option="--until"),
            default_high=True,
            budget=budget,
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
    consumer = Consumer(logged(config))
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


class RawKafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Structured Streaming reader of the raw topic; offsets are ``{"partition": offset}``."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.topic = options["topic"]
        self.config: dict[str, object] = json.loads(options["config"])
        self.start = options.get("start", "earliest")
        self.max_per_trigger = int(options.get("max_per_trigger", "0")) or None
        self.max_records = int(options.get("max_records_per_task", "250000"))
        self.budget = float(options.get("outage_budget", str(DEFAULT_OUTAGE_BUDGET)))
        self._consumer: Any = None
        self._target: dict[str, int] | None = None

    def _client(self) -> Any:
        if self._consumer is None:
            self._consumer = Consumer(logged(self.config))
        return self._consumer

    def _highs(self) -> dict[str, int]:
        consumer = self._client()
        partitions = topic_partitions(consumer, self.topic, self.budget)
        return {str(p): watermarks(consumer, self.topic, p, self.budget)[1] for p in partitions}

    def initialOffset(self) -> dict[str, int]:
        consumer = self._client()
        partitions = topic_partitions(consumer, self.topic, self.budget)
        spec = parse_offset_spec(self.start, option="--from")
        offsets = resolve_offsets(
            consumer, self.topic, partitions, spec, default_high=False, budget=self.budget
        )
        return {str(p): o for p, o in offsets.items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        # --available-now ends at what the topic holds now, in as many micro-batches of
        # --max-per-trigger as that takes (without this, Spark took the first capped offsets
        # as the end and stopped after one micro-batch).
        self._target = self._highs()

    def latestOffset(
        self, start: dict[str, int] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, int]:
        latest = dict(self._target) if self._target is not None else self._highs()
        if limit is None:
            limit = self.getDefaultReadLimit()
        if isinstance(limit, ReadMaxRows) and start:
            share = max(1, math.ceil(limit.max_rows / max(1, len(latest))))
            for key, high in latest.items():
                begin = int(start.get(key, 0))
                latest[key] = min(high, begin + share)
        return latest

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        starts = {int(p): int(start.get(p, 0)) for p in end}
        ends = {int(p): int(o) for p, o in end.items()}
        ranges = chunk_ranges(self.topic, starts, ends, self.max_records)
        return [_KafkaPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[tuple[str, int, int, int]]:
        # The range, not its records: records crossing into the JVM and back cost a streamed
        # row more than all the rest of its work (benchmarks/bench_spark_stream.py). One row
        # per Spark partition, so each micro-batch task reads and commits exactly one range.
        assert isinstance(partition, _KafkaPartition)
        r = partition.range
        yield r.topic, r.partition, r.start, r.end

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to do: progress lives in Spark's checkpoint, not in a consumer group."""

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


class RawKafkaSource(DataSource):
    """``spark.readStream.format("yangkey_raw_kafka")``: one row per offset range
    (:class:`KafkaRange`'s fields) of each micro-batch, one range per Spark partition."""

    @classmethod
    def name(cls) -> str:
        return "yangkey_raw_kafka"

    def schema(self) -> str:
        return "topic string, partition int, start long, end long"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RawKafkaStreamReader(self.options)
