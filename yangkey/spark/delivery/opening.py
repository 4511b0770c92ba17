"""A task's transaction opened in another thread while its input is transformed.

Opening a task's transaction (``init_transactions``, then the commit marker read:
:meth:`KafkaSink.begin <yangkey.spark.delivery.sink.KafkaSink.begin>`) waits on the broker for
0.1-0.7 s, a good part of a task's time; the transform goes on in the task's thread while
another one waits (both librdkafka calls release the GIL). Nothing is produced before the
transaction is open: input an earlier attempt already committed costs only the transform (a
subscription it learns reaches a shared catalog again, as it did then). At most
:data:`PREFETCH_MESSAGES` are held before waiting for the broker.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Protocol

from yangkey.messages import KeyedMessage
from yangkey.spark.transform import Tally

PREFETCH_MESSAGES = 65_536
"""Messages a task transforms at most while its transaction opens (a multiple of 256)."""


class Opens(Protocol):
    """What is opened: a sink's ``begin`` (the recorded counts of an already committed batch,
    else None)."""

    def begin(self) -> Tally | None: ...


def begin_while_transforming(
    sink: Opens, messages: Iterator[KeyedMessage]
) -> tuple[Tally | None, list[KeyedMessage]]:
    """``sink.begin()`` and the first messages of ``messages``, transformed meanwhile."""
    thread, outcome = _opening(sink)
    ahead: list[KeyedMessage] = []
    try:
        for message in messages:
            ahead.append(message)
            if not len(ahead) % 256 and (not thread.is_alive() or len(ahead) >= PREFETCH_MESSAGES):
                break
    finally:
        thread.join()  # the producer is the opening thread's until then
    return _opened(outcome), ahead


def begin_while_filling(sink: Opens, steps: Iterator[int]) -> Tally | None:
    """:func:`begin_while_transforming` of a task whose outbox the native pass fills
    (:func:`~yangkey.spark.delivery.direct.fill`'s ``steps``: the messages held after each
    chunk): chunks are filled in while the transaction opens, at most
    :data:`PREFETCH_MESSAGES` messages (plus a chunk's)."""
    thread, outcome = _opening(sink)
    try:
        for held in steps:
            if not thread.is_alive() or held >= PREFETCH_MESSAGES:
                break
    finally:
        thread.join()
    return _opened(outcome)


def _opening(sink: Opens) -> tuple[threading.Thread, list[Tally | BaseException | None]]:
    """A thread running ``sink.begin()``, and where its outcome goes."""
    outcome: list[Tally | BaseException | None] = []

    def opening() -> None:
        try:
            outcome.append(sink.begin())
        except BaseException as exc:  # re-raised in the task's thread below
            outcome.append(exc)

    thread = threading.Thread(target=opening, name="yangkey-sink-begin", daemon=True)
    thread.start()
    return thread, outcome


def _opened(outcome: list[Tally | BaseException | None]) -> Tally | None:
    """``sink.begin()``'s answer from its thread (joined), or its exception raised."""
    done = outcome[0]
    if isinstance(done, BaseException):
        raise done
    return done
