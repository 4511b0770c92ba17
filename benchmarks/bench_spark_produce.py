"""Throughput of the Spark producer job against a plain single-process produce loop.

    python benchmarks/bench_spark_produce.py                 # 1M notifications, local[2]
    python benchmarks/bench_spark_produce.py --count 200000  # quicker

What is measured, in one run, on the embedded Kafka broker (or ``--bootstrap``):

1. **spark**: ``yangkey.spark.job.run`` on a JSON-lines file of ``--count`` generated
   notifications (yangkey.demo.sample: the example subscriptions' push-updates and on-change
   patches, JSON and XML, envelope / NETCONF / telemetry-message wrappers, a few bad ones):
   read, decode, derive keys and topics, produce transactionally. The SparkSession is started
   before the clock starts, so JVM start-up is excluded, and so is the worker daemon's (which
   imports yangkey once, as in the job); forking each Python worker and its catalog compile
   are included. So is the broker's first transaction and offset commit (it creates its
   coordinators' topics then), as a production broker had them long before.
2. **transform**: the same records through the core's MessageBuilder in this one process
   (pre-computing the messages for 3).
3. **plain**: a single-process confluent-kafka loop producing those pre-computed messages
   (the job's producer settings, idempotent, ``poll(0)`` per message, no transactions): the
   floor cost of Kafka alone.

Prints records/s of each, the ratio spark / plain of the same round, the broker's CPU per
record during the Spark run (an embedded broker only), the CPU per record of the job (this
process, the JVM and its Python workers: the broker's excluded) and of the plain loop (this
process with librdkafka's threads), and the load average. The broker shares the machine's
cores with Spark, as it does in the tests. The CPU figures move less with the machine's load
than the wall-clock ones, which swing by 15-20% between runs even on a quiet machine.

    # producer settings compared, interleaved, 3 rounds each (docs/design.md#spark-task-throughput)
    python benchmarks/bench_spark_produce.py --data periodic --count 200000 --repeat 3 \
        --settings linger20=linger.ms=20 --settings linger500=linger.ms=500
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import orjson
import yaml
from confluent_kafka import Consumer, Producer, TopicPartition
from procstats import RssSampler, driver_rss_mb, job_and_broker_cpu, tree_cpu

from yangkey.demo.sample import generate, iter_jsonl
from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import ensure_topics, parse_kv
from yangkey.messages import KeyedMessage
from yangkey.spark.config import JobConfig
from yangkey.spark.delivery.direct import DIRECT_ENV
from yangkey.spark.delivery.native_producer import ENV_SINK
from yangkey.spark.job import run
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import topic_specs
from yangkey.spark.runtime.session import WORKER_DAEMON_CONF, build_session
from yangkey.spark.source.splitting import split_records
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
PER_NODE = 16  # records yangkey.demo.sample.generate makes per node with 6 interfaces, 3 rounds


def subscriptions(directory: Path, prefix: str, partitions: int) -> Path:
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    document["organisation_prefix"] = prefix
    document["dead_letter_topic"] = f"{prefix}-dead-letter"
    document["defaults"]["partitions"] = partitions
    path = directory / f"{prefix}.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def periodic_records(count: int, seed: int) -> list[bytes]:
    """The bulk of production traffic: JSON push-updates in the envelope, one interface each
    (subscription 1042), from 500 nodes with 48 interfaces, event times moving on."""
    rng = random.Random(seed)
    records = []
    for number in range(count):
        node, interface = divmod(number % 24_000, 48)
        document = {
            "ietf-yp-notification:envelope": {
                "event-time": f"2026-11-20T10:{number // 600_000:02d}:{number // 10_000 % 60:02d}."
                f"{number % 10_000:04d}Z",
                "hostname": f"pe{node}.example.net",
                "sequence-number": number,
                "contents": {
                    "ietf-yang-push:push-update": {
                        "id": 1042,
                        "datastore-contents": {
                            "ietf-interfaces:interfaces": {
                                "interface": [
                                    {
                                        "name": f"GigabitEthernet0/0/{interface}",
                                        "oper-status": rng.choice(["up", "down"]),
                                        "admin-status": "up",
                                        "type": "iana-if-type:ethernetCsmacd",
                                    }
                                ]
                            }
                        },
                    }
                },
            }
        }
        records.append(orjson.dumps(document))
    return records


def write_input(path: Path, count: int, seed: int, data: str) -> int:
    if data == "periodic":
        records = periodic_records(count, seed)
    else:
        nodes = max(1, math.ceil(count / PER_NODE))
        records = generate(nodes=nodes, interfaces=6, rounds=3, seed=seed).records[:count]
    with path.open("wb") as out:
        out.writelines(iter_jsonl(records))
    return len(records)


def plain_produce(config: dict[str, object], messages: list[KeyedMessage]) -> float:
    producer = Producer(config)
    failures: list[str] = []

    def on_delivery(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    started = time.perf_counter()
    for message in messages:
        while True:
            try:
                producer.produce(
                    message.topic,
                    value=message.value,
                    key=message.key,
                    headers=list(message.headers),
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    remaining = producer.flush(120)
    seconds = time.perf_counter() - started
    if remaining or failures:
        raise SystemExit(f"plain producer: {remaining} undelivered, {len(failures)} failed")
    return seconds


def warm_coordinators(bootstrap: str, topic: str, tag: str) -> None:
    """One empty transaction with an offset commit: the broker creates its transaction and
    group coordinators' topics on their first use, seconds of its CPU that a production
    broker paid long ago and that the first timed run would otherwise carry."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"warm-{tag}"})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"warm-{tag}"})
    try:
        producer.init_transactions(60)
        producer.begin_transaction()
        producer.send_offsets_to_transaction(
            [TopicPartition(topic, 0, 0)], consumer.consumer_group_metadata(), 60
        )
        producer.commit_transaction(60)
    finally:
        consumer.close()


def add_spark_conf_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Spark setting of the benchmark's session (as produce --spark-conf), e.g."
        " spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=4 for the JVM's default JIT",
    )


def settings_variant(text: str) -> tuple[str, dict[str, str]]:
    """``name=k=v,k=v`` (or ``name=`` for the job's defaults) -> (name, overrides)."""
    name, _, pairs = text.partition("=")
    return name, parse_kv([p for p in pairs.split(",") if p], source="--settings")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="notifications")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=6, help="partitions per topic")
    parser.add_argument(
        "--split-size", default=32 * 1024 * 1024, type=int, help="bytes of input per Spark task"
    )
    parser.add_argument(
        "--delivery", default="exactly-once", choices=["exactly-once", "at-least-once"]
    )
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--data",
        choices=["mixed", "periodic"],
        default="mixed",
        help="mixed: the demo data set (JSON and XML, yang-patch, wrappers, bad records); "
        "periodic: JSON push-updates in the envelope only, the bulk of real traffic",
    )
    parser.add_argument(
        "-X",
        "--producer-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="librdkafka producer setting for the job and the plain loop (as produce -X)",
    )
    parser.add_argument(
        "--settings",
        action="append",
        default=[],
        metavar="NAME=K=V,K=V",
        help="compare producer settings: one row per variant, each measured --repeat times "
        "(spark job and plain loop alike), interleaved; 'NAME=' is the job's defaults",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each variant")
    parser.add_argument(
        "--sink",
        choices=["native", "confluent", "both"],
        default="native",
        help="the job's Kafka sink: the native producer (when yangkey-native has it),"
        " confluent-kafka's (YANGKEY_NATIVE_SINK=0), or both, interleaved (one row each)",
    )
    parser.add_argument(
        "--direct",
        choices=["on", "off", "both"],
        default="on",
        help="with the native sink: the native pass produces into it straight (on), or hands"
        " it KeyedMessage tuples (off: YANGKEY_DIRECT_SINK=0), or both, interleaved",
    )
    add_spark_conf_option(parser)
    args = parser.parse_args()
    spark_conf = parse_kv(args.spark_conf, source="--spark-conf")
    common = parse_kv(args.producer_config, source="--producer-config")
    variants = [settings_variant(v) for v in args.settings] or [("defaults", {})]
    sinks = ["native", "confluent"] if args.sink == "both" else [args.sink]
    if len(sinks) > 1:
        variants = [(f"{name}/{sink}", o) for name, o in variants for sink in sinks]
    directs = ["on", "off"] if args.direct == "both" else [args.direct]
    if len(directs) > 1:
        variants = [(f"{name}/{d}", o) for name, o in variants for d in directs]

    work = Path(tempfile.mkdtemp(prefix="yangkey-bench-"))
    tag = uuid.uuid4().hex[:6]
    data = work / "notifications.jsonl"
    started = time.perf_counter()
    count = write_input(data, args.count, args.seed, args.data)
    size_mb = data.stat().st_size / 1e6
    print(
        f"input: {count:,} notifications, {size_mb:,.0f} MB"
        f" ({time.perf_counter() - started:.1f}s to generate)",
        flush=True,
    )

    broker = None if args.bootstrap else EmbeddedKafka(heap="1g").start()
    bootstrap = args.bootstrap or (broker.bootstrap if broker else "")
    spark = None
    rows: dict[str, dict[str, list[float]]] = {
        name: {
            k: []
            for k in ("spark", "plain", "ratio", "broker", "job", "plain_cpu", "load", "worker_mb")
        }
        for name, _ in variants
    }
    try:
        spark_subs = subscriptions(work, f"bench-spark-{tag}", args.partitions)
        plain_subs = subscriptions(work, f"bench-plain-{tag}", args.partitions)
        for path in (spark_subs, plain_subs):
            ensure_topics(bootstrap, topic_specs(BuilderSpec.from_file(path).catalog(), None))

        # 2. the core alone, in this process (and the messages for 3)
        builder = builder_for(BuilderSpec.from_file(plain_subs))
        catalog_dead_letter = builder.catalog.dead_letter_topic
        tally = Tally()
        started = time.perf_counter()
        records = split_records(data.read_bytes(), str(data), "lines")
        messages = list(outgoing(records, builder, catalog_dead_letter, tally))
        transform_seconds = time.perf_counter() - started
        print(
            f"transform: {tally.records:,} records -> {len(messages):,} messages in"
            f" {transform_seconds:.1f}s (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        renamed = Counter(
            {k.replace("bench-plain-", "bench-spark-"): v for k, v in tally.produced.items()}
        )

        base = JobConfig.of(
            subscriptions=str(spark_subs),
            inputs=(str(data),),
            bootstrap=bootstrap,
            master=args.master,
            split_size=args.split_size,
            delivery=args.delivery,
            spark_conf={"spark.ui.enabled": "false", **WORKER_DAEMON_CONF, **spark_conf},
        )
        spark = build_session(base.spark)
        spark.sparkContext.parallelize([0], 1).count()  # JVM and Python daemon up
        if broker is not None:
            warm_coordinators(bootstrap, f"bench-spark-{tag}-dead-letter", tag)
            time.sleep(1)
            idle_before, idle_started = tree_cpu(broker.pid), time.perf_counter()
            time.sleep(3)
            idle = (tree_cpu(broker.pid) - idle_before) / (time.perf_counter() - idle_started)
            print(
                f"broker idle: {idle:.2f} CPU-s per second (counted in its CPU per record)",
                flush=True,
            )
        for repeat in range(args.repeat):
            # ABBA: the broker's cleanup after one run lands in the next one's broker CPU
            for name, overrides in variants[:: -1 if repeat % 2 else 1]:
                producer = {**common, **overrides}
                # 3. plain single-process produce loop of the pre-computed messages, with the
                # producer settings the job's tasks use (minus the transaction)
                job_producer = prepare(
                    JobConfig.of(
                        subscriptions=str(plain_subs),
                        inputs=(str(data),),
                        bootstrap=bootstrap,
                        delivery="at-least-once",
                        producer_overrides=producer,
                    )
                ).sink.producer_config
                broker_pid = broker.pid if broker else None
                plain_before, _ = job_and_broker_cpu(broker_pid)
                plain_seconds = plain_produce(dict(job_producer), messages)
                plain_after, _ = job_and_broker_cpu(broker_pid)
                plain_cpu = plain_after - plain_before
                # 1. the Spark job (session started before the clock), a new run each time
                run_id = re.sub(r"[^A-Za-z0-9_.]", "_", f"bench{tag}{name}{repeat}")
                config = base.but(producer_overrides=producer, run_id=run_id)
                parts = name.split("/")
                sink = parts[1] if len(sinks) > 1 else sinks[0]
                os.environ[ENV_SINK] = "0" if sink == "confluent" else "1"
                os.environ[DIRECT_ENV] = "0" if "off" in (args.direct, parts[-1]) else "1"
                job_before, broker_before = job_and_broker_cpu(broker_pid)
                with RssSampler(broker_pid) as rss:
                    summary = run(config, spark)
                job_after, broker_after = job_and_broker_cpu(broker_pid)
                worker_mb, workers = rss.peak("worker")
                jvm_mb, _ = rss.peak("jvm")
                job_seconds, broker_seconds = job_after - job_before, broker_after - broker_before
                if summary.tally.records != tally.records or summary.tally.produced != renamed:
                    print(
                        "warning: the Spark job's counts differ from the single-process transform",
                        file=sys.stderr,
                    )
                spark_rate = summary.tally.records / summary.seconds
                plain_rate = tally.records / plain_seconds
                load = os.getloadavg()[0]
                row = rows[name]
                row["spark"].append(spark_rate)
                row["plain"].append(plain_rate)
                row["ratio"].append(spark_rate / plain_rate)
                row["broker"].append(broker_seconds * 1e6 / max(1, summary.tally.records))
                row["job"].append(job_seconds * 1e6 / max(1, summary.tally.records))
                row["plain_cpu"].append(plain_cpu * 1e6 / max(1, tally.records))
                row["load"].append(load)
                row["worker_mb"].append(worker_mb)
                print(
                    f"run {repeat + 1} {name}: spark {spark_rate:,.0f} records/s"
                    f" ({summary.seconds:.1f}s, {summary.partitions} tasks), plain"
                    f" {plain_rate:,.0f}/s, ratio {spark_rate / plain_rate:.2f}, broker CPU"
                    f" {broker_seconds:.1f}s, CPU per record: job {row['job'][-1]:.1f} µs,"
                    f" plain {row['plain_cpu'][-1]:.1f} µs, load {load:.1f}; peak RSS: Python"
                    f" worker {worker_mb:.0f} MB (largest of {workers} worker processes; PSS"
                    f" {rss.peak_pss():.0f} MB), JVM"
                    f" {jvm_mb:.0f} MB, this driver {driver_rss_mb():.0f} MB;"
                    f" native pass keyed {summary.tally.native:,} records, native sink produced"
                    f" {summary.tally.native_sink:,}",
                    flush=True,
                )
        del messages
    finally:
        if spark is not None:
            spark.stop()
        if broker is not None:
            broker.stop()
        # The generated input is 100+ MB per run: left behind, runs fill /tmp.
        shutil.rmtree(work, ignore_errors=True)

    transform_rate = tally.records / transform_seconds
    print()
    print(
        f"{args.data}, {count:,} records, {args.master}, {args.delivery}; medians of"
        f" {args.repeat} run(s); transform only (1 process) {transform_rate:,.0f} records/s"
    )
    print(
        f"{'settings':16}{'spark/s':>10}{'plain/s':>10}{'ratio':>7}"
        f"{'broker CPU µs/rec':>19}{'job µs':>8}{'plain µs':>9}{'load':>6}{'worker MB':>10}"
        "  producer settings"
    )
    for name, overrides in variants:
        row = rows[name]
        shown = ",".join(f"{k}={v}" for k, v in {**common, **overrides}.items()) or "defaults"
        print(
            f"{name:16}{median(row['spark']):>10,.0f}{median(row['plain']):>10,.0f}"
            f"{median(row['ratio']):>7.2f}{median(row['broker']):>19.1f}"
            f"{median(row['job']):>8.1f}{median(row['plain_cpu']):>9.1f}"
            f"{median(row['load']):>6.1f}{median(row['worker_mb']):>10.0f}  {shown}"
        )
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
