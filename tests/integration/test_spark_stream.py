"""The raw-topic stream's micro-batches, against the real broker and Spark: the source hands
each task one offset range (never none, never two), and tasks read their ranges themselves.

One range per Spark partition is what keeps one transaction, one commit marker and one
transactional id per range: a replayed micro-batch re-plans the same ranges from Spark's
offset log, and each task finds its own marker.
"""

from __future__ import annotations

import json
from pathlib import Path

from confluent_kafka import Consumer
from pyspark.sql import DataFrame, SparkSession
from test_spark_job import (
    consume,
    fill_raw_topic,
    make_setup,
    reference,
    sample_records,
    triples,
)

from yangkey.spark.job import run
from yangkey.spark.progress import Summary
from yangkey.spark.source.kafka_source import KafkaRange, RawKafkaSource, chunk_ranges, watermarks


def _highs(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "t"})
    try:
        return {p: watermarks(consumer, topic, p)[1] for p in range(3)}
    finally:
        consumer.close()


def test_each_micro_batch_partition_holds_exactly_one_offset_range(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    records = sample_records(2)
    fill_raw_topic(kafka_bootstrap, topic_name, records)
    config = {"bootstrap.servers": kafka_bootstrap, "group.id": "t"}
    highs = _highs(kafka_bootstrap, topic_name)
    spark.dataSource.register(RawKafkaSource)
    seen: list[list[list[tuple[str, int, int, int]]]] = []

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        # Builtins only in the lambda: the workers cannot import this test module.
        seen.append(batch.rdd.glom().map(lambda rows: [tuple(r) for r in rows]).collect())

    frame = (
        spark.readStream.format(RawKafkaSource.name())
        .options(topic=topic_name, config=json.dumps(config), max_records_per_task="7")
        .load()
    )
    query = (
        frame.writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    query.stop()
    assert len(seen) == 1, "everything in one micro-batch (no max_per_trigger)"
    (partitions,) = seen
    assert [len(rows) for rows in partitions] == [1] * len(partitions)
    planned = [KafkaRange(*rows[0]) for rows in partitions]
    assert planned == chunk_ranges(topic_name, dict.fromkeys(highs, 0), highs, 7)
    assert sum(r.end - r.start for r in planned) == len(records)


def test_available_now_with_max_per_trigger_reads_to_the_end_in_several_micro_batches(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    records = sample_records(2)
    fill_raw_topic(kafka_bootstrap, topic_name, records)
    config = setup.config(
        kafka_bootstrap,
        [f"kafka://{topic_name}"],
        stream=True,
        available_now=True,
        checkpoint=str(tmp_path / "checkpoint"),
        max_per_trigger=12,
        max_records_per_task=3,
    )
    parts: list[Summary] = []
    summary = run(config, spark, on_batch=lambda _, part: parts.append(part))
    expected, tally = reference(setup, ((raw, "?") for raw in records))
    assert summary.tally == tally
    # --available-now reads to the end in micro-batches of at most 12 records (4 per raw
    # partition), each cut into ranges of at most 3, one task each.
    highs = _highs(kafka_bootstrap, topic_name)
    begin, tasks = dict.fromkeys(highs, 0), []
    while begin != highs:
        end = {p: min(high, begin[p] + 4) for p, high in highs.items()}
        tasks.append(len(chunk_ranges(topic_name, begin, end, 3)))
        begin = end
    assert len(tasks) > 1
    assert [part.partitions for part in parts] == tasks
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected
