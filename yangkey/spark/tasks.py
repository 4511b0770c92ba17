"""The function every Spark partition runs: its records (a planned file range or raw-topic
offsets, binaryFile rows, or a micro-batch's rows) through the transform into the sink.

Each planned range carries its task number, which names its transactional id and commit
marker; the partition returns its counts and the driver sums those of successful attempts
only (exact under retries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pyspark import TaskContext

from yangkey.spark.files import binary_files, read_file_range
from yangkey.spark.kafka_source import KafkaRange, read_kafka_range
from yangkey.spark.markers import kafka_range_key
from yangkey.spark.progress import reporting
from yangkey.spark.resume import PlannedRange
from yangkey.spark.sink import PartitionResult, SinkSpec, produce_partition
from yangkey.spark.splitting import LayoutChoice, RawRecord, split_records
from yangkey.spark.transform import builder_for


def _bytes(record: RawRecord) -> int:
    return len(record[0]) + 1  # the line's newline


def _one(record: RawRecord) -> int:
    return 1


def planned_input(
    planned: PlannedRange, source_config: Mapping[str, object]
) -> tuple[str, Iterable[RawRecord]]:
    """(range key, records) of one planned range."""
    if isinstance(planned, KafkaRange):
        return kafka_range_key(planned), read_kafka_range(source_config, planned)
    return read_file_range(planned)


def partition_task(
    builder_spec: Any,
    sink: SinkSpec,
    batch_id: int,
    kind: str,
    source_config: Mapping[str, object],
    layout: LayoutChoice,
    progress: tuple[str, int, bytes] | None = None,
) -> Callable[[int, Iterable[Any]], Iterable[PartitionResult]]:
    """``plan`` partitions hold one (task number, range); ``files`` binaryFile rows (batch);
    ``files-stream`` the same in a micro-batch; ``ranges`` a raw-topic micro-batch's offset
    ranges (:class:`~yangkey.spark.kafka_source.RawKafkaSource`, one per partition).
    ``progress``: where a batch task reports how far it has read (:class:`Progress`)."""

    def run(index: int, items: Iterable[Any]) -> Iterable[PartitionResult]:
        context = TaskContext.get()
        task = context.partitionId() if context is not None else index
        attempt = context.attemptNumber() if context is not None else 0
        builder = builder_for(builder_spec.value)
        records: Iterable[RawRecord]
        key = ""
        weigh = _bytes
        if kind == "plan":
            # One planned range per Spark partition, read to its end: a worker that leaves
            # input unread is not reused, and the next task pays a new Python process that
            # imports yangkey and compiles the catalog again (about a second of CPU).
            ((task, planned),) = items
            key, records = planned_input(planned, source_config)
            if isinstance(planned, KafkaRange):
                weigh = _one  # a raw-topic range's work is offsets
        elif kind == "files":
            key, records = binary_files(items, layout)
        elif kind == "files-stream":
            records = (
                r for row in items for r in split_records(bytes(row[1]), str(row[0]), layout)
            )
        else:  # "ranges": a micro-batch's raw-topic offset ranges, read here as "plan" reads
            ranges = [KafkaRange(str(t), int(p), int(s), int(e)) for t, p, s, e in items]
            records = (r for kr in ranges for r in read_kafka_range(source_config, kr))
            weigh = _one
        records = reporting(records, progress, task, attempt, weigh)
        yield produce_partition(records, builder, sink, task, attempt, batch_id, key)

    return run
