"""The function every Spark partition runs: its input, as the partition's reader opens it
(:mod:`yangkey.spark.source.units`: a planned file range or raw-topic offsets, binaryFile
rows, a micro-batch's rows), through the transform into the sink.

Each planned range carries its task number, which names its transactional id and commit
marker; the partition returns its counts and the driver sums those of successful attempts
only (exact under retries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyspark import TaskContext

from yangkey.spark.delivery.sink import produce_partition
from yangkey.spark.delivery.spec import PartitionResult, SinkSpec
from yangkey.spark.progress import Channel, reporting
from yangkey.spark.source.units import PartitionReader
from yangkey.spark.transform import builder_for


def partition_task(
    builder_spec: Any,
    sink: SinkSpec,
    batch_id: int,
    reader: PartitionReader,
    progress: Channel | None = None,
) -> Callable[[int, Iterable[Any]], Iterable[PartitionResult]]:
    """The function of ``mapPartitionsWithIndex``: ``builder_spec`` is the broadcast
    :class:`~yangkey.spark.transform.BuilderSpec`, ``reader`` opens the partition's items;
    ``progress``: where a batch task reports how far it has read
    (:class:`~yangkey.spark.progress.Progress`)."""

    def run(index: int, items: Iterable[Any]) -> Iterable[PartitionResult]:
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else index
        attempt = context.attemptNumber() if context is not None else 0
        builder = builder_for(builder_spec.value)
        opened = reader.open(items)
        task = partition if opened.task is None else opened.task
        records = reporting(opened.records, progress, task, attempt, opened.weigh)
        yield produce_partition(records, builder, sink, task, attempt, batch_id, opened.key)

    return run
