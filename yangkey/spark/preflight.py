"""The driver's checks before Spark starts: the broker answers, the topics exist (or are
created), and how big a message they accept."""

from __future__ import annotations

import socket
from collections.abc import Mapping

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType  # type: ignore[attr-defined]

from yangkey.catalog import Catalog
from yangkey.config import parse_duration
from yangkey.errors import BrokerError, ConfigError
from yangkey.kafka.config import (
    TopicSpec,
    connection_settings,
    ensure_topics,
    kafka_reason,
    warn_under_replicated,
)
from yangkey.spark.delivery.markers import admin_for
from yangkey.topics import replicas


def topic_specs(catalog: Catalog, single_topic: str | None) -> list[TopicSpec]:
    """The topics a run writes: derived (or the single topic) and the dead-letter topic."""
    file = catalog.file
    defaults = file.defaults
    retention = parse_duration(defaults.retention)
    specs: list[TopicSpec] = []
    if single_topic is not None:
        factor, in_sync = file.replicated(defaults)
        specs.append(
            TopicSpec(
                single_topic,
                partitions=max([t.partitions for t in catalog.topics] or [defaults.partitions]),
                replication_factor=max(
                    [t.replication_factor for t in catalog.topics] or [replicas(factor)]
                ),
                min_insync_replicas=max(
                    (t.min_insync_replicas for t in catalog.topics if t.min_insync_replicas),
                    default=in_sync,
                ),
                retention_seconds=max([t.retention_seconds for t in catalog.topics] or [retention]),
            )
        )
    else:
        specs.extend(catalog.topics)
    factor, in_sync = file.internal("dead_letter")
    specs.append(
        TopicSpec(
            catalog.dead_letter_topic,
            partitions=defaults.partitions,
            replication_factor=replicas(factor),
            min_insync_replicas=in_sync,
            retention_seconds=retention,
        )
    )
    return specs


def _any_reachable(bootstrap: str, timeout: float = 3.0) -> bool:
    """True if one of ``host:port[,host:port]`` accepts a TCP connection (fails fast where
    librdkafka would retry until its timeout)."""
    for server in bootstrap.split(","):
        address = server.strip().rpartition("://")[2]
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection(
                (host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout
            ):
                return True
        except (OSError, ValueError):
            continue
    return False


def check_topics(
    producer_config: Mapping[str, object],
    specs: list[TopicSpec],
    *,
    create: bool,
    extra_configs: Mapping[str, str],
) -> tuple[tuple[str, ...], list[str], int | None]:
    """(topics created, warnings, the smallest ``max.message.bytes`` of the topics)."""
    bootstrap = str(connection_settings(producer_config)["bootstrap.servers"])
    if not _any_reachable(bootstrap):
        raise BrokerError(
            "cannot reach the broker: no bootstrap server accepts TCP connections",
            source=f"kafka {bootstrap}",
        )
    admin = admin_for(producer_config)
    created: tuple[str, ...] = ()
    warnings: list[str] = []
    if create:
        result = ensure_topics(admin, specs, timeout=30.0, extra_configs=extra_configs)
        created, warnings = result.created, list(result.warnings)
    else:
        try:
            metadata = admin.list_topics(timeout=15)
        except KafkaException as exc:
            raise BrokerError(
                f"cannot reach the broker: {kafka_reason(exc)}",
                source=f"kafka {bootstrap}",
            ) from None
        missing = [spec.name for spec in specs if spec.name not in metadata.topics]
        if missing:
            raise ConfigError(
                f"{len(missing)} topic(s) do not exist: {', '.join(missing)}; pass"
                " --create-topics to create them with the catalog's partitions, compaction"
                " and retention",
                source=f"kafka {bootstrap}",
            )
        warn_under_replicated(metadata, [spec.name for spec in specs])
    return created, warnings, smallest_message_limit(admin, [s.name for s in specs])


def smallest_message_limit(admin: AdminClient, topics: list[str]) -> int | None:
    """The smallest ``max.message.bytes`` of ``topics`` (None if the broker does not say)."""
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in topics]
    limits: list[int] = []
    try:
        for future in admin.describe_configs(resources, request_timeout=15).values():
            entry = future.result().get("max.message.bytes")
            if entry is not None and entry.value is not None:
                limits.append(int(entry.value))
    except (KafkaException, ValueError):
        return None  # an ACL may hide topic configs: the producer's own limit still applies
    return min(limits) if limits else None
