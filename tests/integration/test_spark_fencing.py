"""Issue 15.5 on the real broker: a later run with another run id (same transactional-id
prefix) aborts what a crashed run left open, and leaves a live run's transactions alone.
Every test ends with an exact read_committed count."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession
from test_spark_job import (
    Setup,
    Triple,
    _env,
    consume,
    make_setup,
    reference,
    sample_records,
    triples,
    write_jsonl,
)

from yangkey.kafka.config import connection_settings
from yangkey.spark.config import SPARK_PRODUCER_DEFAULTS
from yangkey.spark.delivery.fencing import DONE, FENCED, RUNNING, Runs, heartbeat_for
from yangkey.spark.delivery.markers import RunScope
from yangkey.spark.delivery.sink import KafkaSink
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.job import run
from yangkey.spark.planning import prepare
from yangkey.spark.preflight import check_topics, topic_specs
from yangkey.spark.source.splitting import split_records
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing

STALE_AFTER = 3.0
TRANSACTION_TIMEOUT = float(str(SPARK_PRODUCER_DEFAULTS["transaction.timeout.ms"])) / 1000

# Run A's driver and two of its tasks in one process: task 0 commits (with its marker),
# task 1 is mid-transaction when the driver is SIGKILLed.
_RUN_A = """
import sys, time
from yangkey.spark.delivery.fencing import heartbeat_for
from yangkey.spark.delivery.sink import KafkaSink, produce_partition
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.transform import BuilderSpec, Tally, builder_for, outgoing
from yangkey.spark.source.splitting import split_records

bootstrap, run_id, subscriptions, dead_letter, committed, left_open = sys.argv[1:7]
spec = SinkSpec({"bootstrap.servers": bootstrap, "transaction.timeout.ms": 600000},
                dead_letter, run_id, timeout=30.0)
heartbeat = heartbeat_for(spec, float(sys.argv[7]), False, 2, True)
heartbeat.start()
builder = builder_for(BuilderSpec.from_file(subscriptions))
data = open(committed, "rb").read()
produce_partition(split_records(data, committed), builder, spec, 0, 0, 0, "")
sink = KafkaSink(spec, 1, 0)
assert sink.begin() is None
data = open(left_open, "rb").read()
for message in outgoing(split_records(data, left_open), builder, dead_letter, Tally()):
    sink.send(message)
sink.flush()
print("mid-transaction", flush=True)
time.sleep(600)
"""


def _topics(bootstrap: str, setup: Setup) -> None:
    catalog = BuilderSpec.from_file(setup.subscriptions).catalog()
    check_topics({"bootstrap.servers": bootstrap}, topic_specs(catalog, None), create=True,
                 extra_configs={})


def _expected(setup: Setup, path: Path) -> Counter[Triple]:
    return reference(setup, split_records(path.read_bytes(), str(path)))[0]


def _runs(bootstrap: str, setup: Setup, run_id: str) -> Runs:
    settings = {"bootstrap.servers": bootstrap}
    return Runs(RunScope.of(settings, "yangkey", run_id, setup.dead_letter), STALE_AFTER)


def _state_of(bootstrap: str, setup: Setup, run_id: str) -> str:
    records = {r.run_id: r for r in _runs(bootstrap, setup, "observer").others()}
    return records[run_id].state


def _crash_run(bootstrap: str, setup: Setup, tmp_path: Path, run_id: str) -> Path:
    """Run ``run_id`` SIGKILLed mid-transaction; returns the input its task 0 committed."""
    records = sample_records(3)
    committed = write_jsonl(tmp_path / f"{run_id}-committed.jsonl", records[:20])
    left_open = write_jsonl(tmp_path / f"{run_id}-open.jsonl", records[20:40])
    driver = subprocess.Popen(
        [sys.executable, "-c", _RUN_A, bootstrap, run_id, str(setup.subscriptions),
         setup.dead_letter, str(committed), str(left_open), str(STALE_AFTER)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )
    try:
        assert driver.stdout is not None and driver.stderr is not None
        line = driver.stdout.readline().strip()
        assert line == "mid-transaction", driver.stderr.read()[-3000:]
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(30)
    return committed


def test_crashed_run_of_another_run_id_is_fenced_by_the_next_run(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)  # A's open transaction spans B's partitions
    _topics(kafka_bootstrap, setup)
    committed = _crash_run(kafka_bootstrap, setup, tmp_path, "crashedA")
    killed = time.monotonic()
    assert _state_of(kafka_bootstrap, setup, "crashedA") == RUNNING  # nobody told the broker
    time.sleep(STALE_AFTER)  # A's heartbeat goes stale

    data_b = write_jsonl(tmp_path / "b.jsonl", sample_records(2))
    config = setup.config(kafka_bootstrap, [str(data_b)], stale_after=STALE_AFTER)
    prepared = prepare(config)
    assert prepared.sink.run_id != "crashedA"
    assert prepared.notes == [
        "run crashedA (prefix yangkey) had stopped without finishing: 1 open transaction(s)"
        " of it aborted"
    ], "task 0 had committed (its marker says so): only task 1 is fenced"
    summary = run(config, spark, prepared=prepared)
    assert summary.tally.records == len(sample_records(2))

    expected = _expected(setup, committed) + _expected(setup, data_b)
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected, (
        "A's committed data and B's, each once; A's open transaction aborted, blocking nothing"
    )
    waited = time.monotonic() - killed
    print(f"readers saw everything {waited:.1f}s after run A was killed")  # -s shows it
    assert waited < TRANSACTION_TIMEOUT / 4, f"{waited:.0f}s: not the broker's timeout"
    assert _state_of(kafka_bootstrap, setup, "crashedA") == FENCED  # the next run skips it
    assert _state_of(kafka_bootstrap, setup, prepared.sink.run_id) == DONE


def test_a_live_run_of_another_run_id_is_left_alone(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    _topics(kafka_bootstrap, setup)
    # Run L is live: its driver beats, and its task 0 holds a transaction open all along.
    data_l = write_jsonl(tmp_path / "l.jsonl", sample_records(3)[:20])
    spec = SinkSpec({"bootstrap.servers": kafka_bootstrap}, setup.dead_letter, "liveL",
                    timeout=30.0)
    heartbeat = heartbeat_for(spec, STALE_AFTER, False, 1, True)
    heartbeat.start()
    builder = builder_for(BuilderSpec.from_file(setup.subscriptions))
    sink = KafkaSink(spec, 0, 0)
    try:
        assert sink.begin() is None
        tally = Tally()
        for message in outgoing(split_records(data_l.read_bytes(), str(data_l)), builder,
                                setup.dead_letter, tally):
            sink.send(message)
        sink.flush()

        data_b = write_jsonl(tmp_path / "b.jsonl", sample_records(2))
        config = setup.config(kafka_bootstrap, [str(data_b)], stale_after=STALE_AFTER)
        prepared = prepare(config)
        assert len(prepared.notes) == 1
        assert prepared.notes[0].startswith("live run(s) under prefix yangkey left alone: liveL")
        run(config, spark, prepared=prepared)
        # Longer than the bound with the transaction still open: a look now leaves it too.
        time.sleep(STALE_AFTER * 1.5)
        scan = _runs(kafka_bootstrap, setup, "another").scan()
        assert not scan.fenced and [r for r, _ in scan.live] == ["liveL"]
        sink.commit(tally)  # raises if L's transactional id had been fenced
    finally:
        sink.close()
        heartbeat.stop(failed=False)
    expected = _expected(setup, data_l) + _expected(setup, data_b)
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected
    assert _state_of(kafka_bootstrap, setup, "liveL") == DONE


def test_a_run_that_crashed_just_before_is_fenced_once_its_heartbeat_goes_stale(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    _topics(kafka_bootstrap, setup)
    committed = _crash_run(kafka_bootstrap, setup, tmp_path, "crashedC")
    killed = time.monotonic()
    spec = SinkSpec({"bootstrap.servers": kafka_bootstrap}, setup.dead_letter, "watcherW",
                    timeout=30.0)
    runs = _runs(kafka_bootstrap, setup, "watcherW")
    first = runs.scan()  # what a run starting now finds: C still looks alive
    assert not first.fenced and [r for r, _ in first.live] == ["crashedC"]
    heartbeat = heartbeat_for(spec, STALE_AFTER, False, 0, True)
    heartbeat.start()
    try:
        deadline = time.monotonic() + 60
        while not any(scan.fenced for scan in heartbeat.scans):
            assert time.monotonic() < deadline, heartbeat.scans
            time.sleep(0.2)
    finally:
        heartbeat.stop(failed=False)
    assert heartbeat.scans[-1].fenced == {"crashedC": 1}
    assert time.monotonic() - killed < 5 * STALE_AFTER, "within a few heartbeat periods"
    expected = _expected(setup, committed)
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == expected


def test_a_failed_run_is_fenced_at_once_and_a_finished_one_never(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    _topics(kafka_bootstrap, setup)
    settings = connection_settings({"bootstrap.servers": kafka_bootstrap})
    for run_id, failed in (("failedF", True), ("doneD", False)):
        spec = SinkSpec(settings, setup.dead_letter, run_id, timeout=30.0)
        heartbeat = heartbeat_for(spec, 600.0, False, 3, True)  # beats rarely: never stale
        heartbeat.start()
        heartbeat.stop(failed=failed)
    scan = _runs(kafka_bootstrap, setup, "newer").scan()
    assert scan.fenced == {"failedF": 3} and not scan.live and not scan.unknown
    assert _state_of(kafka_bootstrap, setup, "failedF") == FENCED
    assert _state_of(kafka_bootstrap, setup, "doneD") == DONE
    assert _runs(kafka_bootstrap, setup, "newest").scan().fenced == {}


def test_a_stream_records_each_micro_batch_width_and_all_its_ids_are_fenced(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    _topics(kafka_bootstrap, setup)
    spec = SinkSpec({"bootstrap.servers": kafka_bootstrap}, setup.dead_letter, "streamS",
                    timeout=30.0)
    heartbeat = heartbeat_for(spec, 600.0, True, 0, True)
    heartbeat.start()
    heartbeat.grow(2)
    heartbeat.grow(4)  # a wider micro-batch: recorded before its transactions open
    heartbeat.grow(3)
    # Task 0 commits micro-batch 0 (its marker), then opens the next transaction.
    sink = KafkaSink(spec, 0, 0, batch_id=0)
    assert sink.begin() is None
    sink.commit(Tally())
    sink.close()
    stuck = KafkaSink(spec, 0, 0, batch_id=1)
    assert stuck.begin() is None
    builder = builder_for(BuilderSpec.from_file(setup.subscriptions))
    for message in outgoing(iter([(sample_records(1)[0], "x:1")]), builder, setup.dead_letter,
                            Tally()):
        stuck.send(message)
    stuck.flush()
    heartbeat.stop(failed=True)
    scan = _runs(kafka_bootstrap, setup, "later").scan()
    assert scan.fenced == {"streamS": 4}, "a stream's marked tasks may have a batch open"
    assert triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter])) == Counter()
