"""A stop never hangs on a consumer whose broker is gone (clickhouse/ingest/loop.close_within)."""

from __future__ import annotations

import threading
import time

from yangkey.clickhouse.ingest.loop import close_within


class _Consumer:
    def __init__(self, blocks: bool) -> None:
        self.release = threading.Event()
        self.blocks = blocks
        self.closed = False

    def close(self) -> None:
        if self.blocks:
            self.release.wait(30)
        self.closed = True


def test_a_close_that_answers_is_waited_for() -> None:
    consumer = _Consumer(blocks=False)
    assert close_within(consumer, 5.0) is True
    assert consumer.closed


def test_a_close_that_hangs_is_given_up_after_the_bound() -> None:
    consumer = _Consumer(blocks=True)
    started = time.monotonic()
    assert close_within(consumer, 0.2) is False
    assert time.monotonic() - started < 5.0
    assert not consumer.closed
    consumer.release.set()
