"""The Spark sink's task loop without a broker: the transaction opening while the transform
runs, and delivery reports served in batches (the per-record cost of every Spark task)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaError

from yangkey.errors import BrokerError
from yangkey.messages import KeyedMessage
from yangkey.spark.delivery import sink as sink_module
from yangkey.spark.delivery.opening import PREFETCH_MESSAGES, begin_while_transforming
from yangkey.spark.delivery.sink import POLL_EVERY, KafkaSink, SinkSpec
from yangkey.spark.transform import Tally


def _messages(count: int, started: threading.Event | None = None) -> Iterator[KeyedMessage]:
    for number in range(count):
        if started is not None:
            started.set()
        yield KeyedMessage("t", str(number).encode(), b"v", (("h", b"1"),))


class _Opening:
    """A sink whose ``begin`` waits (up to 5 s) for the transform to have started."""

    def __init__(self, started: threading.Event, outcome: Tally | Exception | None) -> None:
        self.started = started
        self.outcome = outcome
        self.saw_transform = False

    def begin(self) -> Tally | None:
        self.saw_transform = self.started.wait(5)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def _begin(opening: _Opening, messages: Iterator[KeyedMessage]) -> tuple[Any, list[Any]]:
    return begin_while_transforming(opening, messages)


def test_sink_transforms_while_the_transaction_opens() -> None:
    started = threading.Event()
    opening = _Opening(started, None)
    messages = _messages(3000, started)
    done, ahead = _begin(opening, messages)
    assert done is None
    assert opening.saw_transform  # the transform ran while begin() waited on the broker
    assert ahead
    keys = [m.key for m in itertools.chain(ahead, messages)]
    assert keys == [str(n).encode() for n in range(3000)]  # nothing lost, none twice


def test_sink_holds_at_most_the_prefetch_while_the_broker_is_slow() -> None:
    reached = threading.Event()

    def counted() -> Iterator[KeyedMessage]:
        for number, message in enumerate(_messages(PREFETCH_MESSAGES * 2), start=1):
            if number == PREFETCH_MESSAGES:
                reached.set()
            yield message

    class Slow(_Opening):
        def begin(self) -> Tally | None:
            reached.wait(60)
            time.sleep(0.3)  # still opening: the transform must be waiting by now
            return None

    messages = counted()
    done, ahead = _begin(Slow(reached, None), messages)
    assert done is None
    assert len(ahead) == PREFETCH_MESSAGES
    assert next(messages).key == str(PREFETCH_MESSAGES).encode()


@pytest.mark.slow
def test_sink_returns_the_committed_tally_of_an_earlier_attempt() -> None:
    recorded = Tally(records=5)
    done, _ = _begin(_Opening(threading.Event(), recorded), _messages(10))
    assert done is recorded


@pytest.mark.slow
def test_sink_raises_what_the_opening_raised() -> None:
    failure = BrokerError("cannot initialise transactions", source="kafka h:1")
    with pytest.raises(BrokerError, match="cannot initialise transactions"):
        _begin(_Opening(threading.Event(), failure), _messages(10))


class _CountingProducer:
    """Counts produce/poll calls; ``fail_at``: the poll after that many messages reports a
    delivery error through the sink's callback."""

    instances: ClassVar[list[_CountingProducer]] = []
    fail_at: ClassVar[int | None] = None

    def __init__(self, config: dict[str, object]) -> None:
        self.on_delivery = config["on_delivery"]
        self.produced = 0
        self.polls = 0
        _CountingProducer.instances.append(self)

    def produce(  # confluent-kafka's signature: the sink passes every argument by position
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int = -1,
        callback: object = None,
        on_delivery: object = None,
        timestamp: int = 0,
        headers: object = None,
    ) -> None:
        assert (value, partition, callback, on_delivery, timestamp) == (b"v", -1, None, None, 0)
        assert headers == [("h", b"1")]
        self.produced += 1

    def poll(self, timeout: float) -> int:
        self.polls += 1
        if self.fail_at is not None and self.produced >= self.fail_at:
            self.on_delivery(KafkaError(KafkaError._MSG_TIMED_OUT), None)  # type: ignore[operator]
        return 0

    def close(self) -> bool:
        return True

    def purge(self) -> None:
        pass


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> type[_CountingProducer]:
    _CountingProducer.instances.clear()
    _CountingProducer.fail_at = None
    monkeypatch.setattr(sink_module, "Producer", _CountingProducer)
    return _CountingProducer


def _sink() -> KafkaSink:
    # confluent-kafka's loop (the native producer's: tests/unit/test_native_producer.py)
    spec = SinkSpec({"bootstrap.servers": "h:1"}, "dlq", "r", exactly_once=False, native=False)
    return KafkaSink(spec, 0, 0)


def test_sink_serves_delivery_reports_in_batches(counting: type[_CountingProducer]) -> None:
    sink = _sink()
    assert sink.send_all(_messages(5 * POLL_EVERY + 3)) == 5 * POLL_EVERY + 3
    producer = counting.instances[0]
    assert producer.produced == 5 * POLL_EVERY + 3
    assert producer.polls == 6  # every POLL_EVERY messages and once at the end


def test_sink_stops_at_the_first_reported_delivery_error(
    counting: type[_CountingProducer],
) -> None:
    counting.fail_at = POLL_EVERY
    sink = _sink()
    with pytest.raises(BrokerError, match="could not be delivered"):
        sink.send_all(_messages(10 * POLL_EVERY))
    assert counting.instances[0].produced == POLL_EVERY


@pytest.mark.parametrize("delivery", ["exactly-once", "at-least-once"])
def test_sink_batches_longer_than_the_cli_unless_told(delivery: str) -> None:
    from yangkey.kafka.config import PRODUCER_DEFAULTS  # noqa: PLC0415
    from yangkey.spark.config import JobConfig  # noqa: PLC0415
    from yangkey.spark.planning import prepare  # noqa: PLC0415

    repo = Path(__file__).resolve().parents[2]

    def producer(overrides: dict[str, object]) -> dict[str, object]:
        config = JobConfig.of(
            subscriptions=str(repo / "examples" / "subscriptions.yaml"),
            inputs=(str(repo / "tests" / "fixtures" / "notifications"),),
            bootstrap="h:1",
            preflight=False,
            delivery=delivery,
            producer_overrides=overrides,
        )
        return dict(prepare(config).sink.producer_config)

    chosen = producer({})
    assert chosen["linger.ms"] == 5_000 != PRODUCER_DEFAULTS["linger.ms"]
    assert chosen["compression.type"] == "lz4" and chosen["acks"] == "all"
    given = producer({"linger.ms": "5", "compression.type": "zstd"})
    assert given["linger.ms"] == "5" and given["compression.type"] == "zstd"  # verbatim
