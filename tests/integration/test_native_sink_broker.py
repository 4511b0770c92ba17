"""The Spark sink's native producer on the real broker (issue 33): every scenario runs through
``KafkaSink`` with the native producer and with confluent-kafka's, and both must leave the
same bytes in the log (read back read_committed) and raise the same errors.

Unit tests of the adapter (config, library check, error mapping) are
tests/unit/test_native_producer.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from test_spark_job import consume

from yangkey.errors import BrokerError
from yangkey.messages import KeyedMessage
from yangkey.registry.client import RegistrySettings
from yangkey.spark.delivery import native_producer
from yangkey.spark.delivery.sink import KafkaSink, SimulatedCrash
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.transform import Tally

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")
if native_producer.load()[0] is None:  # YANGKEY_NATIVE=0, an older build, another librdkafka
    pytest.skip(
        f"the native producer is off: {native_producer.load()[1]}", allow_module_level=True
    )

SINKS = {"native": True, "confluent-kafka": False}
CONFIG = {"transaction.timeout.ms": 60_000, "message.timeout.ms": 30_000, "linger.ms": 50}


def _create(bootstrap: str, *topics: str, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, 1, 1, config=dict(config)) for t in topics])
    for future in futures.values():
        future.result(30)


def _spec(bootstrap: str, prefix: str, native: bool, **extra: object) -> SinkSpec:
    return SinkSpec(
        {**CONFIG, "bootstrap.servers": bootstrap},
        f"{prefix}-dl",
        f"run-{prefix}",
        timeout=60.0,
        native=native,
        **extra,  # type: ignore[arg-type]
    )


def _sink(spec: SinkSpec, attempt: int = 0) -> KafkaSink:
    sink = KafkaSink(spec, 0, attempt)
    assert sink.native is spec.native  # the native producer really ran (or really did not)
    return sink


def _messages(topic: str, dead_letter: str) -> list[KeyedMessage]:
    return [
        KeyedMessage(
            topic,
            b"pe1\n1042\n/ietf-interfaces:interfaces/interface[name='ge-0/0/1']",
            b'{"a":1}',
            (("content-type", b"application/yang-data+json"), ("yangkey-event-time", b"2026")),
        ),
        KeyedMessage(topic, None, b"no key", ()),
        KeyedMessage(topic, b"", b"", (("a", b"1"), ("a", b"2"), ("b", b""))),
        KeyedMessage(dead_letter, None, b"\xff raw", (("yangkey-error-kind", b"decode"),)),
        *(KeyedMessage(topic, b"k%d" % i, b"v" * i, (("n", b"%d" % i),)) for i in range(200)),
    ]


def _read(bootstrap: str, *topics: str, committed: bool = True) -> Iterator[tuple[object, ...]]:
    """Topic by topic, each in its order (one partition each): how the consumer interleaves
    the topics varies from run to run (a CI run read the dead letter first)."""
    found = consume(bootstrap, topics, committed=committed)
    for message in sorted(found, key=lambda message: topics.index(message.topic())):
        yield (
            topics.index(message.topic()),
            message.key(),
            message.value(),
            tuple(message.headers() or ()),
        )


@pytest.fixture
def prefixes(topic_name: str) -> dict[str, str]:
    return {name: f"{topic_name}-{name}" for name in SINKS}


def test_committed_output_identical_to_confluent_kafkas(
    kafka_bootstrap: str, prefixes: dict[str, str]
) -> None:
    read: dict[str, list[tuple[object, ...]]] = {}
    metadata: dict[str, tuple[int, str]] = {}
    for name, native in SINKS.items():
        prefix = prefixes[name]
        topic, dead_letter = f"{prefix}-t", f"{prefix}-dl"
        _create(kafka_bootstrap, topic, dead_letter)
        spec = _spec(
            kafka_bootstrap,
            prefix,
            native,
            schema_registry=RegistrySettings("http://127.0.0.1:1"),
            schema_ids={topic: 42},
        )
        tally = Tally(records=204, produced={topic: 203}, rejected={"decode": 1})  # type: ignore[arg-type]
        sink = _sink(spec)
        try:
            assert sink.begin() is None
            assert sink.send_all(iter(_messages(topic, dead_letter))) == 204
            sink.commit(tally)
        finally:
            sink.close()
        read[name] = list(_read(kafka_bootstrap, topic, dead_letter))
        # the commit marker, written by send_offsets_to_transaction, read back by a new
        # attempt: the batch is done, with the counts committed
        again = _sink(spec, attempt=1)
        try:
            assert again.begin() == tally
            stored = again._consumer.committed([again._marker_partition()], timeout=10)[0]
            metadata[name] = (stored.offset, stored.metadata.replace(prefix, "<prefix>"))
        finally:
            again.close()
    assert read["native"] == read["confluent-kafka"]
    assert metadata["native"] == metadata["confluent-kafka"]
    assert metadata["native"][1].endswith('"r":204,"x":{"decode":1}}')
    first = next(m for m in read["native"] if m[0] == 0)
    assert first[3] == (
        ("content-type", b"application/yang-data+json"),
        ("yangkey-event-time", b"2026"),
        ("schema-id", b"42"),
    )
    assert (0, None, b"no key", (("schema-id", b"42"),)) in read["native"]
    assert (1, None, b"\xff raw", (("yangkey-error-kind", b"decode"),)) in read["native"]
    assert len(read["native"]) == 204


def test_aborted_transaction_invisible(kafka_bootstrap: str, prefixes: dict[str, str]) -> None:
    prefix = prefixes["native"]
    topic, dead_letter = f"{prefix}-t", f"{prefix}-dl"
    _create(kafka_bootstrap, topic, dead_letter)
    spec = _spec(kafka_bootstrap, prefix, True)
    sink = _sink(spec)
    try:
        assert sink.begin() is None
        sink.send_all(iter(_messages(topic, dead_letter)[:3]))
        sink.flush()
        sink.abort()
    finally:
        sink.close()
    after = _sink(spec, attempt=1)
    try:
        assert after.begin() is None
        after.send(KeyedMessage(topic, b"after", b"committed"))
        after.commit(Tally())
    finally:
        after.close()
    assert list(_read(kafka_bootstrap, topic)) == [(0, b"after", b"committed", ())]
    assert len(list(_read(kafka_bootstrap, topic, committed=False))) == 4


def _normalised(error: BaseException, prefix: str) -> str:
    return re.sub(r"\s+", " ", str(error).replace(prefix, "<prefix>"))


def test_crashed_attempt_fenced_by_its_retry(
    kafka_bootstrap: str, prefixes: dict[str, str]
) -> None:
    errors: dict[str, str] = {}
    for name, native in SINKS.items():
        prefix = prefixes[name]
        topic, dead_letter = f"{prefix}-t", f"{prefix}-dl"
        _create(kafka_bootstrap, topic, dead_letter)
        spec = _spec(kafka_bootstrap, prefix, native)
        messages = _messages(topic, dead_letter)[4:24]
        zombie = _sink(spec)
        assert zombie.begin() is None
        with pytest.raises(SimulatedCrash, match="crashes after 7 message"):
            zombie.send_all(iter(messages), crash_after=7)
        # the zombie's transaction stays open (a lost executor): the retry fences it
        retry = _sink(spec, attempt=1)
        try:
            assert retry.begin() is None
            retry.send_all(iter(messages))
            retry.commit(Tally(records=20))
        finally:
            retry.close()
        with pytest.raises(BrokerError) as fenced:
            zombie.commit(Tally(records=7))
        zombie.abort()
        zombie._in_transaction = False
        zombie.close()
        errors[name] = _normalised(fenced.value, prefix)
        assert [m[1] for m in _read(kafka_bootstrap, topic)] == [m.key for m in messages]
        assert len(list(_read(kafka_bootstrap, topic, committed=False))) == 27
    assert errors["native"] == errors["confluent-kafka"]
    assert "fenced" in errors["native"].lower()


def test_delivery_failure_worded_as_before(
    kafka_bootstrap: str, prefixes: dict[str, str]
) -> None:
    errors: dict[str, str] = {}
    for name, native in SINKS.items():
        prefix = prefixes[name]
        topic, dead_letter = f"{prefix}-t", f"{prefix}-dl"
        _create(kafka_bootstrap, dead_letter)
        _create(kafka_bootstrap, topic, **{"max.message.bytes": "1000"})
        sink = _sink(_spec(kafka_bootstrap, prefix, native))
        try:
            assert sink.begin() is None
            too_big = KeyedMessage(topic, b"k", b"x" * 5000)
            sink.send_all(iter([too_big, KeyedMessage(topic, b"k", b"y")]))
            with pytest.raises(BrokerError) as failed:
                sink.flush()
            sink.abort()
        finally:
            sink.close()
        errors[name] = _normalised(failed.value, prefix)
    assert errors["native"] == errors["confluent-kafka"]
    # the whole batch fails with its too-large message
    assert "2 message(s) could not be delivered (first to topic <prefix>-t)" in errors["native"]
    assert "too large" in errors["native"]


def test_at_least_once_output_and_failure_identical(
    kafka_bootstrap: str, prefixes: dict[str, str]
) -> None:
    """``--delivery at-least-once``: no transactional id, no marker; every message visible
    once flushed, and a failed delivery raises as confluent-kafka's does."""
    read: dict[str, list[tuple[object, ...]]] = {}
    errors: dict[str, str] = {}
    for name, native in SINKS.items():
        prefix = prefixes[name]
        topic, dead_letter, small = f"{prefix}-t", f"{prefix}-dl", f"{prefix}-small"
        _create(kafka_bootstrap, topic, dead_letter)
        _create(kafka_bootstrap, small, **{"max.message.bytes": "1000"})
        spec = _spec(kafka_bootstrap, prefix, native, exactly_once=False)
        sink = _sink(spec)
        try:
            assert sink.begin() is None
            assert sink.send_all(iter(_messages(topic, dead_letter))) == 204
            sink.commit(Tally(records=204))
            sink.send_all(iter([KeyedMessage(small, b"k", b"x" * 5000)]))
            with pytest.raises(BrokerError) as failed:
                sink.flush()
        finally:
            sink.close()
        read[name] = list(_read(kafka_bootstrap, topic, dead_letter, committed=False))
        errors[name] = _normalised(failed.value, prefix)
    assert read["native"] == read["confluent-kafka"]
    assert len(read["native"]) == 204
    assert errors["native"] == errors["confluent-kafka"]
    assert "1 message(s) could not be delivered (first to topic <prefix>-small)" in errors["native"]
