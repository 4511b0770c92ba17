"""The shared subscription catalog on Kafka: the ``_yangkey_catalog`` topic (seed 001).

A single-partition compacted topic, created by whichever process needs it first, read and
written with the compacted log (:class:`yangkey.kafka.log.KafkaLog`, as the schema registry's
store: offsets are the sequence numbers, so one partition). :class:`CatalogTopic` is a
:class:`yangkey.shared_catalog.SharedCatalog` over it whose errors are one
:class:`~yangkey.errors.BrokerError` line naming the topic.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Mapping

from confluent_kafka import KafkaException

from yangkey.errors import BrokerError, ConfigError, YangkeyError
from yangkey.kafka.config import TopicSpec, admin_config, ensure_topics, kafka_reason
from yangkey.kafka.log import SHARED_CATALOG, KafkaLog, ensure_log_topic
from yangkey.kafka.logs import logged
from yangkey.shared_catalog import SharedCatalog, SharedSubscription, topic_specs
from yangkey.topics import replicas

CATALOG_TOPIC = "_yangkey_catalog"


def writer_id() -> str:
    """This process's node id in the keys it writes (host, pid and a random part)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class CatalogTopic(SharedCatalog):
    """The shared catalog of ``bootstrap``: a local cache following ``topic``, written
    through it. Thread safe (a Spark executor's tasks share one)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str = CATALOG_TOPIC,
        *,
        overrides: Mapping[str, object] | None = None,
        node: str | None = None,
        timeout: float = 15.0,
        create: bool = True,
        create_topics: bool = False,
        replication: tuple[int | None, int | None] = (None, None),
        warn: bool = True,
    ) -> None:
        """``create``: the catalog topic if missing, with ``replication`` (replication factor,
        min.insync.replicas; None: the broker's, see
        :meth:`yangkey.config.SubscriptionsFile.internal`); ``create_topics``: the Kafka topics
        of a subscription this process learns (a producer run with --create-topics).
        ``warn``: about a catalog topic with too few replicas (the driver does, not each
        executor)."""
        self.where = f"kafka://{bootstrap}/{topic}"
        self.bootstrap = bootstrap
        self.overrides = dict(overrides or {})
        self.timeout = timeout
        self.create_topics = create_topics
        if create:
            factor, in_sync = replication
            try:
                ensure_log_topic(
                    bootstrap,
                    topic,
                    SHARED_CATALOG,
                    overrides=overrides,
                    replication_factor=replicas(factor),
                    min_insync_replicas=in_sync,
                    timeout=timeout,
                    warn=warn,
                )
            except YangkeyError as exc:
                raise exc.within(f"kafka://{bootstrap}") from None
        try:
            self.kafka_log = KafkaLog(bootstrap, topic, overrides=overrides, timeout=timeout)
        except KafkaException as exc:  # librdkafka refuses a setting: one line
            raise ConfigError(
                f"invalid Kafka settings: {kafka_reason(exc)}", source=self.where
            ) from None
        super().__init__(self.kafka_log, node or writer_id())
        self._lock = threading.RLock()
        if not create:
            self._check_exists(topic)

    def _check_exists(self, topic: str) -> None:
        try:
            metadata = self.kafka_log.ends.list_topics(topic, timeout=self.timeout)
        except KafkaException as exc:
            self.close()
            reason = f"cannot reach Kafka: {kafka_reason(exc)}"
            raise BrokerError(reason, source=self.where) from None
        found = metadata.topics.get(topic)
        if found is None or found.error is not None:
            self.close()
            raise ConfigError(
                "no shared catalog here: the topic does not exist (`yangkey produce "
                "--shared-catalog` and `yangkey ingest --shared-catalog` create it)",
                source=self.where,
            )

    def sync(self) -> None:
        with self._lock:
            try:
                super().sync()
            except BrokerError as exc:
                raise BrokerError(exc.reason, source=self.where) from None

    def records(self) -> list[SharedSubscription]:
        with self._lock:
            return super().records()

    def find(self, subscription_id: int) -> list[SharedSubscription]:
        with self._lock:
            return super().find(subscription_id)

    def publish(self, record: SharedSubscription) -> SharedSubscription:
        with self._lock:
            try:
                winner = super().publish(record)
            except BrokerError as exc:
                raise BrokerError(exc.reason, source=self.where) from None
        if self.create_topics and winner.origin == "learned":
            # Before the first message goes to them (the file's are created at start-up).
            self._ensure(topic_specs([winner]))
        return winner

    def _ensure(self, specs: list[TopicSpec]) -> None:
        from confluent_kafka.admin import AdminClient  # noqa: PLC0415

        config = {"log_level": 0, **admin_config(self.bootstrap, self.overrides)}
        try:
            ensure_topics(AdminClient(logged(config)), specs, timeout=self.timeout)
        except KafkaException as exc:
            names = ", ".join(spec.name for spec in specs)
            reason = f"cannot create topics {names}: {kafka_reason(exc)}"
            raise BrokerError(reason, source=f"kafka://{self.bootstrap}") from None

    def close(self) -> None:
        self.kafka_log.close()

    def __enter__(self) -> CatalogTopic:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
