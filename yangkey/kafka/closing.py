"""Closing a librdkafka producer within a bound.

confluent-kafka's ``Producer.close()`` flushes without a limit (``rd_kafka_flush(rk, -1)``)
and then destroys the handle (``rd_kafka_destroy``, which joins librdkafka's threads); the
garbage collector destroys it the same way, minus the flush. Neither has a timeout. Seen on
a three-broker cluster with two brokers killed: a Spark task's transactional producer, its
abort timed out, never returned from ``close()``, and the task, the job and ``yangkey
produce`` waited with it (issue 28). :func:`close_producer` closes in a helper thread and
waits a bounded time: by then what the producer held is decided (committed, aborted or left
for the next attempt to fence, a write reported failed), so a handle that will not close is
left to its thread rather than holding up the caller.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings

from confluent_kafka import KafkaException, Producer

CLOSE_TIMEOUT = 10.0
"""Seconds :func:`close_producer` waits by default: a healthy close takes well under one."""

log = logging.getLogger(__name__)


def close_producer(
    producer: Producer, timeout: float = CLOSE_TIMEOUT, *, purge: bool = False
) -> bool:
    """Close ``producer``, waiting at most ``timeout`` seconds; True if it closed in time.

    ``purge``: drop its unsent and in-flight messages first (they were reported failed, or
    belong to an aborted transaction)."""
    if purge:
        with contextlib.suppress(KafkaException, RuntimeError):
            producer.purge()

    def close() -> None:
        with contextlib.suppress(KafkaException, RuntimeError), warnings.catch_warnings():
            # "Producer flush failed during close": a fenced or aborted one's, nothing to say
            warnings.simplefilter("ignore", RuntimeWarning)
            producer.close()

    thread = threading.Thread(target=close, name="yangkey-producer-close", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        log.warning("a Kafka producer did not close within %gs; left to close by itself", timeout)
        return False
    return True
