"""librdkafka's own log lines, routed through Python logging and summarised.

Left alone, librdkafka prints every retry of an unreachable broker on stderr (hundreds of
lines before yangkey's own error). Handed :func:`quiet_librdkafka`'s logger (the ``logger``
client setting of confluent-kafka), they are counted instead: a failing command prints its one
``error:`` line, a command that succeeds despite warnings one summary line.
``YANGKEY_KAFKA_LOG=1`` lets them through, for debugging.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

ENV_SHOW = "YANGKEY_KAFKA_LOG"


class Summary(logging.Handler):
    """Counts librdkafka's warnings and errors and keeps the last one."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = record.getMessage()


@contextmanager
def quiet_librdkafka(
    echo: Callable[[str], None] = lambda line: click.echo(line, err=True),
) -> Iterator[logging.Logger]:
    """A logger to pass as the ``logger`` client setting; on a clean exit, one line if
    librdkafka warned."""
    logger = logging.getLogger("yangkey.librdkafka")
    show = os.environ.get(ENV_SHOW, "") not in ("", "0")
    logger.propagate = show
    logger.setLevel(logging.DEBUG if show else logging.WARNING)
    summary = Summary()
    logger.addHandler(summary)
    try:
        yield logger
    finally:
        logger.removeHandler(summary)
    if summary.count and not show:
        echo(
            f"kafka: {summary.count} librdkafka warning(s), the last: {summary.last} "
            f"({ENV_SHOW}=1 shows them all)"
        )
