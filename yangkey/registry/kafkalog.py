"""The registry's log: one partition of a compacted Kafka topic (``_schemas`` by default)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from yangkey.errors import ConfigError
from yangkey.kafka.config import (
    TopicSpec,
    admin_config,
    consumer_config,
    ensure_topics,
    producer_config,
)
from yangkey.kafkalogs import logged
from yangkey.registry.errors import store_error, store_timeout
from yangkey.topics import BROKER_DEFAULT


class Replay(Protocol):
    """What :meth:`KafkaLog.read` feeds: the registry's :class:`~yangkey.registry.store.Store`,
    the shared catalog's :class:`~yangkey.shared_catalog.CatalogState`."""

    end: int

    def apply(self, offset: int, raw_key: bytes | None, raw_value: bytes | None) -> None: ...

    def advance(self, end: int) -> None: ...


def ensure_log_topic(
    bootstrap: str,
    topic: str,
    *,
    replication_factor: int = BROKER_DEFAULT,
    min_insync_replicas: int | None = None,
    overrides: Mapping[str, object] | None = None,
    timeout: float = 15.0,
) -> None:
    """Create the compacted single-partition topic if missing (replicated as the broker's
    defaults say unless told otherwise); refuse one with more partitions (offsets are the
    sequence numbers: they must be one total order)."""
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415 - only at start-up

    # Quiet: an unreachable broker is reported once, as one error line, not per retry.
    config = {"log_level": 0, **admin_config(bootstrap, overrides)}
    admin = AdminClient(logged(config))
    spec = TopicSpec(
        topic,
        partitions=1,
        replication_factor=replication_factor,
        min_insync_replicas=min_insync_replicas,
        compaction=True,
    )
    result = ensure_topics(admin, [spec], timeout=timeout)
    if result.warnings:
        raise ConfigError(
            "the registry needs a single-partition topic; " + "; ".join(result.warnings),
            source=f"topic {topic}",
        )


class KafkaLog:
    """:class:`yangkey.registry.registry.Log` over partition 0 of ``topic``."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        *,
        overrides: Mapping[str, object] | None = None,
        timeout: float = 15.0,
    ) -> None:
        self.topic = topic
        self.timeout = timeout
        self.partition = TopicPartition(topic, 0)
        self.producer_config = producer_config(bootstrap, overrides)
        # One record at a time, and the writer waits for it: batching only adds latency.
        self.producer_config.update({"linger.ms": 0, "compression.type": "none"})
        self._producer: Producer | None = None
        consumer = consumer_config(bootstrap, "yangkey-registry", overrides)
        consumer.update({"enable.partition.eof": True})
        self.consumer = Consumer(logged(consumer))
        # End offsets come from a client with no fetch in flight: on the reading consumer's
        # connection the query waits behind the fetch long-poll (fetch.wait.max.ms, 500 ms).
        self.ends = Consumer(logged(consumer))
        # No group subscription and no commits: every instance replays from the start.
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

    def read(self, store: Replay) -> None:
        deadline = time.monotonic() + self.timeout
        high = self._end(deadline)
        while store.end < high:
            message: Message | None = self.consumer.poll(0.2)
            error = message.error() if message is not None else None
            if message is not None and error is None:
                store.apply(message.offset() or 0, message.key(), message.value())
                continue
            if message is not None and error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    raise store_error(f"reading {self.topic}: {error.str()}")
                # Compaction can remove the last records before the end offset.
                if (message.offset() or 0) >= high:
                    store.advance(high)
                    return
            if time.monotonic() > deadline:
                raise store_timeout(f"{self.topic} read to offset {store.end}, end is {high}")

    def _end(self, deadline: float) -> int:
        while True:
            try:
                _, high = self.ends.get_watermark_offsets(
                    self.partition, timeout=self.timeout, cached=False
                )
                return int(high)
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                # A just-created topic's leader is not known to every client at once.
                transient = isinstance(error, KafkaError) and error.code() in (
                    KafkaError.NOT_LEADER_FOR_PARTITION,
                    KafkaError.LEADER_NOT_AVAILABLE,
                    KafkaError.UNKNOWN_TOPIC_OR_PART,
                    KafkaError._TIMED_OUT,
                )
                if not transient or time.monotonic() > deadline:
                    raise store_error(f"cannot read the end of {self.topic}: {exc}") from None
            time.sleep(0.2)

    @property
    def producer(self) -> Producer:
        # Created on the first write: an instance that only reads never registers an
        # idempotent producer with the broker (nor logs about it while failing to start).
        if self._producer is None:
            self._producer = Producer(logged(self.producer_config))
        return self._producer

    def append(self, key: bytes, value: bytes | None) -> int:
        outcome: list[tuple[KafkaError | None, int]] = []

        def delivered(error: KafkaError | None, message: Message) -> None:
            offset = message.offset()
            outcome.append((error, -1 if offset is None else offset))

        try:
            self.producer.produce(self.topic, value, key, partition=0, on_delivery=delivered)
        except (KafkaException, BufferError) as exc:
            raise store_error(f"cannot write to {self.topic}: {exc}") from None
        self.producer.flush(self.timeout)
        if not outcome:
            raise store_timeout(f"no acknowledgement from {self.topic} in {self.timeout:.0f}s")
        error, offset = outcome[0]
        if error is not None:
            raise store_error(f"writing to {self.topic}: {error.str()}")
        return offset

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(self.timeout)
            # Else its threads live on until garbage collection, reconnecting to (and logging
            # about) a broker that may be gone by then.
            self._producer.close()
            self._producer = None
        self.consumer.close()
        self.ends.close()
