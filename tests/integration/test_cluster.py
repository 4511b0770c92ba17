"""yangkey on a three-broker Kafka cluster (conftest.kafka_cluster, as ``yangkey kafka start
--brokers 3`` runs it: 3 replicas and min.insync.replicas 2 by default).

Every topic a produce run creates takes the cluster's replication; the run survives losing a
partition leader; two of three brokers away past the delivery timeout fail it with one error
line (the rerun completes it); a broker whose disk is replaced loses nothing. Each check reads
back with its own read_committed consumer and compares with the core's answer over the input
(test_spark_job.reference): nothing lost, nothing twice.

The schema registry on the same cluster (issue 31, item 7): a running instance whose store's
leader is killed recovers by itself, with one replica (reads from memory, writes 503 until the
broker is back) and with the default three (a new leader, a short pause).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    ResourceType,
)
from factories import unique_name
from pyspark.sql import SparkSession
from registry_calls import call, json_schema, until
from test_spark_job import Setup, Triple, _env, consume, make_setup, reference, triples, write_jsonl

from yangkey.demo.sample import generate_count
from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.log import END_OFFSET_ATTEMPT, KafkaLog, ensure_log_topic
from yangkey.registry.running import running_registry
from yangkey.spark.job import run
from yangkey.spark.source.splitting import split_records

REPLICAS = 3
RECORDS = 2000
SPLIT = "96k"
"""About ten tasks (one transaction each) over the input: a fault lands between them."""


@pytest.fixture
def cluster(kafka_cluster: EmbeddedKafka) -> EmbeddedKafka:
    """The module's cluster, whole: the nodes an earlier test took away are restarted first
    (not after the test: the module's last one would restart them only to stop them)."""
    down = [node.node_id for node in kafka_cluster.nodes if not node.running]
    if down:
        kafka_cluster.start_nodes(*down)
    return kafka_cluster


def admin(cluster: EmbeddedKafka) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 3})


def wait_in_sync(cluster: EmbeddedKafka, topics: list[str], timeout: float = 120) -> None:
    """Until every partition of ``topics`` has all its replicas in sync again."""
    deadline = time.monotonic() + timeout
    while True:
        metadata = admin(cluster).list_topics(timeout=10)
        lagging = [
            f"{name}/{p}"
            for name in topics
            for p, partition in metadata.topics[name].partitions.items()
            if len(partition.isrs) < REPLICAS or partition.leader < 0
        ]
        if not lagging:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"not in sync after {timeout:.0f}s: {lagging[:5]}")
        time.sleep(0.5)


def leader_of(cluster: EmbeddedKafka, topic: str, partition: int = 0) -> int:
    metadata = admin(cluster).list_topics(topic, timeout=10)
    return int(metadata.topics[topic].partitions[partition].leader)


def records_in(cluster: EmbeddedKafka, topics: list[str]) -> int:
    """Records written to ``topics`` so far, committed or not (0 while they do not exist)."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "watch",
                         "log_level": 0})
    try:
        metadata = consumer.list_topics(timeout=5)
        return sum(
            consumer.get_watermark_offsets(TopicPartition(name, p), timeout=5, cached=False)[1]
            for name in topics
            if name in metadata.topics
            for p in metadata.topics[name].partitions
        )
    except KafkaException:  # a topic just created, its leaders not yet known: not yet
        return 0
    finally:
        consumer.close()


@dataclass
class Produce:
    """``yangkey produce`` in a subprocess, its stderr collected line by line."""

    process: subprocess.Popen[str]
    lines: list[str]

    @classmethod
    def start(cls, command: list[str]) -> Produce:
        env = {**_env(), "PYTHONFAULTHANDLER": "1"}
        process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   text=True, env=env)
        lines: list[str] = []

        def drain() -> None:
            assert process.stderr is not None
            lines.extend(process.stderr)

        threading.Thread(target=drain, daemon=True).start()
        return cls(process, lines)

    def wait(self, timeout: float = 300) -> int:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            # Where it hangs: the JVMs' threads (jstack), then every Python process's, the
            # Spark workers' included (faulthandler, PYTHONFAULTHANDLER=1, prints them on
            # SIGABRT; a worker's stderr reaches ours through the driver JVM).
            below = descendants(self.process.pid)
            stacks = [jstack(pid) for pid, name in below if name == "java"]
            for pid, name in below:
                if name.startswith("python"):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGABRT)
            time.sleep(2)
            self.process.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(30)
            self.process.kill()
            for pid, _ in below:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
            still = f"produce still running after {timeout:g}s:\n{self.stderr}"
            raise AssertionError(still + "\n".join(stacks)) from None
        time.sleep(0.2)  # the drain thread's last lines
        return code

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


def descendants(root: int) -> list[tuple[int, str]]:
    """(pid, command name) of every process below ``root``, from /proc."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            parent = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
            names[int(entry.name)] = name
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append((child, names[child]))
            todo.append(child)
    return found


def jstack(pid: int) -> str:
    try:
        done = subprocess.run(
            ["jstack", str(pid)], check=False, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"jstack {pid}: {exc}"
    return f"--- jstack {pid}\n{done.stdout}{done.stderr}"


def produce_command(cluster: EmbeddedKafka, setup: Setup, data: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions",
            str(setup.subscriptions), "--input", str(data), "--bootstrap", cluster.bootstrap,
            "--create-topics", "--master", "local[2]", "--split-size", SPLIT, *extra]


def when_records_flow(cluster: EmbeddedKafka, setup: Setup, run: Produce,
                      then: Callable[[], None]) -> None:
    """``then()`` as soon as the first task's records reach a derived topic: mid-run."""
    deadline = time.monotonic() + 240
    while records_in(cluster, setup.topics) == 0:
        assert run.process.poll() is None, run.stderr
        assert time.monotonic() < deadline, f"no records after 240s:\n{run.stderr}"
        time.sleep(0.1)
    then()


def expected(setup: Setup, data: Path) -> Counter[Triple]:
    return reference(setup, split_records(data.read_bytes(), str(data)))[0]


def in_kafka(cluster: EmbeddedKafka, setup: Setup) -> Counter[Triple]:
    return triples(consume(cluster.bootstrap, [*setup.topics, setup.dead_letter]))


def notifications(directory: Path) -> Path:
    return write_jsonl(directory / "notifications.jsonl", generate_count(RECORDS).records)


# --------------------------------------------------------------------------- a leader killed


@dataclass
class KilledLeaderRun:
    setup: Setup
    data: Path
    produce: Produce
    code: int
    created: dict[str, int]
    """Every topic the run made (and the registry, the catalog): its fewest replicas."""
    in_sync: dict[str, str]
    """``min.insync.replicas`` of each."""


@pytest.fixture(scope="module")
def killed_leader_run(
    kafka_cluster: EmbeddedKafka, tmp_path_factory: pytest.TempPathFactory
) -> KilledLeaderRun:
    """One produce run through the schema registry and the shared catalog, on a cluster
    whose leader of the busiest topic's partition 0 is killed once records flow."""
    cluster = kafka_cluster
    directory = tmp_path_factory.mktemp("killed-leader")
    setup = make_setup(directory)
    data = notifications(directory)
    before = set(admin(cluster).list_topics(timeout=10).topics)
    store, shared = unique_name("_schemas-"), unique_name("_catalog-")
    busiest = next(t for t in setup.topics if t.endswith("-if-interfaces-interface"))
    with running_registry(cluster.bootstrap, store, overrides={"log_level": 3}) as registry:
        produce = Produce.start(produce_command(
            cluster, setup, data, "--schema-registry", registry.url, "--shared-catalog",
            "--catalog-topic", shared))
        killed: list[int] = []

        def kill_the_leader() -> None:
            killed.append(leader_of(cluster, busiest))
            cluster.kill_node(killed[0])

        when_records_flow(cluster, setup, produce, kill_the_leader)
        code = produce.wait()
    cluster.start_nodes(*killed)
    metadata = admin(cluster).list_topics(timeout=10)
    made = sorted(set(metadata.topics) - before)
    wait_in_sync(cluster, made)
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in made]
    client = admin(cluster)  # kept: its futures end with it
    configs = {r.name: f.result() for r, f in client.describe_configs(resources).items()}
    return KilledLeaderRun(
        setup, data, produce, code,
        created={name: min(len(p.replicas) for p in metadata.topics[name].partitions.values())
                 for name in made},
        in_sync={name: configs[name]["min.insync.replicas"].value for name in made},
    )


def test_every_topic_a_run_creates_takes_the_clusters_replication(
    killed_leader_run: KilledLeaderRun,
) -> None:
    run = killed_leader_run
    assert run.code == 0, run.produce.stderr
    setup = run.setup
    ours = {*setup.topics, setup.dead_letter}
    assert ours <= set(run.created), "derived and dead-letter topics"
    assert any(name.startswith("_schemas-") for name in run.created), "the registry's store"
    assert any(name.startswith("_catalog-") for name in run.created), "the shared catalog"
    assert run.created == dict.fromkeys(run.created, REPLICAS), run.created
    assert set(run.in_sync.values()) == {"2"}, run.in_sync
    assert "replicas on this" not in run.produce.stderr, "nothing under-replicated to warn of"


def test_a_leader_killed_mid_produce_loses_and_duplicates_nothing(
    killed_leader_run: KilledLeaderRun, kafka_cluster: EmbeddedKafka
) -> None:
    run = killed_leader_run
    assert run.code == 0, run.produce.stderr
    assert in_kafka(kafka_cluster, run.setup) == expected(run.setup, run.data)
    text = run.produce.stderr
    assert "%3|" not in text and "%6|" not in text, "librdkafka's raw lines: " + text
    assert "Traceback" not in text and "\tat " not in text, text


# --------------------------------------------------------------------------- two brokers away


def test_a_compacted_logs_end_is_found_when_its_leader_is_killed(
    cluster: EmbeddedKafka,
) -> None:
    # The shared catalog and the registry ask for their log's end before every decision.
    # librdkafka answers the client that asked the killed leader "offset -1001" from then on
    # (a CI run failed on it: the catalog's end unreadable for the whole wait).
    topic = unique_name("_log-")
    ensure_log_topic(cluster.bootstrap, topic, replication_factor=REPLICAS)
    log = KafkaLog(cluster.bootstrap, topic, overrides={"log_level": 3}, timeout=60.0)
    try:
        for n in range(3):
            log.append(b"k%d" % n, b"v")
        assert log.end_offset() == 3
        cluster.kill_node(leader_of(cluster, topic))
        started = time.monotonic()
        assert log.end_offset() == 3
        # One request left to the dead leader (END_OFFSET_ATTEMPT), then a fresh client.
        assert time.monotonic() - started < END_OFFSET_ATTEMPT + 15
    finally:
        log.close()


def test_two_brokers_away_past_the_delivery_timeout_is_one_error_and_the_rerun_completes(
    cluster: EmbeddedKafka, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = notifications(tmp_path)
    command = produce_command(cluster, setup, data, "--producer-config",
                              "message.timeout.ms=8000")
    produce = Produce.start(command)
    away: list[int] = []

    def two_away() -> None:
        for node in cluster.nodes[:2]:
            cluster.kill_node(node.node_id)
            away.append(node.node_id)

    when_records_flow(cluster, setup, produce, two_away)
    code = produce.wait()
    lines = produce.lines
    text = produce.stderr
    assert code == 1, text
    errors = [line for line in lines if line.startswith("error:")]
    assert errors == [lines[-1]], "one error line, the last:\n" + text
    assert "Traceback" not in text and "\tat " not in text and "%3|" not in text, text
    assert "ERROR Executor" not in text and "TaskSetManager" not in text, text
    run_id = next(line for line in lines if line.startswith("run ")).split()[1]
    assert f"--run-id {run_id}" in errors[0]
    log = Path(errors[0].rsplit("details in ", 1)[1].strip())
    assert "Exception in task" in log.read_text(encoding="utf-8"), "the traces are there"

    cluster.start_nodes(*away)
    again = Produce.start(command)
    assert again.wait() == 0, again.stderr
    assert f"run {run_id}: resuming" in again.stderr
    assert in_kafka(cluster, setup) == expected(setup, data)


# --------------------------------------------------------------------------- a replaced disk


def test_a_broker_whose_disk_is_replaced_loses_nothing(
    cluster: EmbeddedKafka, spark: SparkSession, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = notifications(tmp_path)
    summary = run(setup.config(cluster.bootstrap, [str(data)], split_size=96 * 1024), spark)
    assert summary.tally.records == RECORDS
    topics = [*setup.topics, setup.dead_letter]
    replaced = leader_of(cluster, topics[0])
    cluster.stop_node(replaced)
    cluster.start_nodes(replaced, blank=True)  # an empty log dir, formatted anew
    wait_in_sync(cluster, topics)  # it copied every partition back from the others
    other = next(node.node_id for node in cluster.nodes if node.node_id != replaced)
    cluster.stop_node(other)  # its partitions move to the in-sync replicas, the new disk's
    assert in_kafka(cluster, setup) == expected(setup, data)


# --------------------------------------------------------------------------- the registry's store


@dataclass
class Traffic:
    """A reader and a writer against a registry instance, every answer kept: (status, error
    code, seconds it took, when it was sent)."""

    url: str
    known: list[str]
    """Subjects registered before: their reads must answer from memory."""
    reads: list[tuple[int, int, float, float]] = field(default_factory=list)
    writes: list[tuple[int, int, float, float]] = field(default_factory=list)
    acknowledged: dict[str, int] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)
    """The messages of writes not acknowledged, in order."""
    stop: threading.Event = field(default_factory=threading.Event)

    def _timed(self, method: str, path: str, body: object = None) -> tuple[int, Any, float]:
        started = time.monotonic()
        status, answer = call(self.url, method, path, body)
        return status, answer, time.monotonic() - started

    def _code(self, status: int, answer: Any) -> int:
        return int(answer.get("error_code", 0)) if status != 200 else 0

    def read(self) -> None:
        index = 0
        while not self.stop.is_set():
            subject = self.known[index % len(self.known)]
            for method, path, body in (
                ("GET", "/schemas/ids/1", None),
                ("GET", f"/subjects/{subject}/versions/latest", None),
                ("GET", "/subjects", None),  # reads the log first, when it can
                ("POST", f"/subjects/{subject}", json_schema(subject)),  # a lookup, the same
            ):
                sent = time.monotonic()
                status, answer, took = self._timed(method, path, body)
                self.reads.append((status, self._code(status, answer), took, sent))
            index += 1
            time.sleep(0.05)

    def write(self) -> None:
        index = 0
        while not self.stop.is_set():
            subject = f"w{index}"
            sent = time.monotonic()
            status, answer, took = self._timed(
                "POST", f"/subjects/{subject}/versions", json_schema(subject)
            )
            self.writes.append((status, self._code(status, answer), took, sent))
            if status == 200:
                self.acknowledged[subject] = answer["id"]
            else:
                self.refusals.append(str(answer))
            index += 1
            time.sleep(0.1)

    def __enter__(self) -> Traffic:
        self.threads = [threading.Thread(target=self.read), threading.Thread(target=self.write)]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(120)

    def writes_ok_after(self, moment: float) -> bool:
        return any(status == 200 and sent > moment for status, _, _, sent in self.writes)


def registry_view(url: str) -> dict[str, int]:
    """{subject: id of its version 1} as an instance answers it."""
    return {
        subject: call(url, "GET", f"/subjects/{subject}/versions/1")[1]["id"]
        for subject in call(url, "GET", "/subjects")[1]
    }


def test_the_registry_recovers_by_itself_when_its_single_replica_stores_leader_returns(
    cluster: EmbeddedKafka, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31, item 7: a store topic with one replica (replication_factor 1, as an operator
    may set it), its only broker killed under a write and restarted with its data. Reads
    answer from memory throughout, writes are refused with 503/50003 while the store is away
    (the one in flight too) and work again once it is back, all without restarting the
    instance; nothing acknowledged is lost."""
    topic = unique_name("_schemas-")
    known = ["a", "b", "c"]
    with running_registry(
        cluster.bootstrap, topic, replication=(1, None), overrides={"log_level": 0}
    ) as registry:
        url = registry.url
        for subject in known:
            assert call(url, "POST", f"/subjects/{subject}/versions",
                                 json_schema(subject))[0] == 200
        metadata = admin(cluster).list_topics(topic, timeout=10).topics[topic].partitions[0]
        assert metadata.replicas == [metadata.leader], "one replica"
        store = registry.registry.log
        append = store.append
        killed: list[float] = []

        def killing_append(key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
            if not killed:  # the leader dies with this write on its way
                cluster.kill_node(metadata.leader)
                killed.append(time.monotonic())
            return append(key, value, store_end=store_end)

        with Traffic(url, known) as traffic:
            until(lambda: traffic.writes_ok_after(0), 30, "a write before the fault")
            monkeypatch.setattr(store, "append", killing_append)
            until(lambda: bool(killed), 30, "the leader killed under a write")
            until(lambda: registry.registry.unavailable is not None, 60, "the store known away")
            known_away = time.monotonic()
            until(lambda: traffic.writes[-1][3] > killed[0], 60, "the write in flight answered")
            time.sleep(2)  # the store away for a while: requests keep coming
            # start_nodes returns once the broker is listed again, by which time the registry
            # may have written: a write sent while it starts can rightly succeed.
            restarting = time.monotonic()
            cluster.start_nodes(metadata.leader)
            back = time.monotonic()
            until(lambda: traffic.writes_ok_after(back), 60, "writes after the leader returned")
            until(lambda: sum(s == 200 and t > back for s, _, _, t in traffic.writes) >= 5, 30,
                  "more writes")
        assert registry.registry.unavailable is None, "the store answers again"

        # Reads: always answered (from memory while the store was away), never waiting for
        # Kafka again once it was known away.
        assert {status for status, *_ in traffic.reads} == {200}, Counter(traffic.reads)
        slow = [(round(sent - killed[0], 1), round(took, 1)) for _, _, took, sent in traffic.reads
                if sent > known_away + 0.1 and took > 2]
        assert not slow, f"reads waited for the store (sent after the kill, seconds): {slow}"
        # Writes: the one in flight and those while the store was away refused with the clear
        # "store unavailable" (then at once), nothing else.
        before = [(s, c) for s, c, _, sent in traffic.writes if sent < killed[0]]
        in_flight = before.pop()
        assert set(before) == {(200, 0)}, before
        assert in_flight == (503, 50003), traffic.refusals[:1]
        during = Counter(
            (s, c) for s, c, _, sent in traffic.writes if killed[0] < sent < restarting
        )
        assert set(during) == {(503, 50003)}, during
        refused = [took for status, _, took, sent in traffic.writes
                   if status == 503 and sent > known_away + 0.1]
        assert refused and max(refused) < 2, f"writes refused at once: {refused}"

        # Nothing acknowledged lost: a fresh instance replays the same store.
        with running_registry(cluster.bootstrap, topic, overrides={"log_level": 0}) as fresh:
            seen = registry_view(fresh.url)
        assert registry_view(url) == seen
        assert {s: seen.get(s) for s in traffic.acknowledged} == traffic.acknowledged


def test_the_registry_writes_on_through_a_new_leader_of_its_replicated_store(
    cluster: EmbeddedKafka,
) -> None:
    """The default store (the cluster's 3 replicas): its leader killed, a new one is elected
    and writes go on after a short pause; nothing acknowledged is lost."""
    topic = unique_name("_schemas-")
    known = ["a", "b", "c"]
    with running_registry(cluster.bootstrap, topic, overrides={"log_level": 0}) as registry:
        url = registry.url
        for subject in known:
            assert call(url, "POST", f"/subjects/{subject}/versions",
                                 json_schema(subject))[0] == 200
        metadata = admin(cluster).list_topics(topic, timeout=10).topics[topic].partitions[0]
        assert len(metadata.replicas) == REPLICAS
        with Traffic(url, known) as traffic:
            until(lambda: traffic.writes_ok_after(0), 30, "a write before the fault")
            killed = time.monotonic()
            cluster.kill_node(metadata.leader)
            until(lambda: traffic.writes_ok_after(killed + 1), 60, "writes through a new leader")
            resumed = time.monotonic()
            until(lambda: sum(sent > resumed for *_, sent in traffic.writes) >= 5, 30,
                  "writes after the pause")
        assert leader_of(cluster, topic) not in (metadata.leader, -1)
        assert {status for status, *_ in traffic.reads} == {200}, Counter(traffic.reads)
        assert {(s, c) for s, c, *_ in traffic.writes} <= {(200, 0), (503, 50003)}
        late = [status for status, _, _, sent in traffic.writes if sent > resumed]
        assert set(late) == {200}, "once the new leader took over, every write succeeds"

        with running_registry(cluster.bootstrap, topic, overrides={"log_level": 0}) as fresh:
            seen = registry_view(fresh.url)
        assert registry_view(url) == seen
        assert {s: seen.get(s) for s in traffic.acknowledged} == traffic.acknowledged
