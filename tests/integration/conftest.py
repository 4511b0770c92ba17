"""Shared fixtures for tests that need a real Kafka broker (chdb and Spark: tests/conftest.py).

Conventions for adding fixtures here:

* A service that is expensive to start gets a **session-scoped** fixture that starts it
  once and stops it at the end, and honours a ``YANGKEY_TEST_<SERVICE>`` variable naming an
  already-running external instance instead (then it is neither started nor stopped).
* Per-test isolation comes from **names**, not from restarting services: see
  :func:`topic_name`. Tests never delete shared state other tests may be reading.
* Everything collected from this directory is marked ``integration`` automatically, so
  ``pytest -m "not integration"`` gives the fast suite.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest
from factories import unique_name

from yangkey.errors import YangkeyError
from yangkey.kafka.broker import EmbeddedKafka

_HERE = Path(__file__).parent.resolve()


# --------------------------------------------------------------------------- markers


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/integration as ``integration``.

    This hook sees the items of the whole session, not just this directory's, hence the
    path check.
    """
    for item in items:
        if _HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.integration)
        if "kafka_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


# --------------------------------------------------------------------------- Kafka


@dataclass(frozen=True)
class KafkaEndpoint:
    """Where the test broker is. ``embedded`` is None for an external broker."""

    bootstrap: str
    embedded: EmbeddedKafka | None = None


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaEndpoint]:
    """A real Kafka broker for the whole session.

    ``YANGKEY_TEST_BOOTSTRAP=host:port`` uses that broker instead; it must allow topic
    creation and have its log cleaner on (compaction tests use short per-topic settings).
    Otherwise a single-node KRaft broker is installed (first run: ~45 MB of pinned jars from
    Maven Central) and started on free 127.0.0.1 ports, and stopped after the last test.
    """
    external = os.environ.get("YANGKEY_TEST_BOOTSTRAP")
    if external:
        yield KafkaEndpoint(bootstrap=external)
        return
    # die_with_parent: a session killed by a CI timeout must not leave a JVM running.
    broker = EmbeddedKafka(die_with_parent=True)
    try:
        broker.start()
    except YangkeyError as exc:
        pytest.fail(f"cannot start the test Kafka broker: {exc}", pytrace=False)
    try:
        yield KafkaEndpoint(bootstrap=broker.bootstrap, embedded=broker)
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def kafka_cluster() -> Iterator[EmbeddedKafka]:
    """A three-node KRaft cluster for the tests of one module (marked ``cluster``): what
    ``yangkey kafka start --brokers 3`` runs, 3 replicas and ``min.insync.replicas`` 2 by
    default. Tests kill, stop and restart its nodes (:meth:`EmbeddedKafka.kill_node`, …) and
    leave all three running. Module-scoped: its three JVMs are gone before the next module."""
    cluster = EmbeddedKafka(brokers=3, die_with_parent=True)
    try:
        cluster.start()
    except YangkeyError as exc:
        pytest.fail(f"cannot start the test Kafka cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        for node in cluster.nodes:  # its data goes with it: no clean shutdown to wait for
            node.kill()
        cluster.stop()


@pytest.fixture
def kafka_bootstrap(kafka_broker: KafkaEndpoint) -> str:
    """Just the ``bootstrap.servers`` string of :func:`kafka_broker`."""
    return kafka_broker.bootstrap


_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name unique to this test run: ``t-<test name>-<8 hex>``.

    Unique per call so reruns and parallel sessions against one external broker never
    see each other's messages; the test name is kept (shortened) to find a topic in logs.
    """
    readable = _UNSAFE.sub("-", request.node.name).strip("-.")[:80]
    return unique_name(f"t-{readable}-")


class _Stoppable(Protocol):
    def running(self) -> bool: ...

    def kill(self) -> None: ...


@pytest.fixture
def processes() -> Iterator[list[_Stoppable]]:
    """Every process the test starts (``running()``/``kill()``); any still running at the end
    is killed."""
    started: list[_Stoppable] = []
    try:
        yield started
    finally:
        for process in started:
            if process.running():
                process.kill()
