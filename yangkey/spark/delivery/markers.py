"""Commit markers: which exact input each task of a run committed, as the broker keeps them.

A task of run ``R`` (transactional id and marker group ``<prefix>-R-<task>``) commits its
marker in the same transaction as its messages: the committed offset of that group on
partition 0 of the dead-letter topic is ``batch id + 1``, and the offset metadata records

* the task's counts (:class:`~yangkey.spark.transform.Tally`),
* ``k``, the exact range it read: ``kafka:<topic>:<partition>:<start>:<end>`` or
  ``file:<path hash>:<start>:<end>:<sha-256 of those bytes>`` (empty in streaming; the
  planned ranges make them, :mod:`yangkey.spark.source.units`),
* ``c``, the identity of the streaming checkpoint it ran under (empty in batch runs,
  :mod:`yangkey.spark.delivery.checkpoint`).

:class:`MarkerStore` reads them back on the driver, keeps the run record ``<prefix>-R-run``
(how many task numbers were handed out; its offset metadata holds the run's state and
heartbeat, :mod:`yangkey.spark.delivery.fencing`) and fences the transactions an interrupted
run left open. What a resumed run still has to do is :mod:`yangkey.spark.delivery.resume`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from yangkey.errors import BrokerError
from yangkey.kafka.closing import close_producer
from yangkey.kafka.config import admin_config, connection_settings
from yangkey.kafka.logs import logged
from yangkey.spark.transform import Tally

MARKER_METADATA_LIMIT = 3000
"""Brokers refuse offset metadata over ``offset.metadata.max.bytes`` (4096 by default)."""

T = TypeVar("T")
_TRY_AGAIN = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.UNSTABLE_OFFSET_COMMIT,
    KafkaError._WAIT_COORD,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
}


# --------------------------------------------------------------------------- markers


@dataclass(frozen=True)
class Marker:
    """A task's commit marker as read back."""

    task: int
    batches: int
    """The committed offset: the id of the last committed batch + 1."""
    tally: Tally
    range_key: str = ""
    identity: str = ""


def encode_marker(tally: Tally, range_key: str, identity: str) -> str:
    room = MARKER_METADATA_LIMIT - len(range_key) - len(identity) - 16
    data = json.loads(tally.to_compact_json(room))
    data["k"] = range_key
    data["c"] = identity
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def decode_marker(task: int, offset: int, metadata: str | None) -> Marker:
    text = metadata or "{}"
    try:
        data = json.loads(text)
    except ValueError:
        data = {}
    return Marker(
        task,
        offset,
        Tally.from_json(text) if data else Tally(),
        str(data.get("k", "")),
        str(data.get("c", "")),
    )


# --------------------------------------------------------------------------- the broker side


def admin_for(producer_config: Mapping[str, object]) -> AdminClient:
    """An admin client of the cluster ``producer_config`` produces to."""
    connection = connection_settings(producer_config)
    bootstrap = str(connection["bootstrap.servers"])
    return AdminClient(logged(admin_config(bootstrap, connection)))


@dataclass(frozen=True)
class RunScope:
    """Where one run's markers, run record and transactional ids live: consumer groups and
    transactional ids ``<prefix>-<run id>-…``, offsets on partition 0 of the dead-letter topic,
    on the cluster the admin client and connection settings reach."""

    admin: Any
    connection: Mapping[str, object]
    """The producer's connection settings (bootstrap, TLS, SASL) for the clients made here."""
    prefix: str
    run_id: str
    dead_letter_topic: str

    @classmethod
    def of(
        cls,
        producer_config: Mapping[str, object],
        prefix: str,
        run_id: str,
        dead_letter_topic: str,
    ) -> RunScope:
        """The scope of run ``run_id`` on the cluster ``producer_config`` produces to."""
        return cls(
            admin_for(producer_config),
            connection_settings(producer_config),
            prefix,
            run_id,
            dead_letter_topic,
        )

    def of_run(self, run_id: str) -> RunScope:
        """Another run under the same prefix."""
        return replace(self, run_id=run_id)


class MarkerStore:
    """The markers, run record and transactional ids of one run, seen from the driver."""

    def __init__(self, scope: RunScope, timeout: float = 30.0) -> None:
        self.admin = scope.admin
        self.connection = dict(scope.connection)
        self.prefix = f"{scope.prefix}-{scope.run_id}-"
        self.run_id = scope.run_id
        self.partition = TopicPartition(scope.dead_letter_topic, 0)
        self.timeout = timeout

    def retrying(self, call: Callable[[], T]) -> T:
        """``call()`` again while the broker says try again (a coordinator still loading)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return call()
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                retry = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _TRY_AGAIN
                )
                if not retry or time.monotonic() > deadline:
                    raise
            time.sleep(0.2)

    @property
    def record_group(self) -> str:
        return f"{self.prefix}run"

    def committed(self, group: str) -> TopicPartition | None:
        """``group``'s committed offset (and metadata) on the marker partition, if any."""
        from confluent_kafka import ConsumerGroupTopicPartitions  # noqa: PLC0415

        request = [ConsumerGroupTopicPartitions(group, [self.partition])]

        def ask() -> Any:
            futures = self.admin.list_consumer_group_offsets(
                request, require_stable=True, request_timeout=self.timeout
            )
            return futures[group].result().topic_partitions

        found = self.retrying(ask)
        for tp in found or ():
            if tp.error is None and tp.offset is not None and tp.offset >= 0:
                return tp  # type: ignore[no-any-return]
        return None

    def groups(self) -> list[str]:
        """Every consumer group on the broker (raises KafkaException)."""
        listing = self.retrying(
            lambda: self.admin.list_consumer_groups(request_timeout=self.timeout).result()
        )
        return sorted(g.group_id for g in listing.valid)

    def read(self) -> tuple[dict[int, Marker], int]:
        """(markers by task number, number of task numbers handed out so far)."""
        try:
            groups = [g for g in self.groups() if g.startswith(self.prefix)]
            markers: dict[int, Marker] = {}
            handed_out = 0
            for group in groups:
                suffix = group[len(self.prefix) :]
                if suffix != "run" and not suffix.isdigit():
                    continue
                found = self.committed(group)
                if found is None:
                    continue
                if suffix == "run":
                    handed_out = max(handed_out, int(found.offset))
                    continue
                task = int(suffix)
                markers[task] = decode_marker(task, int(found.offset), found.metadata)
                handed_out = max(handed_out, task + 1)
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read the commit markers of run {self.run_id}: {exc}",
                source=f"kafka group {self.prefix}*",
            ) from None
        return markers, handed_out

    def record_consumer(self) -> Any:
        """A consumer that writes the run record (kept open by a heartbeat)."""
        return Consumer(
            logged({**self.connection, "group.id": self.record_group, "enable.auto.commit": False})
        )

    def record(self, handed_out: int, metadata: str = "", consumer: Any = None) -> None:
        """Remember how many task numbers the run has handed out (before tasks start), with
        the run's state (:mod:`yangkey.spark.delivery.fencing`) as metadata."""
        writer = consumer or self.record_consumer()
        offsets = [TopicPartition(self.partition.topic, 0, handed_out, metadata)]
        try:
            self.retrying(lambda: writer.commit(offsets=offsets, asynchronous=False))
        except KafkaException as exc:
            raise BrokerError(
                f"cannot record the tasks of run {self.run_id}: {exc}",
                source=f"kafka group {self.record_group}",
            ) from None
        finally:
            if consumer is None:
                writer.close()

    def fence(self, tasks: Iterable[int]) -> int:
        """Abort whatever transaction the given tasks left open; returns how many."""
        ids = [f"{self.prefix}{task}" for task in tasks]

        def one(transactional_id: str) -> None:
            settings = {"log_level": 3, **self.connection, "transactional.id": transactional_id}
            producer = Producer(logged(settings))
            try:
                producer.init_transactions(self.timeout)
            except KafkaException as exc:
                raise BrokerError(
                    f"cannot fence the transactions an earlier attempt left open: {exc}",
                    source=f"transactional.id {transactional_id}",
                ) from None
            finally:
                close_producer(producer)

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(one, ids))
        return len(ids)
