"""CPU of the Spark job's Kafka sink alone: the native producer against confluent-kafka's.

    python benchmarks/bench_native_sink.py --count 200000 --repeat 3

Pre-computes the job's messages (as bench_spark_produce.py's transform does: ``--data``
periodic or mixed), then per round and sink, interleaved, one exactly-once task attempt in
this process (:class:`yangkey.spark.delivery.sink.KafkaSink`: begin, ``send_all``, commit,
close) on the embedded broker (or ``--bootstrap``). Prints the CPU of this process
(librdkafka's threads included) per message and the messages per second of each, and the
load average: the part of a task's CPU the native producer (issue 33) replaces.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench_spark_produce import subscriptions, write_input
from procstats import tree_cpu

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import PRODUCER_DEFAULTS, ensure_topics
from yangkey.messages import KeyedMessage
from yangkey.spark.config import SPARK_PRODUCER_DEFAULTS
from yangkey.spark.delivery.sink import KafkaSink
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.preflight import topic_specs
from yangkey.spark.source.splitting import split_records
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing


def one_task(
    spec: SinkSpec, partition: int, messages: list[KeyedMessage], tally: Tally, broker: int | None
) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, the broker's CPU seconds) of one task attempt producing
    ``messages``."""
    broker_cpu = tree_cpu(broker) if broker else 0.0
    cpu, wall = time.process_time(), time.perf_counter()
    sink = KafkaSink(spec, partition, 0)
    if spec.native and not sink.native:
        raise SystemExit("the native producer is not available here (yangkey-native)")
    try:
        assert sink.begin() is None
        sink.send_all(iter(messages))
        sink.commit(tally)
    finally:
        sink.close()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, (tree_cpu(broker) - broker_cpu) if broker else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000, help="notifications")
    parser.add_argument("--data", choices=["mixed", "periodic"], default="periodic")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="yangkey-bench-sink-"))
    data = work / "input.jsonl"
    write_input(data, args.count, 7, args.data)
    tag = uuid.uuid4().hex[:6]
    subs = subscriptions(work, f"bench-sink-{tag}", 6)
    builder = builder_for(BuilderSpec.from_file(subs))
    dead_letter = builder.catalog.dead_letter_topic
    tally = Tally()
    messages = list(
        outgoing(split_records(data.read_bytes(), str(data)), builder, dead_letter, tally)
    )
    broker = None if args.bootstrap else EmbeddedKafka(heap="1g").start()
    bootstrap = args.bootstrap or (broker.bootstrap if broker else "")
    figures: dict[str, list[tuple[float, float, float]]] = {"native": [], "confluent": []}
    pid = broker.pid if broker else None
    try:
        ensure_topics(bootstrap, topic_specs(builder.catalog, None))
        config = {**PRODUCER_DEFAULTS, **SPARK_PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap}
        task = 0
        warm = SinkSpec(config, dead_letter, f"warm{tag}", native=False)
        one_task(warm, 99, messages[:100], tally, pid)
        for round_ in range(args.repeat):
            # ABBA: what runs second may pay for the broker's cleanup of the first
            for name, rows in list(figures.items())[:: -1 if round_ % 2 else 1]:
                spec = SinkSpec(config, dead_letter, f"{tag}r{round_}", native=name == "native")
                cpu, wall, broker_cpu = one_task(spec, task, messages, tally, pid)
                task += 1
                rows.append((cpu, wall, broker_cpu))
                print(
                    f"round {round_ + 1} {name}: CPU {cpu * 1e6 / len(messages):.2f} µs/message,"
                    f" {len(messages) / wall:,.0f} messages/s, broker CPU"
                    f" {broker_cpu * 1e6 / len(messages):.2f} µs/message,"
                    f" load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    finally:
        if broker is not None:
            broker.stop()
    print(f"\n{args.data}, {len(messages):,} messages; medians of {args.repeat} round(s)")
    for name, rows in figures.items():
        cpu = statistics.median(c for c, _, _ in rows) * 1e6 / len(messages)
        rate = statistics.median(len(messages) / w for _, w, _ in rows)
        broker_cpu = statistics.median(b for _, _, b in rows) * 1e6 / len(messages)
        print(
            f"{name:10} CPU {cpu:6.2f} µs/message {rate:>10,.0f} messages/s,"
            f" broker {broker_cpu:5.2f} µs/message"
        )
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", file=sys.stdout)


if __name__ == "__main__":
    main()
