"""A batch run: the planned ranges (or Hadoop files) as one Spark job, summed on the driver."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from yangkey.spark.config import JobConfig
from yangkey.spark.kafka_source import KafkaRange
from yangkey.spark.planning import Prepared
from yangkey.spark.progress import Progress, Summary
from yangkey.spark.session import spark_failure
from yangkey.spark.sink import PartitionResult
from yangkey.spark.tasks import partition_task


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
        skipped_subscriptions=len(prepared.catalog.skipped),
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
        ranges = [planned for _, planned in prepared.plan]
        with Progress(
            session,
            update,
            total_units=sum(r.end - r.start for r in ranges),
            units_are_records=bool(ranges) and all(isinstance(r, KafkaRange) for r in ranges),
            started=started,  # the summary's rate counts from here too
        ) as progress:
            task = partition_task(
                broadcast,
                prepared.sink,
                0,
                kind,
                prepared.source_config,
                config.layout,
                progress.channel,
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
