"""librdkafka's own log lines, routed through Python logging and summarised.

Left alone, librdkafka prints every retry of an unreachable broker on stderr (hundreds of
lines before yangkey's own error). Handed :func:`quiet_librdkafka`'s logger (the ``logger``
client setting of confluent-kafka), they are summarised instead:

* during start-up (``grace`` seconds) nothing is printed: the command's own check (e.g.
  ``cannot reach Kafka``) is the one error line;
* later, a connection lost is one line, the first warning of a burst; the rest of the burst
  (until ``quiet`` seconds pass without one) is only counted;
* on a clean exit after warnings, one summary line.

``YANGKEY_KAFKA_LOG=1`` lets every line through, for debugging.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

ENV_SHOW = "YANGKEY_KAFKA_LOG"


def _stderr(line: str) -> None:
    click.echo(line, err=True)


class Summary(logging.Handler):
    """Counts librdkafka's warnings and errors; echoes the first of each burst after start-up."""

    def __init__(
        self,
        echo: Callable[[str], None],
        *,
        grace: float,
        quiet: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(logging.WARNING)
        self.echo = echo
        self.clock = clock
        self.started = clock()
        self.grace = grace
        self.quiet = quiet
        self.count = 0
        self.last = ""
        self._last_at: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        now = self.clock()
        self.count += 1
        self.last = record.getMessage()
        new_burst = self._last_at is None or now - self._last_at >= self.quiet
        self._last_at = now
        if new_burst and now - self.started >= self.grace:
            self.echo(f"kafka: {self.last} (the same again is not shown)")


@contextmanager
def quiet_librdkafka(
    echo: Callable[[str], None] = _stderr,
    *,
    grace: float = 20.0,
    quiet: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[logging.Logger]:
    """A logger to pass as the ``logger`` client setting (see the module doc)."""
    logger = logging.getLogger("yangkey.librdkafka")
    show = os.environ.get(ENV_SHOW, "") not in ("", "0")
    logger.propagate = show
    logger.setLevel(logging.DEBUG if show else logging.WARNING)
    summary = Summary(echo, grace=grace, quiet=quiet, clock=clock)
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
