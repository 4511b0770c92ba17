"""Closing a producer within a bound (yangkey.kafka.closing; issue 28): confluent-kafka's
``Producer.close()`` waits for every message without a limit. No broker needed: a producer
pointed at a closed port never delivers."""

from __future__ import annotations

import threading
import time

from confluent_kafka import Producer

from yangkey.kafka.closing import close_producer


def _undeliverable(timeout_ms: int) -> Producer:
    """A producer holding one message that times out after ``timeout_ms``."""
    producer = Producer(
        {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": timeout_ms, "log_level": 0}
    )
    producer.produce("t", b"value")
    return producer


def _closers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "yangkey-producer-close"]


def test_a_producer_that_cannot_deliver_does_not_hold_up_its_closer() -> None:
    started = time.monotonic()
    assert close_producer(_undeliverable(6_000), timeout=0.5) is False  # close() alone: 6 s
    assert time.monotonic() - started < 3
    assert _closers(), "the close goes on in its own thread"
    deadline = time.monotonic() + 30  # and ends when the message times out
    while _closers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _closers()


def test_purged_first_it_closes_at_once() -> None:
    started = time.monotonic()
    assert close_producer(_undeliverable(600_000), timeout=20, purge=True) is True
    assert time.monotonic() - started < 10
