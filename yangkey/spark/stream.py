"""A streaming run: Structured Streaming over the raw topic or a directory, every
micro-batch through the same tasks and sink as a batch run."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession

from yangkey.config import parse_duration
from yangkey.errors import YangkeyError
from yangkey.spark.config import JobConfig
from yangkey.spark.planning import Prepared, bind_checkpoint
from yangkey.spark.progress import Summary
from yangkey.spark.runtime.session import quiet_query_errors, spark_failure
from yangkey.spark.runtime.stopping import Stopper
from yangkey.spark.source.files import is_local, local_path
from yangkey.spark.source.kafka_source import RawKafkaSource, parse_kafka_input
from yangkey.spark.source.units import PartitionReader, StreamedFiles, StreamedRanges
from yangkey.spark.tasks import partition_task

BINARY_FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"


def _stream_frame(
    session: SparkSession, config: JobConfig, prepared: Prepared
) -> tuple[DataFrame, PartitionReader]:
    source, stream = config.source, config.stream
    uri = source.inputs[0]
    if uri.startswith("kafka://"):
        session.dataSource.register(RawKafkaSource)
        options = {
            "topic": parse_kafka_input(uri),
            "config": json.dumps(prepared.source_config),
            "start": source.start,
            "max_per_trigger": str(stream.max_per_trigger or 0),
            "max_records_per_task": str(source.max_records_per_task),
            "outage_budget": str(source.outage_budget),
        }
        frame = session.readStream.format(RawKafkaSource.name()).options(**options).load()
        return frame, StreamedRanges(prepared.source_config)
    reader = (
        session.readStream.format("binaryFile")
        .schema(BINARY_FILE_SCHEMA)
        .option("recursiveFileLookup", "true")
    )
    if stream.max_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(stream.max_per_trigger))
    # A scheme-less path would resolve against the cluster's default file system (HDFS).
    path = local_path(uri).resolve().as_uri() if is_local(uri) else uri
    return reader.load(path).select("path", "content"), StreamedFiles(source.layout)


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
        skipped_subscriptions=len(prepared.catalog.skipped),
    )
    try:
        frame, partitions = _stream_frame(session, config, prepared)
    except Exception as exc:
        raise spark_failure(exc, "opening the stream") from None
    if config.spark.log_level == "ERROR":
        quiet_query_errors(session)
    context = session.sparkContext
    broadcast = context.broadcast(prepared.builder_spec)
    failure: list[YangkeyError] = []

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        task = partition_task(broadcast, prepared.sink, int(batch_id), partitions)
        rdd = batch.rdd
        if prepared.heartbeat is not None:  # its transactional ids, before any opens
            prepared.heartbeat.grow(rdd.getNumPartitions())
        try:
            results = rdd.mapPartitionsWithIndex(task).collect()
        except Exception as exc:
            error = spark_failure(exc, f"micro-batch {batch_id}")
            failure.append(error)
            # Spark matches what foreachBatch raises against a regex (a stop's interruption?);
            # py4j's message holds whole JVM stack traces, on which that regex overflows the
            # JVM's stack and prints a thousand lines. The error itself is in ``failure``.
            raise RuntimeError(error.message()) from None
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
        .option("checkpointLocation", str(config.stream.checkpoint))
        .queryName(f"yangkey-produce-{summary.run_id}")
    )
    if config.stream.available_now:
        writer = writer.trigger(availableNow=True)
    elif config.stream.trigger_interval:
        seconds = parse_duration(config.stream.trigger_interval)
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
