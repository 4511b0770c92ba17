"""The topics of a Kafka cluster: partitions, replication, cleanup policy and size, for
``yangkey kafka topics``."""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass
from typing import Any

from yangkey.errors import BrokerError

TIMEOUT = 10.0


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: int
    replication: int
    cleanup_policy: str
    """``delete``, ``compact`` or ``compact,delete`` (the topic's effective setting)."""
    messages: int
    """The offsets held (latest minus earliest, over all partitions): the message count of a
    plain topic, an upper bound where transactions (one commit marker per transaction) or
    compaction leave offsets without a message."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_topics(bootstrap: str, *, internal: bool = False) -> list[TopicInfo]:
    """Every topic (``internal``: the ``__``-prefixed ones too), sorted by name."""
    from confluent_kafka import KafkaException, TopicPartition  # noqa: PLC0415

    # ConfigResource, ResourceType and OffsetSpec are not in confluent-kafka's type stubs
    admin_api: Any = importlib.import_module("confluent_kafka.admin")

    from yangkey.kafka.config import admin_config, kafka_reason  # noqa: PLC0415
    from yangkey.kafka.logs import logged  # noqa: PLC0415

    source = f"kafka://{bootstrap}"
    admin = admin_api.AdminClient(logged(admin_config(bootstrap)))
    try:
        metadata = admin.list_topics(timeout=TIMEOUT)
        topics = sorted(
            name
            for name, topic in metadata.topics.items()
            if topic.error is None and (internal or not name.startswith("__"))
        )
        if not topics:
            return []
        resources = [
            admin_api.ConfigResource(admin_api.ResourceType.TOPIC, name) for name in topics
        ]
        configs = {
            resource.name: future.result(timeout=TIMEOUT)
            for resource, future in admin.describe_configs(resources).items()
        }
        partitions = [
            TopicPartition(name, p) for name in topics for p in metadata.topics[name].partitions
        ]
        earliest = admin.list_offsets({tp: admin_api.OffsetSpec.earliest() for tp in partitions})
        latest = admin.list_offsets({tp: admin_api.OffsetSpec.latest() for tp in partitions})
        held: dict[str, int] = dict.fromkeys(topics, 0)
        for tp in partitions:
            low = earliest[tp].result(timeout=TIMEOUT).offset
            high = latest[tp].result(timeout=TIMEOUT).offset
            if low < 0 or high < 0:
                # librdkafka answers -1001 ("invalid offset") and no error for a partition
                # whose leader just died: counting it would show 0 messages that are there.
                raise BrokerError(
                    f"cannot count the messages of {tp.topic} partition {tp.partition}: "
                    f"the broker answered offset {min(low, high)} (its leader may be "
                    "changing); try again",
                    source=source,
                )
            held[tp.topic] += max(high - low, 0)
    except KafkaException as exc:
        raise BrokerError(f"cannot list topics: {kafka_reason(exc)}", source=source) from None
    except TimeoutError:
        raise BrokerError(
            f"cannot list topics: no answer within {TIMEOUT:.0f}s", source=source
        ) from None
    result = []
    for name in topics:
        parts = metadata.topics[name].partitions
        replication = min((len(p.replicas) for p in parts.values()), default=0)
        policy = configs[name].get("cleanup.policy")
        result.append(
            TopicInfo(
                name=name,
                partitions=len(parts),
                replication=replication,
                cleanup_policy=str(policy.value) if policy is not None else "delete",
                messages=held[name],
            )
        )
    return result
