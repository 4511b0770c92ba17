"""Throughput of the streaming producer job (``produce --stream`` on a raw topic) against a
plain single-process produce loop and the batch read of the same topic.

    python benchmarks/bench_spark_stream.py                    # 200k notifications, local[2]
    python benchmarks/bench_spark_stream.py --count 50000 --repeat 3
    python benchmarks/bench_spark_stream.py --max-per-trigger 20000   # 10 micro-batches

What is measured, in one run, on the embedded Kafka broker (or ``--bootstrap``):

1. **stream**: ``yangkey.spark.job.run`` with ``stream=True, available_now=True`` on a raw
   topic holding ``--count`` periodic JSON push-updates (bench_spark_produce.periodic_records),
   a fresh checkpoint and run id each time: Structured Streaming plans the micro-batch(es),
   every task reads, transforms and produces its share transactionally. The SparkSession is
   started before the clock; query start-up is included.
2. **batch**: the same topic read as a batch (``kafka://`` ranges planned on the driver, read
   inside the tasks): the same work without Structured Streaming.
3. **plain**: a single-process confluent-kafka loop producing the pre-computed messages (the
   job's producer settings minus the transaction): the floor cost of Kafka alone.

Runs are interleaved (stream, batch, plain per round); medians of ``--repeat`` rounds. Besides
rows/s it prints the CPU seconds per record of this process tree without the broker (the
driver, the JVM and its Python workers), which swings less with the machine's load than the
wall clock, and the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench_spark_produce import (
    add_spark_conf_option,
    periodic_records,
    plain_produce,
    subscriptions,
)
from confluent_kafka import Producer
from procstats import job_and_broker_cpu
from pyspark.sql import SparkSession

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import TopicSpec, ensure_topics, parse_kv, producer_config
from yangkey.spark.config import JobConfig
from yangkey.spark.job import run
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.progress import Summary
from yangkey.spark.runtime.session import build_session
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing


def fill_raw(bootstrap: str, topic: str, partitions: int, records: list[bytes]) -> None:
    ensure_topics(bootstrap, [TopicSpec(topic, partitions=partitions)])
    producer = Producer(producer_config(bootstrap, {"linger.ms": 100}))
    for number, raw in enumerate(records):
        while True:
            try:
                producer.produce(topic, value=raw, partition=number % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    if producer.flush(120):
        raise SystemExit("could not fill the raw topic")


def timed(config: JobConfig, spark: SparkSession, broker_pid: int | None) -> tuple[Summary, float]:
    """The run's summary and the CPU seconds this process tree spent on it, the broker's
    excluded."""
    before, _ = job_and_broker_cpu(broker_pid)
    summary = run(config, spark)
    return summary, job_and_broker_cpu(broker_pid)[0] - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000, help="notifications")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--raw-partitions", type=int, default=2, help="raw topic partitions")
    parser.add_argument("--partitions", type=int, default=6, help="partitions per output topic")
    parser.add_argument(
        "--max-records-per-task", type=int, default=250_000, help="as produce's option"
    )
    parser.add_argument(
        "--max-per-trigger", type=int, help="records per micro-batch (as produce's option)"
    )
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds")
    parser.add_argument("--no-batch", action="store_true", help="skip the batch read")
    add_spark_conf_option(parser)
    args = parser.parse_args()
    spark_conf = parse_kv(args.spark_conf, source="--spark-conf")

    work = Path(tempfile.mkdtemp(prefix="yangkey-bench-stream-"))
    tag = uuid.uuid4().hex[:6]
    records = periodic_records(args.count, args.seed)
    broker = None if args.bootstrap else EmbeddedKafka(heap="1g").start()
    bootstrap = args.bootstrap or (broker.bootstrap if broker else "")
    broker_pid = broker.pid if broker else None
    raw_topic = f"bench-raw-{tag}"
    spark = None
    rows: dict[str, list[float]] = {
        name: [] for name in ("stream", "batch", "plain", "stream_cpu", "batch_cpu", "load")
    }
    try:
        started = time.perf_counter()
        fill_raw(bootstrap, raw_topic, args.raw_partitions, records)
        print(
            f"raw topic: {len(records):,} notifications in {args.raw_partitions} partition(s)"
            f" ({time.perf_counter() - started:.1f}s to fill)",
            flush=True,
        )
        spark_subs = subscriptions(work, f"bench-stream-{tag}", args.partitions)
        plain_subs = subscriptions(work, f"bench-plain-{tag}", args.partitions)
        for path in (spark_subs, plain_subs):
            ensure_topics(bootstrap, topic_specs(BuilderSpec.from_file(path).catalog(), None))

        builder = builder_for(BuilderSpec.from_file(plain_subs))
        tally = Tally()
        positioned = ((raw, f"raw:{n}") for n, raw in enumerate(records))
        messages = list(outgoing(positioned, builder, builder.catalog.dead_letter_topic, tally))
        base = JobConfig.of(
            subscriptions=str(spark_subs),
            inputs=(f"kafka://{raw_topic}",),
            bootstrap=bootstrap,
            master=args.master,
            max_records_per_task=args.max_records_per_task,
            spark_conf={"spark.ui.enabled": "false", **spark_conf},
        )
        plain_config = prepare(
            JobConfig.of(
                subscriptions=str(plain_subs),
                inputs=(f"kafka://{raw_topic}",),
                bootstrap=bootstrap,
                delivery="at-least-once",
            )
        ).sink.producer_config
        spark = build_session(base.spark)
        spark.sparkContext.parallelize([0], 1).count()  # JVM and Python daemon up
        for repeat in range(args.repeat):
            run_id = re.sub(r"[^A-Za-z0-9_.]", "_", f"bs{tag}s{repeat}")
            stream_config = base.but(
                stream=True,
                available_now=True,
                checkpoint=str(work / f"checkpoint-{repeat}"),
                run_id=run_id,
                max_per_trigger=args.max_per_trigger,
            )
            stream, stream_cpu = timed(stream_config, spark, broker_pid)
            if stream.tally.records != tally.records:
                print(
                    f"warning: the stream produced {stream.tally.records:,} records, the"
                    f" transform {tally.records:,}",
                    file=sys.stderr,
                )
            stream_rate = stream.tally.records / stream.seconds
            line = (
                f"run {repeat + 1}: stream {stream_rate:,.0f} records/s ({stream.seconds:.1f}s,"
                f" {stream.batches} batch(es), {stream.partitions} tasks,"
                f" {stream_cpu * 1e6 / max(1, stream.tally.records):.1f} µs CPU/record)"
            )
            rows["stream"].append(stream_rate)
            rows["stream_cpu"].append(stream_cpu * 1e6 / max(1, stream.tally.records))
            if not args.no_batch:
                batch_config = base.but(run_id=f"bb{tag}b{repeat}")
                batch, batch_cpu = timed(batch_config, spark, broker_pid)
                batch_rate = batch.tally.records / batch.seconds
                rows["batch"].append(batch_rate)
                rows["batch_cpu"].append(batch_cpu * 1e6 / max(1, batch.tally.records))
                line += (
                    f", batch {batch_rate:,.0f}/s ({batch.seconds:.1f}s,"
                    f" {rows['batch_cpu'][-1]:.1f} µs CPU/record)"
                )
            plain_rate = tally.records / plain_produce(dict(plain_config), messages)
            rows["plain"].append(plain_rate)
            load = os.getloadavg()[0]
            rows["load"].append(load)
            print(
                f"{line}, plain {plain_rate:,.0f}/s, ratio {stream_rate / plain_rate:.2f},"
                f" load {load:.1f}",
                flush=True,
            )
    finally:
        if spark is not None:
            spark.stop()
        if broker is not None:
            broker.stop()

    def med(name: str) -> float:
        return statistics.median(rows[name]) if rows[name] else 0.0

    print()
    print(
        f"periodic, {args.count:,} records, {args.raw_partitions} raw partition(s),"
        f" {args.master}; medians of {args.repeat} round(s)"
    )
    batch = (
        f" batch {med('batch'):,.0f}/s ({med('batch_cpu'):.1f} µs CPU/record),"
        if rows["batch"]
        else ""
    )
    versus_batch = f" stream/batch {med('stream') / med('batch'):.2f}," if rows["batch"] else ""
    print(
        f"stream {med('stream'):,.0f} records/s ({med('stream_cpu'):.1f} µs CPU/record),{batch}"
        f" plain {med('plain'):,.0f}/s; stream/plain {med('stream') / med('plain'):.2f},"
        f"{versus_batch} load {med('load'):.1f}"
    )
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
