"""A batch run: the planned ranges (or Hadoop files) as one Spark job, summed on the driver."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from yangkey.spark.config import JobConfig
from yangkey.spark.delivery.spec import PartitionResult
from yangkey.spark.planning import Prepared
from yangkey.spark.progress import Progress, Summary
from yangkey.spark.runtime.session import spark_failure
from yangkey.spark.source.units import BinaryFiles, PartitionReader, PlannedUnits
from yangkey.spark.tasks import partition_task


def _source_rdd(
    session: SparkSession, config: JobConfig, prepared: Prepared
) -> tuple[Any, PartitionReader] | None:
    """The batch input as (RDD, how its partitions are read); None when there is nothing to
    read."""
    if prepared.remote:
        frame = (
            session.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(prepared.remote)
            .select("path", "content")
        )
        return frame.rdd, BinaryFiles(config.source.layout)
    if not prepared.plan:
        return None
    rdd = session.sparkContext.parallelize(prepared.plan, len(prepared.plan))
    return rdd, PlannedUnits(prepared.source_config)


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
        skipped_subscriptions=len(prepared.catalog.skipped),
    )
    try:
        source = _source_rdd(session, config, prepared)
    except Exception as exc:  # spark_failure passes a YangkeyError through as it is
        raise spark_failure(exc, "reading the input") from None
    if source is None:
        summary.add(committed_results(prepared))
        summary.seconds = time.monotonic() - started
        return summary
    rdd, reader = source
    summary.add(committed_results(prepared))
    context = session.sparkContext
    broadcast = context.broadcast(prepared.builder_spec)
    try:
        ranges = [planned for _, planned in prepared.plan]
        with Progress(
            session,
            update,
            total_units=sum(r.end - r.start for r in ranges),
            units_are_records=bool(ranges) and all(r.counts_records for r in ranges),
            started=started,  # the summary's rate counts from here too
        ) as progress:
            task = partition_task(broadcast, prepared.sink, 0, reader, progress.channel)
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
