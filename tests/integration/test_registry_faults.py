"""The schema registry under store faults, on real brokers (issue 31, items 4-8): the store
topic deleted and created again under running instances, the broker paused, killed and
replaced by an empty one, compaction after permanent deletes and after racing writers that
share a --node-id, kill -9 of an instance under load; and store topics that can expire."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from registry_calls import call, ok, until
from registry_calls import json_schema as schema

from yangkey.errors import ConfigError
from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.config import TopicSpec, ensure_topics
from yangkey.kafka.log import ensure_log_topic
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.running import running_registry

FAST_CLEANING = {
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "100",
    # Eligible for cleaning 100 ms after a write whatever the dirty ratio: the broker's one
    # cleaner thread serves every test topic.
    "max.compaction.lag.ms": "100",
}


def same_schema(answer: Any, name: str) -> bool:
    text = answer.get("schema") if isinstance(answer, dict) else None
    return text is not None and json.loads(text) == json.loads(schema(name)["schema"])


def view(url: str) -> dict[str, list[tuple[int, int]]]:
    """{subject: [(version, id)]} as an instance answers it."""
    return {
        subject: [
            (v, ok(url, "GET", f"/subjects/{subject}/versions/{v}")["id"])
            for v in ok(url, "GET", f"/subjects/{subject}/versions")
        ]
        for subject in ok(url, "GET", "/subjects")
    }


def recreate(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic])[topic].result(30)
    until(lambda: topic not in admin.list_topics(timeout=10).topics, 30, "topic deleted")
    until(lambda: _created(bootstrap, topic), 30, "topic created again")


def _created(bootstrap: str, topic: str) -> bool:
    try:
        ensure_log_topic(bootstrap, topic)
    except ConfigError:
        return False  # still being deleted
    return True


# ------------------------------------------------------------------ item 8


def test_a_store_topic_whose_records_can_expire_is_refused(
    kafka_bootstrap: str, topic_name: str
) -> None:
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, compaction=False)])
    with pytest.raises(ConfigError, match=r"cleanup\.policy is delete, not compact"):
        ensure_log_topic(kafka_bootstrap, topic_name)
    both = f"{topic_name}-both"
    configs = {"cleanup.policy": "compact,delete", "retention.ms": "60000"}
    ensure_topics(kafka_bootstrap, [TopicSpec(both, configs=configs)])
    with pytest.raises(ConfigError, match=r"compact,delete with retention\.ms=60000"):
        ensure_log_topic(kafka_bootstrap, both)
    result = subprocess.run(
        [
            *(sys.executable, "-m", "yangkey.cli", "registry", "serve"),
            *("--bootstrap", kafka_bootstrap, "--port", "0", "--store-topic", topic_name),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: --bootstrap {kafka_bootstrap}: topic {topic_name}: ")
    assert "cleanup.policy=compact" in lines[0]
    # A topic serve creates is compacted.
    ensure_log_topic(kafka_bootstrap, f"{topic_name}-new")


# ------------------------------------------------------------------ item 4


@contextmanager
def instances(bootstrap: str, topic: str, count: int) -> Iterator[list[RegistryHTTPServer]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(running_registry(bootstrap, topic, overrides={"log_level": 0}))
            for _ in range(count)
        ]


def test_a_recreated_store_topic_is_replayed_by_running_instances(
    kafka_bootstrap: str, topic_name: str
) -> None:
    with instances(kafka_bootstrap, topic_name, 2) as (a, b):
        for i in range(5):
            ok(a.url, "POST", f"/subjects/old{i}/versions", schema(f"old{i}"))
        until(lambda: len(ok(b.url, "GET", "/subjects")) == 5, 10, "b follows a")

        recreate(kafka_bootstrap, topic_name)
        with running_registry(kafka_bootstrap, topic_name) as fresh:
            assert ok(fresh.url, "POST", "/subjects/new/versions", schema("new"))["id"] == 1
            # No request needed: the watch notices the new topic id and replays it.
            for old in (a, b):
                until(lambda old=old: old.registry.reloads == 1, 15, "the reload")
                assert same_schema(ok(old.url, "GET", "/schemas/ids/1"), "new")
                assert call(old.url, "GET", "/schemas/ids/5")[0] == 404
            # Writes through any of them continue the new topic's numbering.
            assert ok(a.url, "POST", "/subjects/after/versions", schema("after"))["id"] == 2
            assert ok(b.url, "POST", "/subjects/again/versions", schema("again"))["id"] == 3
            expected = view(fresh.url)
            assert expected == {"after": [(1, 2)], "again": [(1, 3)], "new": [(1, 1)]}
            assert view(a.url) == expected and view(b.url) == expected


# ------------------------------------------------------------------ items 4 and 7


def test_the_broker_paused_killed_and_replaced_by_an_empty_one(
    topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The killed broker's port is in TIME_WAIT for a minute: the JVM binds it all the same
    # (SO_REUSEADDR), only the start's own check would refuse.
    monkeypatch.setattr("yangkey.kafka.broker.port_is_free", lambda *_: True)
    broker = EmbeddedKafka(die_with_parent=True).start()
    port = broker.port
    replacement: EmbeddedKafka | None = None
    try:
        with running_registry(broker.bootstrap, topic_name, overrides={"log_level": 0}) as a:
            url = a.url
            ids = [
                ok(url, "POST", f"/subjects/s{i}/versions", schema(f"s{i}"))["id"] for i in range(3)
            ]
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGSTOP)
            try:
                # Reads from memory answer at once; the watch finds the store away.
                assert ok(url, "GET", f"/schemas/ids/{ids[0]}")["schemaType"] == "JSON"
                until(lambda: a.registry.unavailable is not None, 30, "the store known away")
                started = time.monotonic()
                assert ok(url, "GET", "/subjects") == ["s0", "s1", "s2"]
                assert ok(url, "GET", "/subjects/s1/versions/latest")["id"] == ids[1]
                assert ok(url, "POST", "/subjects/s1", schema("s1"))["version"] == 1
                assert call(url, "GET", "/schemas/ids/99")[0] == 404
                status, answer = call(url, "POST", "/subjects/w/versions", schema("w"))
                assert (status, answer["error_code"]) == (503, 50003), answer
                assert time.monotonic() - started < 2, "no request waited for the store"
            finally:
                os.kill(broker.pid, signal.SIGCONT)
            # Back by itself: the same registration succeeds, once.
            until(
                lambda: call(url, "POST", "/subjects/w/versions", schema("w"))[0] == 200,
                60,
                "writes after the broker came back",
            )
            assert ok(url, "GET", "/subjects/w/versions") == [1]

            # Killed, and an empty broker on the same port: the old memory is not served to
            # (nor written from) once the new store exists.
            broker.stop(timeout=0.1)
            assert ok(url, "GET", f"/schemas/ids/{ids[2]}")["schemaType"] == "JSON"
            replacement = EmbeddedKafka(port=port, die_with_parent=True).start()
            with running_registry(replacement.bootstrap, topic_name) as fresh:
                assert ok(fresh.url, "POST", "/subjects/n/versions", schema("n"))["id"] == 1
                until(lambda: a.registry.reloads >= 1, 30, "the old instance replays")
                until(
                    lambda: same_schema(call(url, "GET", "/schemas/ids/1")[1], "n"),
                    30,
                    "id 1 is the new store's",
                )
                until(
                    lambda: call(url, "POST", "/subjects/m/versions", schema("m"))[0] == 200,
                    30,
                    "writes through the old instance",
                )
                assert view(url) == view(fresh.url) == {"m": [(1, 2)], "n": [(1, 1)]}
    finally:
        broker.stop()
        if replacement is not None:
            replacement.stop()


# ------------------------------------------------------------------ items 5 and 6


def compact_until(url: str, bootstrap: str, topic: str, gone: Callable[[], bool]) -> None:
    """Keep valid writes flowing (the cleaner skips the active segment) until ``gone``."""
    started = time.monotonic()
    while not gone():
        assert time.monotonic() - started < 180, "compaction did not happen"
        level = ("FULL", "NONE")[int(time.monotonic() * 3) % 2]
        ok(url, "PUT", "/config/tick", {"compatibility": level})
        time.sleep(0.3)


def records_of(bootstrap: str, topic: str, needle: bytes) -> int:
    from test_registry_broker import raw_keys  # noqa: PLC0415

    return sum(1 for key, _ in raw_keys(bootstrap, topic) if key and needle in key)


def test_a_hard_deleted_id_is_never_reused_after_compaction_and_restart(
    kafka_bootstrap: str, topic_name: str
) -> None:
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, compaction=True, configs=FAST_CLEANING)])
    with running_registry(kafka_bootstrap, topic_name) as first:
        url = first.url
        ids = [ok(url, "POST", f"/subjects/{n}/versions", schema(n))["id"] for n in "abc"]
        assert ids == [1, 2, 3]
        ok(url, "DELETE", "/subjects/c")
        ok(url, "DELETE", "/subjects/c?permanent=true")
        compact_until(
            url,
            kafka_bootstrap,
            topic_name,
            lambda: not records_of(kafka_bootstrap, topic_name, b'"subject":"c"'),
        )
    with running_registry(kafka_bootstrap, topic_name) as restarted:
        url = restarted.url
        assert call(url, "GET", "/schemas/ids/3")[0] == 404
        assert ok(url, "POST", "/subjects/d/versions", schema("d"))["id"] == 4
        assert ok(url, "POST", "/subjects/c/versions", schema("c"))["id"] == 3, "same schema"


def test_instances_sharing_a_node_id_lose_nothing_to_compaction(
    kafka_bootstrap: str, topic_name: str
) -> None:
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, compaction=True, configs=FAST_CLEANING)])
    acknowledged: dict[int, int] = {}
    with ExitStack() as stack:
        a, b = (
            stack.enter_context(running_registry(kafka_bootstrap, topic_name, node_id="same"))
            for _ in range(2)
        )
        ok(a.url, "PUT", "/config/raced", {"compatibility": "NONE"})

        def register(index: int) -> None:
            url = (a.url, b.url)[index % 2]
            answer = ok(url, "POST", "/subjects/raced/versions", schema(f"r{index}"))
            acknowledged[answer["id"]] = answer["version"]

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(register, range(120)))
        assert len(acknowledged) == 120
        # A marker deleted for good: once its records are gone the cleaner has run.
        ok(a.url, "POST", "/subjects/marker/versions", schema("marker"))
        ok(a.url, "DELETE", "/subjects/marker")
        ok(a.url, "DELETE", "/subjects/marker?permanent=true")
        compact_until(
            a.url,
            kafka_bootstrap,
            topic_name,
            lambda: not records_of(kafka_bootstrap, topic_name, b'"subject":"marker"'),
        )
    with running_registry(kafka_bootstrap, topic_name, node_id="same") as restarted:
        versions = ok(restarted.url, "GET", "/subjects/raced/versions")
        assert versions == list(range(1, 121))
        found = {
            ok(restarted.url, "GET", f"/subjects/raced/versions/{v}")["id"]: v for v in versions
        }
        assert found == acknowledged, "every acknowledged version, with its id"


# ------------------------------------------------------------------ all at once


def serve(bootstrap: str, topic: str, node: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "yangkey.cli", "registry", "serve", "--bootstrap", bootstrap),
            *("--port", "0", "--store-topic", topic, "--node-id", node),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return process, url


def test_kill_compaction_and_reset_under_two_instances_lose_nothing_acknowledged(
    kafka_bootstrap: str, topic_name: str
) -> None:
    """Two ``serve`` processes under 4 writers: one is killed (-9) and started again
    mid-load while the topic compacts; then the topic is deleted and created again. Every
    registration acknowledged is there afterwards, on both, with the same id (those before
    the reset were in the deleted topic: after it, only later ones count)."""
    ensure_topics(kafka_bootstrap, [TopicSpec(topic_name, compaction=True, configs=FAST_CLEANING)])
    processes: list[subprocess.Popen[str]] = []
    try:
        first, url_a = serve(kafka_bootstrap, topic_name, "A")
        second, url_b = serve(kafka_bootstrap, topic_name, "B")
        processes += [first, second]
        urls = [url_a, url_b]
        acknowledged: dict[str, int] = {}
        stop = threading.Event()

        def writer(worker: int) -> None:
            index = 0
            while not stop.is_set():
                subject = f"w{worker}-{index}"
                try:
                    status, answer = call(
                        urls[index % 2], "POST", f"/subjects/{subject}/versions", schema(subject)
                    )
                except OSError:
                    status, answer = 0, None  # the killed instance: not acknowledged
                if status == 200:
                    acknowledged[subject] = answer["id"]
                index += 1

        with ThreadPoolExecutor(max_workers=4) as pool:
            running = [pool.submit(writer, w) for w in range(4)]
            time.sleep(3)
            first.kill()  # kill -9, mid-write
            first.wait(10)
            time.sleep(1)
            restarted, urls[0] = serve(kafka_bootstrap, topic_name, "A")
            processes.append(restarted)
            time.sleep(3)
            stop.set()
            for future in running:
                future.result()
        assert len(acknowledged) > 40
        views = [view(url) for url in urls]
        assert views[0] == views[1], "both instances agree"
        seen = {s: v[0][1] for s, v in views[0].items()}
        # Every acknowledged registration, with its id (a write in flight at the kill may
        # have landed unacknowledged: a client retry would find it).
        assert {s: seen.get(s) for s in acknowledged} == acknowledged
        assert len(set(seen.values())) == len(seen), "one id per schema"

        recreate(kafka_bootstrap, topic_name)
        after = {
            f"after{i}": ok(urls[i % 2], "POST", f"/subjects/after{i}/versions", schema(f"a{i}"))[
                "id"
            ]
            for i in range(10)
        }
        assert sorted(after.values()) == list(range(1, 11)), "the new topic's numbering"
        for url in urls:
            assert {s: v[0][1] for s, v in view(url).items()} == after
        late, url_c = serve(kafka_bootstrap, topic_name, "C")
        processes.append(late)
        assert {s: v[0][1] for s, v in view(url_c).items()} == after
    finally:
        for process in processes:
            process.kill()
            process.wait(10)
