"""The Spark producer under faults, against the real broker: resumed runs over changed input,
crashed runs' open transactions, reset checkpoints, oversized records, broker outages, and
stopping or killing the driver. Every test ends with an exact read_committed count.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from test_spark_job import (
    Setup,
    Triple,
    _env,
    append_raw,
    consume,
    fill_raw_topic,
    make_setup,
    reference,
    sample_records,
    triples,
    write_jsonl,
)

from yangkey.errors import ConfigError, InputError
from yangkey.kafka.config import TopicSpec, ensure_topics, producer_config
from yangkey.messages import HEADER_TRUNCATED_FROM
from yangkey.spark.delivery.markers import MarkerStore, RunScope
from yangkey.spark.job import run
from yangkey.spark.planning import prepare
from yangkey.spark.progress import Summary
from yangkey.spark.source.splitting import split_records


def expected_of(setup: Setup, records: list[bytes]) -> Counter[Triple]:
    return reference(setup, ((raw, "?") for raw in records))[0]


def everything(bootstrap: str, setup: Setup) -> Counter[Triple]:
    return triples(consume(bootstrap, [*setup.topics, setup.dead_letter]))


# --------------------------------------------------------------------------- 15.1 resume


def test_resumed_raw_topic_run_produces_exactly_the_appended_records(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    first, second = sample_records(2), sample_records(3)[:25]
    fill_raw_topic(kafka_bootstrap, topic_name, first)
    config = setup.config(kafka_bootstrap, [f"kafka://{topic_name}"], max_records_per_task=20)
    one = run(config, spark)
    assert one.tally.records == len(first) and one.skipped == 0

    append_raw(kafka_bootstrap, topic_name, second)
    config = config.but(max_records_per_task=7)  # a different cut changes nothing committed
    two = run(config, spark)  # the same command: the same (derived) run id
    assert two.run_id == one.run_id
    produced_now = two.tally.records - one.tally.records
    assert produced_now == len(second), "exactly the appended records"
    assert two.skipped == one.partitions
    assert everything(kafka_bootstrap, setup) == expected_of(setup, [*first, *second])


def test_resumed_file_run_after_growth_fails_loudly_when_committed_bytes_change(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    records = sample_records(3)
    data = write_jsonl(tmp_path / "in.jsonl", records[:40])
    config = setup.config(kafka_bootstrap, [str(data)], split_size=4096)
    one = run(config, spark)
    with data.open("ab") as stream:
        stream.write(write_jsonl(tmp_path / "more.jsonl", records[40:]).read_bytes())
    config = config.but(split_size=1 << 20)
    two = run(config, spark)
    assert two.tally.records - one.tally.records == len(records) - 40
    expected, _ = reference(setup, split_records(data.read_bytes(), str(data)))
    assert everything(kafka_bootstrap, setup) == expected

    data.write_bytes(b"{}\n" + data.read_bytes())  # committed bytes change under the run
    with pytest.raises(InputError, match=f"changed since run {one.run_id}"):
        prepare(config)
    assert everything(kafka_bootstrap, setup) == expected


# --------------------------------------------------------------------------- 15.4 + 15.5


_CRASHER = """
import os, sys
from confluent_kafka import Producer
producer = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": sys.argv[2],
                     "transaction.timeout.ms": 600000})
producer.init_transactions(30)
producer.begin_transaction()
producer.produce(sys.argv[3], key=b"zombie", value=b"left open by a crashed driver")
assert producer.flush(30) == 0
os._exit(0)  # a crash: no commit, no abort
"""


def test_crashed_run_is_resumed_and_its_open_transaction_aborted(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path, partitions=1)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(2))
    config = setup.config(kafka_bootstrap, [str(data)], split_size=4096)
    prepared = prepare(config)
    run_id = prepared.sink.run_id
    # The crashed run had handed out tasks 0..n-1; task 0 left a transaction open on a topic
    # the resumed run writes, which blocks read_committed readers until it is aborted.
    store = MarkerStore(RunScope.of(
        {"bootstrap.servers": kafka_bootstrap}, "yangkey", run_id, setup.dead_letter))
    store.record(len(prepared.plan))
    topic = setup.topics[0]
    subprocess.run(
        [sys.executable, "-c", _CRASHER, kafka_bootstrap, f"yangkey-{run_id}-0", topic],
        check=True, timeout=60,
    )
    resumed = prepare(config)
    assert resumed.fenced == len(prepared.plan), "every task of the crashed run was fenced"
    assert resumed.plan[0][0] == len(prepared.plan), "fresh task numbers"
    summary = run(config, spark, prepared=resumed)
    expected, tally = reference(setup, split_records(data.read_bytes(), str(data)))
    assert summary.tally == tally
    assert everything(kafka_bootstrap, setup) == expected, "nothing blocked, nothing twice"


def test_cli_prints_the_run_id_and_the_same_command_resumes(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(1))
    command = [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions",
               str(setup.subscriptions), "--input", str(data), "--bootstrap", kafka_bootstrap,
               "--create-topics", "--master", "local[1]", "--split-size", "2k"]
    # local[1] does not retry: the crashed task fails the job and leaves its transaction open
    crash = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False,
                           env={**_env(), "YANGKEY_TEST_FAIL_AFTER": "3"})
    assert crash.returncode == 1, crash.stderr[-3000:]
    run_id = crash.stderr.split("run ", 1)[1].split()[0]
    errors = [line for line in crash.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"--run-id {run_id}" in errors[0], crash.stderr[-3000:]

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, env=_env(),
                           check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"run {run_id}: resuming" in again.stderr and "aborted" in again.stderr
    expected, _ = reference(setup, split_records(data.read_bytes(), str(data)))
    assert everything(kafka_bootstrap, setup) == expected, "each message once"

    data.write_bytes(b"{}\n" + data.read_bytes())
    failed = subprocess.run(command, capture_output=True, text=True, timeout=300, env=_env(),
                            check=False)
    assert failed.returncode == 1
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in failed.stderr
    assert f"changed since run {run_id}" in errors[0]


# --------------------------------------------------------------------------- 19.1 identity


def test_stream_on_a_reset_checkpoint_is_a_new_run_and_foreign_markers_refuse(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    first, second = sample_records(2), sample_records(3)[:20]
    fill_raw_topic(kafka_bootstrap, topic_name, first)
    checkpoint = tmp_path / "checkpoint"
    config = setup.config(kafka_bootstrap, [f"kafka://{topic_name}"], stream=True,
                          available_now=True, checkpoint=str(checkpoint))
    one = run(config, spark)
    assert one.tally.records == len(first)

    # The checkpoint deleted and the stream started again on the same path: a new run
    # that reads from --from (earliest), not the old run silently skipping batch 0.
    for path in sorted(checkpoint.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    append_raw(kafka_bootstrap, topic_name, second)
    two = run(config, spark)
    assert two.run_id != one.run_id
    assert two.tally.records == len(first) + len(second)
    expected = expected_of(setup, first) + expected_of(setup, [*first, *second])
    assert everything(kafka_bootstrap, setup) == expected

    # The old run id forced onto a fresh checkpoint: its markers are ahead -> refuse.
    config = config.but(run_id=one.run_id, checkpoint=str(tmp_path / "another"))
    with pytest.raises(ConfigError, match="another checkpoint"):
        run(config, spark)
    assert everything(kafka_bootstrap, setup) == expected


# --------------------------------------------------------------------------- 10.5 / 19.2


def big_notification(size: int) -> bytes:
    pad = b"x" * size
    return (
        b'{"ietf-yp-notification:envelope": {"event-time": "2026-11-20T10:00:00Z",'
        b' "hostname": "big", "contents": {"ietf-yang-push:push-update": {"id": 1042,'
        b' "datastore-contents": {"ietf-interfaces:interfaces": {"interface":'
        b' [{"name": "eth0", "description": "' + pad + b'"}]}}}}}}'
    )


def _check_oversized(bootstrap: str, setup: Setup, summary: Summary, good: list[bytes],
                     big: bytes) -> None:
    assert summary.tally.rejected["oversized"] == 1
    messages = consume(bootstrap, [*setup.topics, setup.dead_letter])
    letters = [m for m in messages if m.topic() == setup.dead_letter
               and dict(m.headers() or []).get(HEADER_TRUNCATED_FROM) == str(len(big)).encode()]
    assert len(letters) == 1 and big.startswith(letters[0].value() or b"?")
    rest = Counter(t for t in triples(messages).elements() if t[2] != letters[0].value())
    assert rest == expected_of(setup, good), "every other record delivered exactly once"


def test_oversized_line_is_dead_lettered_and_the_batch_goes_on(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    good = sample_records(1)
    big = big_notification(1_200_000)
    data = write_jsonl(tmp_path / "in.jsonl", [*good[:5], big, *good[5:]])
    summary = run(setup.config(kafka_bootstrap, [str(data)]), spark)
    _check_oversized(kafka_bootstrap, setup, summary, good, big)


def test_oversized_record_is_dead_lettered_and_the_stream_goes_on(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str
) -> None:
    setup = make_setup(tmp_path)
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, partitions=1)],
                  extra_configs={"max.message.bytes": "4000000"})
    good = sample_records(1)
    big = big_notification(2_000_000)
    producer = Producer(producer_config(kafka_bootstrap, {"message.max.bytes": 4_000_000}))
    for raw in [*good[:5], big, *good[5:]]:
        producer.produce(topic_name, value=raw, partition=0)
    assert producer.flush(30) == 0
    config = setup.config(kafka_bootstrap, [f"kafka://{topic_name}"], stream=True,
                          available_now=True, checkpoint=str(tmp_path / "ck"))
    summary = run(config, spark)
    _check_oversized(kafka_bootstrap, setup, summary, good, big)


# --------------------------------------------------------------------------- 19.3 outage


@pytest.fixture
def paused_broker(kafka_broker: Any) -> Iterator[Any]:
    """``pause(seconds)`` freezes the session broker (SIGSTOP) in a background thread."""
    if kafka_broker.embedded is None or kafka_broker.embedded.pid is None:
        pytest.skip("needs the embedded broker to pause it")
    pid = kafka_broker.embedded.pid
    threads: list[threading.Thread] = []

    def pause(seconds: float) -> None:
        def freeze() -> None:
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(seconds)
            finally:
                os.kill(pid, signal.SIGCONT)

        thread = threading.Thread(target=freeze)
        thread.start()
        threads.append(thread)

    try:
        yield pause
    finally:
        for thread in threads:
            thread.join()
        os.kill(pid, signal.SIGCONT)


def _stream_in_thread(config: Any, spark: SparkSession, **kwargs: Any) -> tuple[
        threading.Thread, list[object], list[int]]:
    outcome: list[object] = []
    batches: list[int] = []

    def target() -> None:
        try:
            outcome.append(run(config, spark, on_batch=lambda b, _: batches.append(b), **kwargs))
        except Exception as exc:  # the test inspects it
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome, batches


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


def _stop_streams(spark: SparkSession) -> None:
    for query in spark.streams.active:
        query.stop()


def test_idle_stream_outlives_an_outage_longer_than_its_budget_by_restarting(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path, topic_name: str,
    paused_broker: Any,
) -> None:
    setup = make_setup(tmp_path)
    first, second = sample_records(1), sample_records(2)[:15]
    fill_raw_topic(kafka_bootstrap, topic_name, first)
    config = setup.config(kafka_bootstrap, [f"kafka://{topic_name}"], stream=True,
                          checkpoint=str(tmp_path / "ck"), trigger_interval="1s",
                          outage_budget=4.0, restart_on_failure=3)
    restarts: list[str] = []
    thread, outcome, batches = _stream_in_thread(
        config, spark, on_restart=lambda error, n: restarts.append(error.message()))
    try:
        _wait(lambda: len(batches) >= 1, 120, "the first batch")
        paused_broker(10.0)  # idle and caught up: only the offset look-ups see the outage
        _wait(lambda: bool(restarts), 60, "a restart after the budget ran out")
        append_raw(kafka_bootstrap, topic_name, second)  # blocks until the broker is back
        expected = expected_of(setup, [*first, *second])
        _wait(lambda: everything(kafka_bootstrap, setup) == expected, 120, "the new records")
    finally:
        _stop_streams(spark)
        thread.join(60)
    assert "outage budget of 4s" in restarts[0]
    assert not outcome or not isinstance(outcome[0], Exception), outcome
    assert everything(kafka_bootstrap, setup) == expected


# --------------------------------------------------------------------------- 19.4 stopping


def _session_processes(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _kill_session(root: int) -> None:
    """SIGKILL whatever of the job's session is left; a process may end between the listing
    and the kill (a test's cleanup must not fail on that)."""
    for pid in _session_processes(root):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _start_stream(bootstrap: str, setup: Setup, topic: str, checkpoint: Path,
                  *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
    command = [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions",
               str(setup.subscriptions), "--input", f"kafka://{topic}", "--bootstrap",
               bootstrap, "--create-topics", "--master", "local[2]", "--stream",
               "--checkpoint", str(checkpoint), "--trigger-interval", "1s", *extra]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               text=True, env=_env(), start_new_session=True)
    lines: list[str] = []

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)

    threading.Thread(target=drain, daemon=True).start()
    return process, lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_stopping_or_killing_the_driver_leaves_no_process_and_no_traceback(
    kafka_bootstrap: str, tmp_path: Path, topic_name: str, how: str
) -> None:
    setup = make_setup(tmp_path)
    records = sample_records(1)
    fill_raw_topic(kafka_bootstrap, topic_name, records)
    process, lines = _start_stream(kafka_bootstrap, setup, topic_name, tmp_path / "ck")
    try:
        _wait(lambda: any(line.startswith("batch 0") for line in lines), 240, "batch 0")
        assert len(_session_processes(process.pid)) > 2, "driver, JVM and Python workers"
        os.kill(process.pid, signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
        code = process.wait(90)
        _wait(lambda: not _session_processes(process.pid), 30, "every process to end")
    finally:
        _kill_session(process.pid)
    if how == "sigterm":
        text = "".join(lines)
        assert code == 128 + signal.SIGTERM, text
        assert "Traceback" not in text and "py4j" not in text.lower(), text
        assert lines[-1].startswith("interrupted"), text
    assert everything(kafka_bootstrap, setup) == expected_of(setup, records)


def test_cli_outage_beyond_the_budget_is_one_error_line(
    kafka_bootstrap: str, tmp_path: Path, topic_name: str, paused_broker: Any
) -> None:
    setup = make_setup(tmp_path)
    records = sample_records(1)
    fill_raw_topic(kafka_bootstrap, topic_name, records)
    process, lines = _start_stream(kafka_bootstrap, setup, topic_name, tmp_path / "ck",
                                   "--outage-budget", "3s")
    try:
        _wait(lambda: any(line.startswith("batch 0") for line in lines), 240, "batch 0")
        paused_broker(10.0)  # idle between batches: the offset look-ups meet the outage
        code = process.wait(120)
    finally:
        _kill_session(process.pid)
    text = "".join(lines)
    errors = [line for line in lines if line.startswith("error:")]
    assert code == 1 and len(errors) == 1, text
    assert "outage budget of 3s" in errors[0] and "start it again on the same checkpoint" in text
    assert "Traceback" not in text and "\tat org.apache" not in text, text
    assert everything(kafka_bootstrap, setup) == expected_of(setup, records)
