"""A compacted log: one partition of a compacted Kafka topic whose offsets are the sequence
numbers of its records (so one partition: one total order). The schema registry's store
(``_schemas`` by default, :mod:`yangkey.registry.replica`) and the shared subscription catalog
(:mod:`yangkey.kafka.catalog_topic`) are such logs.

Its errors are :class:`~yangkey.errors.BrokerError` s: :class:`LogUnavailable` (the broker or
the partition's leader cannot be reached, or did not answer in time) and
:class:`RecordTooLarge`; each user maps them at its own boundary (the registry to its HTTP
error codes).

Besides reading and appending, the log answers two questions a user asks to notice a log
that changed under it (issue 31, item 4): the partition's end offset, and the topic's
identity (Kafka's topic id, new whenever a topic of that name is created again, so also after
a broker came back empty). After a client error the log rebuilds the clients that failed
before their next use (the readers at the position the caller has read to; the producer),
so a broker that comes back (or a new leader) is picked up without a restart (item 7).

Readers (end offsets, reading) and the writer are used by different threads: the registry
serialises each kind, not the two together. So each kind rebuilds only its own clients: a
reader closing the producer under a writer's wait for its acknowledgement (or a writer the
consumer under a read) would free a client another thread is inside.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import NamedTuple, Protocol

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    OffsetSpec,
    ResourceType,
)

from yangkey.errors import BrokerError, ConfigError
from yangkey.kafka.closing import close_producer
from yangkey.kafka.config import (
    TopicSpec,
    admin_config,
    consumer_config,
    ensure_topics,
    kafka_code,
    kafka_reason,
    producer_config,
)
from yangkey.kafka.logs import logged
from yangkey.topics import BROKER_DEFAULT


class Replay(Protocol):
    """What :meth:`KafkaLog.read` feeds: the registry's :class:`~yangkey.registry.store.Store`,
    the shared catalog's :class:`~yangkey.shared_catalog.CatalogState`."""

    end: int

    def apply(self, offset: int, raw_key: bytes | None, raw_value: bytes | None) -> None: ...

    def advance(self, end: int) -> None: ...


class LogUnavailable(BrokerError):
    """The log cannot be read or written now: the broker or the partition's leader is away,
    or did not answer in time (``timed_out``)."""

    def __init__(self, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


class RecordTooLarge(BrokerError):
    """A record over the topic's (or broker's) message size limit."""


# A transient answer while a just-created topic's leader is not known to every client yet.
END_OFFSET_ATTEMPT = 10.0
"""Seconds one end-offset request may take before it is asked again, of a fresh client: a
partition leader killed while the request is in flight never answers it, and the client's
metadata may still name it (seen with the leader of a catalog topic killed: no answer for the whole
130 s wait, while the new leader was up after seconds)."""

_TRANSIENT = (
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError._TIMED_OUT,
    # While a new leader takes over, a broker and the client may disagree on its epoch, and
    # the new leader's high watermark may lag (seen on the three-node cluster, test_cluster).
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.UNKNOWN_LEADER_EPOCH,
    KafkaError.OFFSET_NOT_AVAILABLE,
)


class LogUse(NamedTuple):
    """Who keeps a compacted log, in the words its errors use."""

    user: str
    """``the registry``, ``the shared catalog``."""
    records: str
    """What would be lost if records expired: ``registered schemas``."""
    other: str
    """How to choose another topic instead: ``, or choose another --store-topic``."""


REGISTRY_STORE = LogUse("the registry", "registered schemas", ", or choose another --store-topic")
SHARED_CATALOG = LogUse("the shared catalog", "learned subscriptions", "")


def ensure_log_topic(
    bootstrap: str,
    topic: str,
    use: LogUse = REGISTRY_STORE,
    *,
    replication_factor: int = BROKER_DEFAULT,
    min_insync_replicas: int | None = None,
    overrides: Mapping[str, object] | None = None,
    timeout: float = 15.0,
    warn: bool = True,
) -> None:
    """Create the compacted single-partition topic if missing (replicated as the broker's
    defaults say unless told otherwise; ``warn``: about too few replicas); refuse one with more
    partitions (offsets are the sequence numbers: they must be one total order) or one whose
    records can expire (a ``delete`` policy, or ``compact,delete`` with a retention). Errors
    name the topic and ``use``."""
    where = f"topic {topic}"
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
    try:
        result = ensure_topics(admin, [spec], timeout=timeout, warn=warn)
    except KafkaException as exc:
        reason = f"cannot create the topic {use.user} needs: {kafka_reason(exc)}"
        raise BrokerError(reason, source=where) from None
    if result.warnings:
        raise ConfigError(
            f"{use.user} needs a single-partition topic; " + "; ".join(result.warnings),
            source=where,
        )
    problem = expiry_problem(topic_configs(admin, topic, timeout))
    if problem:
        raise ConfigError(
            f"{problem}: {use.records} would expire; {use.user} needs "
            "cleanup.policy=compact (kafka-configs --alter --entity-type topics --entity-name "
            f"{topic} --add-config cleanup.policy=compact{use.other})",
            source=where,
        )


def topic_configs(admin: AdminClient, topic: str, timeout: float) -> dict[str, str]:
    """The topic's configuration. Asked again while a broker answers "unknown topic": the
    broker asked need not be the one that saw the topic created a moment ago (a CI run on the
    three-node cluster failed on it), and it learns of it within a second or so."""
    resource = ConfigResource(ResourceType.TOPIC, topic)
    deadline = time.monotonic() + timeout
    while True:
        try:
            entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(
                timeout
            )
            break
        except KafkaException as exc:
            unknown = kafka_code(exc) == KafkaError.UNKNOWN_TOPIC_OR_PART
            if not unknown or time.monotonic() > deadline:
                raise ConfigError(
                    f"cannot read its configuration: {kafka_reason(exc)}", source=f"topic {topic}"
                ) from None
        time.sleep(0.2)
    return {name: str(entry.value) for name, entry in entries.items() if entry.value is not None}


def expiry_problem(configs: Mapping[str, str]) -> str:
    """Why records of a topic with these configs can disappear other than by compaction
    ('' when they cannot)."""
    policy = {p.strip() for p in configs.get("cleanup.policy", "delete").split(",")}
    if "compact" not in policy:
        return f"cleanup.policy is {configs.get('cleanup.policy', 'delete')}, not compact"
    if "delete" in policy:
        for name in ("retention.ms", "retention.bytes"):
            if configs.get(name, "-1").strip() != "-1":
                return f"cleanup.policy is compact,delete with {name}={configs[name]}"
    return ""


class KafkaLog:
    """The compacted log over partition 0 of ``topic`` (the registry's
    :class:`yangkey.registry.replica.Log`)."""

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
        # Never create the topic by producing to it: a broker with auto-creation on would
        # make a delete-policy topic of the default size after the store was deleted.
        self.producer_config.update(
            {"linger.ms": 0, "compression.type": "none", "allow.auto.create.topics": False}
        )
        self.consumer_config = consumer_config(bootstrap, "yangkey-registry", overrides)
        # A writer applies its own records and rarely reads: librdkafka's prefetch (up to
        # 64 MiB by default) would hold a copy of the topic it never needs. (Lowering
        # queued.min.messages instead makes a replay three times slower.)
        self.consumer_config.update(
            {"enable.partition.eof": True, "queued.max.messages.kbytes": 1024}
        )
        self.admin_config = {"log_level": 0, **admin_config(bootstrap, overrides)}
        self._producer: Producer | None = None
        self._broken = False
        """The reading clients failed: rebuilt before the next read."""
        self._clients_lock = threading.Lock()
        self._connect(OFFSET_BEGINNING)

    def _connect(self, position: int) -> None:
        self.consumer = Consumer(logged(self.consumer_config))
        # End offsets come from a client with no fetch in flight: on the reading consumer's
        # connection the query waits behind the fetch long-poll (fetch.wait.max.ms, 500 ms).
        self.ends = Consumer(logged(self.consumer_config))
        self.admin = AdminClient(logged(self.admin_config))
        # No group subscription and no commits: every instance replays from the start.
        self.consumer.assign([TopicPartition(self.topic, 0, position)])

    def reset(self, position: int = OFFSET_BEGINNING) -> None:
        """New Kafka clients, the consumer at ``position`` (after an error, or to replay)."""
        with self._clients_lock:
            self._close_clients()
            self._connect(position)
            self._broken = False

    def _failed(self, reason: str, *, timed_out: bool = False) -> LogUnavailable:
        # The clients may be stuck (e.g. "Unknown partition" after a leader came back):
        # whatever the cause, the next read starts with new ones.
        self._broken = True
        return LogUnavailable(reason, timed_out=timed_out)

    def _heal(self, store_end: int) -> None:
        """New reading clients if they failed (the producer is the writer's to rebuild)."""
        if self._broken:
            with self._clients_lock:
                self.consumer.close()
                self.ends.close()
                self._connect(store_end if store_end > 0 else OFFSET_BEGINNING)
                self._broken = False

    # ------------------------------------------------------------------ reading

    def read(self, store: Replay, *, timeout: float | None = None) -> None:
        """Apply to ``store`` every record from ``store.end`` to the current end."""
        self.read_to(store, self.end_offset(timeout, store_end=store.end), timeout=timeout)

    def end_offset(self, timeout: float | None = None, *, store_end: int = 0) -> int:
        """The partition's end offset (the next record's), from the admin client: it looks the
        leader up afresh, where a consumer's cached metadata can stay at "Unknown partition"
        after the topic was created again."""
        self._heal(store_end)
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            left = max(deadline - time.monotonic(), 0.1)
            attempt = min(left, END_OFFSET_ATTEMPT)
            try:
                found = self.admin.list_offsets(
                    {self.partition: OffsetSpec.latest()},  # type: ignore[no-untyped-call]
                    request_timeout=attempt,
                )[self.partition].result(attempt + 1.0)
                if found.offset >= 0:
                    return int(found.offset)
                # An "invalid offset" (-1001) and no error is how librdkafka 2.x answers a
                # request its leader died with: the same client answers it again every time
                # (seen for a minute), a fresh one finds the new leader at once.
                reason = f"the broker answered offset {found.offset}"
                if time.monotonic() > deadline:
                    raise self._failed(f"cannot read the end of {self.topic}: {reason}")
                self._renew_admin()
            except KafkaException as exc:
                code = kafka_code(exc)
                if code not in _TRANSIENT or time.monotonic() > deadline:
                    raise self._failed(
                        f"cannot read the end of {self.topic}: {kafka_reason(exc)}"
                    ) from None
                if code == KafkaError._TIMED_OUT:
                    self._renew_admin()
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise self._failed(
                        f"cannot read the end of {self.topic}: no answer in {wait:g}s"
                    ) from None
                self._renew_admin()
            time.sleep(0.2)

    def _renew_admin(self) -> None:
        """A new admin client, after a request that got no answer in its time (whether
        librdkafka timed it out or the wait for its result did): asked of a leader that died
        with the request, the old client's metadata may still name it; a new one asks the
        cluster who leads now."""
        with self._clients_lock:
            self.admin = AdminClient(logged(self.admin_config))

    def identity(self, timeout: float | None = None) -> str:
        """The topic's id: another one means the topic was created again."""
        wait = self.timeout if timeout is None else timeout
        try:
            found = self.admin.describe_topics(TopicCollection([self.topic]), request_timeout=wait)[
                self.topic
            ].result(wait)
        except KafkaException as exc:
            if kafka_code(exc) == KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise LogUnavailable(f"the topic {self.topic} does not exist") from None
            raise self._failed(f"cannot describe {self.topic}: {kafka_reason(exc)}") from None
        except TimeoutError:  # concurrent.futures' on Python 3.11+
            raise self._failed(f"cannot describe {self.topic}: no answer in {wait:.0f}s") from None
        return str(found.topic_id)

    def read_to(self, store: Replay, high: int, *, timeout: float | None = None) -> None:
        """Apply records until ``store.end`` reaches ``high`` (an end offset just read)."""
        if store.end >= high:
            return
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        self._skip_applied(store.end)
        while store.end < high:
            # consume() waits its whole timeout unless the batch fills: keep it short.
            for message in self.consumer.consume(num_messages=1000, timeout=0.02):
                error = message.error()
                if error is None:
                    store.apply(message.offset() or 0, message.key(), message.value())
                elif error.code() != KafkaError._PARTITION_EOF:
                    raise self._failed(f"reading {self.topic}: {error.str()}")
                elif (message.offset() or 0) >= high:
                    # Compaction can remove the last records before the end offset.
                    store.advance(high)
            if store.end < high and time.monotonic() > deadline:
                raise self._failed(
                    f"{self.topic} read to offset {store.end}, end is {high}", timed_out=True
                )

    def _skip_applied(self, end: int) -> None:
        """Move the consumer past records applied already: a writer applies its own at once,
        and the consumer would otherwise wade through all of them the next time it reads."""
        if end <= 0:
            return
        position = self.consumer.position([self.partition])[0].offset
        if 0 <= position < end or (position < 0 and end > 0):
            self.consumer.assign([TopicPartition(self.topic, 0, end)])

    # ------------------------------------------------------------------ writing

    @property
    def producer(self) -> Producer:
        # Created on the first write: an instance that only reads never registers an
        # idempotent producer with the broker (nor logs about it while failing to start).
        if self._producer is None:
            self._producer = Producer(logged(self.producer_config))
        return self._producer

    def append(self, key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        outcome: list[tuple[KafkaError | None, int]] = []

        def delivered(error: KafkaError | None, message: Message) -> None:
            offset = message.offset()
            outcome.append((error, -1 if offset is None else offset))

        try:
            self.producer.produce(self.topic, value, key, partition=0, on_delivery=delivered)
        except (KafkaException, BufferError) as exc:
            raise self._write_failed(f"cannot write to {self.topic}: {exc}") from None
        self.producer.flush(self.timeout)
        if not outcome:
            # Not sent later, when the broker is back: the caller was told it failed (one
            # already on its way may still land; a retry then finds it). The store is away
            # (its leader gone, seen on a 3-broker cluster): 503, as for the writes after it.
            raise self._write_failed(f"no acknowledgement from {self.topic} in {self.timeout:.0f}s")
        error, offset = outcome[0]
        if error is not None:
            if error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                raise RecordTooLarge(f"the record is too large for {self.topic}")
            raise self._write_failed(f"writing to {self.topic}: {error.str()}")
        return offset

    def _write_failed(self, reason: str) -> LogUnavailable:
        """Drop the producer, its unacknowledged record with it: the next write starts a new
        one (only writers use it, one at a time)."""
        if self._producer is not None:
            self._drop_producer()
        return LogUnavailable(reason)

    def _drop_producer(self) -> None:
        assert self._producer is not None
        # Unacknowledged records of a failed write are dropped, not sent later; closed, else
        # its threads live on until garbage collection, reconnecting to (and logging about) a
        # broker that may be gone by then.
        close_producer(self._producer, purge=True)
        self._producer = None

    # ------------------------------------------------------------------ closing

    def _close_clients(self) -> None:
        if self._producer is not None:
            self._drop_producer()
        self.consumer.close()
        self.ends.close()

    def close(self) -> None:
        with self._clients_lock:
            if self._producer is not None:
                self._producer.flush(self.timeout)
            self._close_clients()
