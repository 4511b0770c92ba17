"""The Kafka sink of the Spark job: one confluent-kafka producer per task attempt.

Exactly-once (the default) works like this, per Spark partition ``p`` of a run:

1. ``transactional.id = <prefix>-<run id>-<p>``: stable across attempts of the same
   partition, so ``init_transactions`` of a retry (or of a speculative copy) **fences** the
   earlier attempt, and aborts whatever transaction that zombie left open.
2. Right after that, the sink reads a *commit marker* (:mod:`yangkey.spark.delivery.markers`): the
   committed offset of consumer group ``<transactional.id>`` on partition 0 of the
   dead-letter topic. The marker is written by ``send_offsets_to_transaction`` in the same
   transaction as the messages, so it is visible exactly when they are. If it says this
   batch is done (offset > batch id) for the *same* input range and checkpoint identity, an
   earlier attempt committed and lost only its report to the driver (an executor lost after
   the commit, a speculative race): the attempt produces nothing and returns the counts
   recorded in the marker's metadata. A marker for another range or identity stops the task
   with an error instead of skipping input it never produced.
3. Otherwise: ``begin_transaction``, produce every record (``poll(0)`` after each),
   ``flush`` (every delivery error or a timeout raises, the task fails), marker, commit.
   Any error aborts the transaction and raises; consumers reading ``read_committed`` never
   see a message of an aborted attempt.

The opening (steps 1, 2 and ``begin_transaction``: :meth:`KafkaSink.begin`) runs in another
thread while the task transforms its first records (:mod:`yangkey.spark.delivery.opening`).

With a schema registry (``--schema-registry``) every keyed message carries header
``schema-id``: the id of its topic's value schema, which the driver registered for every topic
the catalog knows and shipped here (:attr:`SinkSpec.schema_ids`); a topic only a learned
subscription derives is registered by the first task that sends to it, once per executor
process (:func:`yangkey.registry.client.learned_topic_id`). Dead letters carry none.

``at-least-once`` mode uses a plain idempotent producer without transactions (faster, but a
retried task re-sends what its failed attempt already delivered).

Either producer is the native one where the executor has it
(:mod:`~yangkey.spark.delivery.native_producer`: chunks of :data:`POLL_EVERY` messages a
call into librdkafka), else confluent-kafka's; both write the same bytes and raise the same
errors.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Iterable, Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from yangkey.catalog import Catalog
from yangkey.errors import BrokerError, ConfigError, InputError
from yangkey.kafka.closing import close_producer
from yangkey.kafka.config import kafka_reason
from yangkey.kafka.logs import logged, transactional_logger
from yangkey.messages import Headers, KeyedMessage, schema_id_headers
from yangkey.producer import MessageBuilder
from yangkey.registry.client import learned_topic_id
from yangkey.spark.delivery.direct import fill, make_outbox
from yangkey.spark.delivery.markers import Marker, decode_marker, encode_marker
from yangkey.spark.delivery.native_producer import NativeProducer, ProduceFailed
from yangkey.spark.delivery.opening import begin_while_filling, begin_while_transforming
from yangkey.spark.delivery.spec import PartitionResult, SinkSpec
from yangkey.spark.lines import transform
from yangkey.spark.source.splitting import LineRecords, RawRecord
from yangkey.spark.source.units import describe_range_key
from yangkey.spark.transform import Tally

_COORDINATOR_RETRY = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError._WAIT_COORD,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
    KafkaError.UNSTABLE_OFFSET_COMMIT,
}


POLL_EVERY = 1024
"""Messages between two ``poll(0)`` calls of a task's producer."""


class SimulatedCrash(RuntimeError):
    """Raised by the ``fail_after`` test hook: the attempt dies *without* aborting, like a
    lost executor, leaving an open transaction for the retry to fence."""


class KafkaSink:
    """One task attempt's producer: open, send…, commit or abort."""

    def __init__(
        self,
        spec: SinkSpec,
        partition: int,
        attempt: int,
        batch_id: int = 0,
        range_key: str = "",
        catalog: Catalog | None = None,
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        """Where a learned topic's schema comes from (the task's builder's catalog)."""
        self._extra_headers: dict[str, tuple[tuple[str, bytes], ...]] = {}
        self.partition = partition
        self.attempt = attempt
        self.batch_id = batch_id
        self.range_key = range_key
        self._error: str | None = None
        self._error_topic = ""
        self._failed = 0
        self._in_transaction = False
        config = dict(spec.producer_config)
        config["on_delivery"] = self._on_delivery
        config.setdefault("delivery.report.only.error", True)
        if spec.exactly_once:
            config["transactional.id"] = spec.transactional_id(partition)
            config.setdefault("logger", transactional_logger())
        self._native = NativeProducer.open(logged(config))[0] if spec.native else None
        self.native = self._native is not None
        """Whether the native producer runs (:mod:`~yangkey.spark.delivery.native_producer`)."""
        self._producer: Any = self._native or Producer(logged(config))
        self._consumer: Any = None

    # -- helpers ---------------------------------------------------------------------------

    def _where(self) -> str:
        return (
            f"kafka {self.spec.bootstrap}, partition task {self.partition}"
            f" (attempt {self.attempt}, batch {self.batch_id})"
        )

    def _fail(self, what: str, exc: BaseException | str) -> BrokerError:
        reason = exc if isinstance(exc, str) else kafka_reason(exc)
        return BrokerError(f"{what}: {reason}", source=self._where())

    def _on_delivery(self, error: KafkaError | None, message: Any) -> None:
        if error is not None:
            self._failed += 1
            if self._error is None:
                self._error = str(error.str())
                self._error_topic = message.topic() if message is not None else "?"

    def _raise_delivery_error(self) -> None:
        if self._native is not None and (failure := self._native.delivery_failure()):
            self._failed, self._error_topic, self._error = failure
        if self._error is not None:
            raise self._fail(
                f"{self._failed} message(s) could not be delivered (first to topic"
                f" {self._error_topic})",
                self._error,
            )

    # -- lifecycle -------------------------------------------------------------------------

    def begin(self) -> Tally | None:
        """Start the attempt. Returns the recorded counts if this batch was already committed
        (then nothing must be produced), else None."""
        if not self.spec.exactly_once:
            return None
        timeout = self.spec.timeout
        try:
            self._producer.init_transactions(timeout)
        except KafkaException as exc:
            raise self._fail(
                f"cannot initialise transactions (transactional.id"
                f" {self.spec.transactional_id(self.partition)}) within {timeout:.0f}s;"
                " is the broker reachable and does it allow transactions",
                exc,
            ) from None
        marker = self._committed_marker()
        if marker is not None and marker.batches > self.batch_id:
            return self._already_done(marker)
        try:
            self._producer.begin_transaction()
        except KafkaException as exc:
            raise self._fail("cannot begin a transaction", exc) from None
        self._in_transaction = True
        return None

    def _marker_partition(self) -> TopicPartition:
        return TopicPartition(self.spec.dead_letter_topic, 0)

    def _already_done(self, marker: Marker) -> Tally:
        """The counts of a committed earlier attempt, if it really covered this input."""
        task = self.spec.transactional_id(self.partition)
        if marker.identity != self.spec.identity:
            raise ConfigError(
                f"commit marker {task} is at micro-batch {marker.batches - 1} of another"
                f" checkpoint (identity {marker.identity or 'none'}): refusing to skip batch"
                f" {self.batch_id} of this one",
                source=self._where(),
            )
        if self.range_key and marker.range_key != self.range_key:
            raise InputError(
                f"run {self.spec.run_id} committed {describe_range_key(marker.range_key)} as"
                f" task {self.partition}, now planned as {describe_range_key(self.range_key)}:"
                " the input changed under a committed task (Hadoop URIs are not resumed"
                " range by range); start a new run (another --run-id)",
                source=self._where(),
            )
        return marker.tally

    def _committed_marker(self) -> Marker | None:
        self._consumer = Consumer(logged(self.spec.marker_consumer_config(self.partition)))
        deadline = time.monotonic() + self.spec.timeout
        while True:
            try:
                found = self._consumer.committed([self._marker_partition()], timeout=10)[0]
                break
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                retry = isinstance(error, KafkaError) and (
                    error.code() in _COORDINATOR_RETRY or error.retriable()
                )
                if not retry or time.monotonic() > deadline:
                    raise self._fail("cannot read the commit marker", exc) from None
                time.sleep(0.2)
        if found.error is not None:
            raise self._fail("cannot read the commit marker", str(found.error.str()))
        if found.offset is None or found.offset < 0:
            return None
        return decode_marker(self.partition, int(found.offset), getattr(found, "metadata", None))

    def _headers_for(self, topic: str) -> Headers:
        """What the sink adds to the builder's headers on ``topic``: its ``schema-id``."""
        registry = self.spec.schema_registry
        if registry is None or topic == self.spec.dead_letter_topic:
            return ()
        schema_id = self.spec.schema_ids.get(topic)
        if schema_id is None and self.catalog is not None:
            schema_id = learned_topic_id(registry, self.catalog, topic)
        return schema_id_headers(schema_id)

    def send(self, message: KeyedMessage) -> None:
        self.send_all((message,))

    def send_all(self, messages: Iterable[KeyedMessage], crash_after: int | None = None) -> int:
        """Produce ``messages``; returns how many. Delivery reports (errors only) are served
        every :data:`POLL_EVERY` messages and when the local queue is full, not after each
        message: a ``poll`` per message cost as much as a third of ``produce`` itself."""
        if self._native is not None:
            return self._send_chunks(self._native, iter(messages), crash_after)
        producer = self._producer
        produce = producer.produce
        extras = self._extra_headers
        sent = 0
        for topic, key, value, headers in messages:
            extra = extras.get(topic)
            if extra is None:
                extra = self._extra_for(topic)
            # confluent-kafka takes a list (or a dict), never a tuple. Every argument is given
            # by position (partition -1: the partitioner's; no callback: the producer's
            # on_delivery; timestamp 0: now): keyword parsing cost 0.7 us of a 2.1 us produce.
            listed = [*headers, *extra] if extra else list(headers)
            while True:
                try:
                    produce(topic, value, key, -1, None, None, 0, listed)
                except BufferError:
                    producer.poll(0.05)  # the local queue is full: let deliveries drain
                    self._raise_delivery_error()
                    continue
                except KafkaException as exc:
                    raise self._fail(f"cannot produce to topic {topic}", exc) from None
                break
            sent += 1
            if not sent % POLL_EVERY:
                producer.poll(0)
                self._raise_delivery_error()
            self._crash_at(sent, crash_after)
        producer.poll(0)
        self._raise_delivery_error()
        return sent

    def _crash_at(self, sent: int, crash_after: int | None) -> None:
        if crash_after is not None and sent >= crash_after:
            self.flush()  # the messages are in the log, uncommitted: a real zombie
            raise SimulatedCrash(
                f"yangkey.test.fail_after: attempt 0 of partition {self.partition}"
                f" crashes after {sent} message(s)"
            )

    def _extra_for(self, topic: str) -> Headers:
        extra = self._extra_headers.get(topic)
        if extra is None:
            extra = self._extra_headers[topic] = self._headers_for(topic)
        return extra

    def _send_chunks(
        self, producer: NativeProducer, messages: Iterator[KeyedMessage], crash_after: int | None
    ) -> int:
        """:meth:`send_all` through the native producer: :data:`POLL_EVERY` messages a call."""
        sent = 0
        while True:
            size = POLL_EVERY if crash_after is None else min(POLL_EVERY, crash_after - sent)
            chunk = list(itertools.islice(messages, size))
            if not chunk:
                break
            try:
                sent += producer.produce_chunk(chunk, self._extra_for)
            except ProduceFailed as exc:
                raise self._fail(f"cannot produce to topic {exc.topic}", exc.error) from None
            producer.poll(0)
            self._raise_delivery_error()
            self._crash_at(sent, crash_after)
        return sent

    def outbox(self, builder: MessageBuilder, records: Iterable[RawRecord]) -> Any | None:
        """An outbox the native pass fills with ``records``' messages for
        :meth:`send_outbox` (:mod:`~yangkey.spark.delivery.direct`), or None: not the native
        producer, not a range's lines, or the native pass cannot."""
        if self._native is None or not self.spec.direct or not isinstance(records, LineRecords):
            return None
        return make_outbox(self._native.module, builder, self.spec.max_message_bytes)

    def send_outbox(self, outbox: Any) -> int:
        """Produce what ``outbox`` holds (emptied), then serve delivery reports."""
        assert self._native is not None
        try:
            sent = self._native.produce_outbox(outbox, self._extra_for)
        except ProduceFailed as exc:
            raise self._fail(f"cannot produce to topic {exc.topic}", exc.error) from None
        self._native.poll(0)
        self._raise_delivery_error()
        return sent

    def flush(self) -> None:
        """Wait for every delivery; any failure or a timeout raises."""
        timeout = self.spec.timeout
        remaining = self._producer.flush(timeout)
        self._raise_delivery_error()
        if remaining:
            raise self._fail(
                "delivery timed out",
                f"{remaining} message(s) still undelivered after {timeout:.0f}s",
            )

    def commit(self, tally: Tally) -> None:
        self.flush()
        if not self.spec.exactly_once:
            return
        marker = TopicPartition(
            self.spec.dead_letter_topic,
            0,
            self.batch_id + 1,
            metadata=encode_marker(tally, self.range_key, self.spec.identity),
        )
        timeout = self.spec.timeout
        try:
            if self._native is not None:
                self._native.send_offsets_to_transaction(
                    marker, self.spec.transactional_id(self.partition), timeout
                )
            else:
                self._producer.send_offsets_to_transaction(
                    [marker], self._consumer.consumer_group_metadata(), timeout
                )
        except KafkaException as exc:
            raise self._fail(
                f"cannot record the commit marker on {self.spec.dead_letter_topic}[0]", exc
            ) from None
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._producer.commit_transaction(max(1.0, deadline - time.monotonic()))
                break
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if (
                    isinstance(error, KafkaError)
                    and error.retriable()
                    and time.monotonic() < deadline
                ):
                    continue  # librdkafka allows retrying a timed-out commit
                raise self._fail("cannot commit the transaction", exc) from None
        self._in_transaction = False

    def abort(self) -> None:
        """Best effort: abort the open transaction (a retry would fence it anyway)."""
        if self._in_transaction:
            self._in_transaction = False
            # Fatal or fenced: the next attempt's init_transactions cleans up anyway.
            with contextlib.suppress(KafkaException):
                self._producer.abort_transaction(min(self.spec.timeout, 30.0))
        self._producer.purge()

    def close(self) -> None:
        """Release the clients. The producer holds a reference cycle (its delivery callback is
        a method of this sink), so without ``close`` its threads and connections would live
        on until the garbage collector runs; it is closed within a bound
        (:func:`~yangkey.kafka.closing.close_producer`: with the brokers gone, an unbounded
        close hung the task). A transaction still open here is the ``fail_after`` crash:
        that zombie is left for the retry to fence, not aborted."""
        if self._consumer is not None:
            with contextlib.suppress(KafkaException, RuntimeError):
                self._consumer.close()
            self._consumer = None
        if self._producer is not None and not self._in_transaction:
            close_producer(self._producer)
            self._producer = None


def produce_partition(
    records: Iterable[RawRecord],
    builder: MessageBuilder,
    spec: SinkSpec,
    partition: int,
    attempt: int,
    batch_id: int = 0,
    range_key: str = "",
) -> PartitionResult:
    """Transform and produce one partition; raises (the task fails) if anything was not
    delivered and committed."""
    started = time.monotonic()
    tally = Tally()
    if spec.dry_run:
        for _ in transform(records, builder, spec.dead_letter_topic, tally, spec.max_message_bytes):
            pass
        return PartitionResult(
            partition, attempt, batch_id, tally, False, time.monotonic() - started
        )
    sink = KafkaSink(spec, partition, attempt, batch_id, range_key, builder.catalog)
    crash_after = spec.fail_after if attempt == 0 else None
    try:
        outbox = sink.outbox(builder, records) if crash_after is None else None
        if outbox is not None:
            # the native pass straight into the native producer (spark.delivery.direct)
            assert isinstance(records, LineRecords)
            steps = fill(
                records, builder, outbox, spec.dead_letter_topic, tally, spec.max_message_bytes
            )
            done = begin_while_filling(sink, steps)
            if done is None:
                sink.send_outbox(outbox)
                for _ in steps:
                    sink.send_outbox(outbox)
        else:
            messages = transform(
                records, builder, spec.dead_letter_topic, tally, spec.max_message_bytes
            )
            done, ahead = begin_while_transforming(sink, messages)
            if done is None:
                sink.send_all(itertools.chain(ahead, messages), crash_after)
        if done is not None:
            return PartitionResult(
                partition, attempt, batch_id, done, True, time.monotonic() - started
            )
        if sink.native:
            tally.native_sink = tally.records
        sink.commit(tally)
    except SimulatedCrash:
        raise  # no abort: the retry's init_transactions must fence and abort it
    except BaseException:
        sink.abort()
        raise
    finally:
        sink.close()
    return PartitionResult(partition, attempt, batch_id, tally, False, time.monotonic() - started)
