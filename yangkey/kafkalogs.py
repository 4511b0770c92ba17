"""librdkafka's own log lines, routed through Python logging and summarised.

Left alone, librdkafka prints every retry of an unreachable broker on stderr (hundreds of
lines before yangkey's own error). Handed :func:`quiet_librdkafka`'s logger (the ``logger``
client setting of confluent-kafka), they are summarised instead:

* a broker that never answered prints nothing here: the command's own check (e.g. ingest's
  ``cannot reach Kafka``) is the one error line;
* a connection that was up and is lost is one line: librdkafka's ``Disconnected (after …ms in
  state UP)``, once per burst (until ``quiet`` seconds pass without another); the retries
  that follow are only counted;
* on a clean exit after warnings, one summary line.

``YANGKEY_KAFKA_LOG=1`` lets every line through, for debugging.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

ENV_SHOW = "YANGKEY_KAFKA_LOG"


def _stderr(line: str) -> None:
    click.echo(line, err=True)


class Summary(logging.Handler):
    """Counts librdkafka's warnings and errors; echoes a lost connection once per burst."""

    def __init__(
        self,
        echo: Callable[[str], None],
        *,
        quiet: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # INFO: librdkafka reports the loss of an established connection at level 6.
        super().__init__(logging.INFO)
        self.echo = echo
        self.clock = clock
        self.quiet = quiet
        self.count = 0
        self.last = ""
        self._lost_at: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        # "FAIL [rdkafka#consumer-1] [thrd:host:port/1]: host:port/1: Disconnected: … (after
        # 20731ms in state UP)": the part after the thread is the news.
        message = record.getMessage().split("]: ", 1)[-1]
        if record.levelno >= logging.WARNING:
            self.count += 1
            self.last = message
        if _LOST.search(message):
            now = self.clock()
            if self._lost_at is None or now - self._lost_at >= self.quiet:
                self.echo(f"kafka: connection lost: {message}")
            self._lost_at = now


_LOST = re.compile(r"\(after \d+ms in state UP")


@contextmanager
def quiet_librdkafka(
    echo: Callable[[str], None] = _stderr,
    *,
    quiet: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[logging.Logger]:
    """A logger to pass as the ``logger`` client setting (see the module doc)."""
    logger = logging.getLogger("yangkey.librdkafka")
    show = os.environ.get(ENV_SHOW, "") not in ("", "0")
    logger.propagate = show
    logger.setLevel(logging.DEBUG if show else logging.INFO)
    summary = Summary(echo, quiet=quiet, clock=clock)
    if not show:
        logger.addHandler(summary)
    try:
        yield logger
    finally:
        logger.removeHandler(summary)
    if summary.count:
        echo(
            f"kafka: {summary.count} librdkafka warning(s), the last: {summary.last} "
            f"({ENV_SHOW}=1 shows them all)"
        )


_RETRIED_COORDINATOR = re.compile(r"(Coordinator load in progress|Not coordinator): retrying")


class _WithoutCoordinatorRetries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _RETRIED_COORDINATOR.search(record.getMessage()) is None


@functools.cache
def transactional_logger() -> logging.Logger:
    """A ``logger`` client setting for a transactional producer: librdkafka's lines on
    stderr as before, but for the retries of a transaction coordinator that is still loading.
    A new broker's first transactions print them for every task ("Failed to acquire
    transactional PID … Coordinator load in progress: retrying") and then succeed; a
    coordinator that never comes ends in the caller's own error. ``YANGKEY_KAFKA_LOG=1`` keeps
    them."""
    logger = logging.getLogger("yangkey.librdkafka.transactions")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("kafka: %(message)s"))
    if os.environ.get(ENV_SHOW, "") in ("", "0"):
        handler.addFilter(_WithoutCoordinatorRetries())
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger
