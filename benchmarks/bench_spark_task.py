"""One Spark task's work in this process, the line loop against the per-record transform.

A planned file range of periodic JSON push-updates (bench_spark_produce.py's ``periodic``
data; ``--data mixed``: its demo mix) goes through ``produce_partition`` against an embedded
broker, exactly-once (its transaction and commit marker), with progress reporting on, as a
Spark task runs it but without Spark: once with :mod:`yangkey.spark.lines` (the default) and
once with ``YANGKEY_LINE_LOOP=0`` (record by record), interleaved, round after round. Printed: CPU
seconds of this process per record (every thread: the transform, the produce calls and
librdkafka's own threads), records/s, and the transform alone (a dry-run task) both ways.
CPU per record is the figure to compare on a shared machine: bench_spark_produce.py's whole
job adds the JVM, worker start and compile, which move with the load.

    python benchmarks/bench_spark_task.py --count 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_spark_produce import subscriptions, write_input

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import ensure_topics
from yangkey.spark.config import JobConfig
from yangkey.spark.delivery.direct import DIRECT_ENV
from yangkey.spark.delivery.sink import produce_partition
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.lines import LINE_LOOP_ENV
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.progress import Channel, reporting
from yangkey.spark.source.splitting import FileRange
from yangkey.spark.source.units import by_bytes
from yangkey.spark.transform import BuilderSpec, builder_for

VARIANTS: dict[str, dict[str, str | None]] = {
    "per record": {LINE_LOOP_ENV: "0", DIRECT_ENV: "0"},
    "line loop": {LINE_LOOP_ENV: None, DIRECT_ENV: "0"},
    "direct": {LINE_LOOP_ENV: None, DIRECT_ENV: None},
}
"""The task's loops: record by record, the line loop's tuples, the native pass producing
into the native producer straight (yangkey.spark.delivery.direct; the native sink only)."""


def task(
    path: Path, spec: BuilderSpec, sink: SinkSpec, number: int, switches: dict[str, str | None]
) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one task over the whole file."""
    for name, value in switches.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    key, records = FileRange(str(path), 0, path.stat().st_size, 1, "lines").read()
    # progress datagrams to a port nobody listens on: their cost, as in a batch run
    records = reporting(records, Channel("127.0.0.1", 9, b"bench-tk"), number, 0, by_bytes)
    cpu, wall = time.process_time(), time.perf_counter()
    produce_partition(records, builder_for(spec), sink, number, 0, 0, key)
    return time.process_time() - cpu, time.perf_counter() - wall


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="notifications")
    parser.add_argument("--rounds", type=int, default=5, help="rounds after one to warm up")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--data",
        choices=["periodic", "mixed"],
        default="periodic",
        help="bench_spark_produce.py's data sets: periodic JSON push-updates, or the demo mix",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-spark-task-"))
    broker = EmbeddedKafka(heap="1g").start()
    try:
        data = work / "in.jsonl"
        write_input(data, args.count, args.seed, args.data)
        spec = BuilderSpec.from_file(subscriptions(work, "bench-task", 6))
        ensure_topics(broker.bootstrap, topic_specs(spec.catalog(), None))
        config = JobConfig.of(
            subscriptions=str(spec.subscriptions_name),
            inputs=(str(data),),
            bootstrap=broker.bootstrap,
            delivery="exactly-once",
        )
        sink = prepare(config).sink
        dry = SinkSpec(sink.producer_config, sink.dead_letter_topic, "dry", dry_run=True)
        rows: dict[str, dict[str, list[float]]] = {
            name: {"cpu": [], "rate": [], "dry": []} for name in VARIANTS
        }
        number = 0
        for round_ in range(args.rounds + 1):
            line = []
            for name, loop in VARIANTS.items():
                cpu, wall = task(data, spec, sink, number, loop)
                dry_cpu, _ = task(data, spec, dry, number, loop)
                number += 1
                if round_ == 0:
                    continue  # the builder, the broker's coordinators and caches warm up
                row = rows[name]
                row["cpu"].append(cpu * 1e6 / args.count)
                row["rate"].append(args.count / wall)
                row["dry"].append(dry_cpu * 1e6 / args.count)
                line.append(
                    f"{name} {row['cpu'][-1]:.2f} µs ({row['rate'][-1]:,.0f}/s,"
                    f" transform {row['dry'][-1]:.2f} µs)"
                )
            if line:
                load = os.getloadavg()[0]
                print(f"round {round_}: " + "; ".join(line) + f"; load {load:.1f}", flush=True)
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)

    print()
    print(
        f"{args.data}, {args.count:,} records, one task in one process, exactly-once; medians of"
        f" {args.rounds} interleaved rounds"
    )
    print(f"{'':12}{'CPU µs/rec':>12}{'records/s':>11}{'transform µs':>14}")
    for name, row in rows.items():
        print(
            f"{name:12}{median(row['cpu']):>12.2f}{median(row['rate']):>11,.0f}"
            f"{median(row['dry']):>14.2f}"
        )
    for new_name, base_name in (("line loop", "per record"), ("direct", "line loop")):
        base, new = rows[base_name], rows[new_name]
        print(
            f"{new_name} / {base_name}: CPU {median(new['cpu']) / median(base['cpu']):.2f}x,"
            f" transform {median(new['dry']) / median(base['dry']):.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
