"""The settings of an embedded KRaft node, alone or one of a cluster: ``server.properties``,
ports, cluster id, logging."""

from __future__ import annotations

import base64
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path


def random_cluster_id() -> str:
    """A Kafka-style cluster id: a random UUID, URL-safe base64 without padding.

    Same shape as Kafka's ``Uuid.randomUuid()``, which also refuses ids starting with ``-``
    because they read as command-line flags.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS says is free right now (a race remains; start() retries on a clash)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def replication_settings(brokers: int) -> dict[str, str]:
    """Replication of a cluster of ``brokers`` nodes, the way production clusters set it:
    3 replicas (fewer on a smaller cluster) and writes with ``acks=all`` refused unless 2 of
    them have the data (1 on a one- or two-node cluster). Internal topics (consumer offsets,
    transaction state, share-group state) follow the same rule, or they never come up."""
    replicas = min(3, brokers)
    in_sync = max(1, replicas - 1)
    return {
        "default.replication.factor": str(replicas),
        "min.insync.replicas": str(in_sync),
        "offsets.topic.replication.factor": str(replicas),
        "transaction.state.log.replication.factor": str(replicas),
        "transaction.state.log.min.isr": str(in_sync),
        "share.coordinator.state.topic.replication.factor": str(replicas),
        "share.coordinator.state.topic.min.isr": str(in_sync),
    }


def broker_properties(
    *,
    port: int,
    controller_port: int,
    log_dir: Path,
    overrides: Mapping[str, object] | None = None,
    host: str = "127.0.0.1",
    node_id: int = 1,
    voters: Mapping[int, int] | None = None,
) -> dict[str, str]:
    """``server.properties`` for a combined broker+controller node on ``host`` only.

    ``voters`` (node id -> controller port, this node's included) makes the node one of a
    cluster with that static controller quorum; without it the node is a cluster of its own
    (a one-node dynamic quorum, formatted ``--standalone``).

    Every value differing from Kafka's defaults is here because a local test cluster needs
    it: replication fits the number of nodes (:func:`replication_settings`), nothing may be
    created by accident (auto creation off, so a typo in a topic name fails loudly), and the
    log cleaner must run in seconds rather than minutes so compaction is observable in a test.
    """
    if voters:
        quorum = {
            "controller.quorum.voters": ",".join(
                f"{voter}@{host}:{voter_port}" for voter, voter_port in sorted(voters.items())
            )
        }
    else:
        quorum = {"controller.quorum.bootstrap.servers": f"{host}:{controller_port}"}
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        **quorum,
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(log_dir),
        **replication_settings(len(voters) if voters else 1),
        "num.partitions": "1",
        # Fewer internal partitions: 50 each costs seconds on the first group/transaction.
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.num.partitions": "10",
        "auto.create.topics.enable": "false",
        "delete.topic.enable": "true",
        "group.initial.rebalance.delay.ms": "0",
        # Compaction within seconds: the cleaner polls every 100 ms, nothing is too young to
        # clean; topics still choose segment.ms / min.cleanable.dirty.ratio themselves.
        "log.cleaner.enable": "true",
        "log.cleaner.backoff.ms": "100",
        "log.cleaner.min.compaction.lag.ms": "0",
        "log.cleaner.threads": "1",
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),  # default 128 MiB of heap
        "log.segment.delete.delay.ms": "1000",
        "log.retention.check.interval.ms": "5000",
        "log.initial.task.delay.ms": "1000",
        # Small thread pools: two cores are shared with Spark and ClickHouse.
        "num.network.threads": "2",
        "num.io.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "4",
    }
    for key, value in (overrides or {}).items():
        props[key] = _java_value(value)
    return props


def _java_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_properties(props: Mapping[str, str], header: str = "") -> str:
    """Java properties text; backslashes are the only thing values need escaped here."""
    lines = [f"# {line}" for line in header.splitlines()]
    for key, value in props.items():
        escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
        lines.append(f"{key}={escaped}")
    return "\n".join(lines) + "\n"


LOG4J2 = """\
# Everything to stdout, which EmbeddedKafka redirects to broker.log in the data dir.
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
"""
