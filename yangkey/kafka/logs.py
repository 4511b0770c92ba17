"""librdkafka's own log lines, routed through Python logging and summarised.

Left alone, librdkafka prints every retry of an unreachable broker on stderr (hundreds of
lines before yangkey's own error). Every client yangkey builds takes the ``logger`` client
setting of confluent-kafka instead (:func:`logged`: :func:`client_logger`, or a task's
:func:`transactional_logger`), so no line reaches stderr unasked:

* by default warnings and errors are ``kafka: …`` lines;
* under :func:`quiet_librdkafka` (the commands that talk to Kafka for long) they are
  summarised instead: a broker that never answered prints nothing here (the command's own
  check, e.g. ingest's ``cannot reach Kafka``, is the one error line); a connection that was
  up and is lost is one line, librdkafka's ``Disconnected (after …ms in state UP)``, once per
  burst (until ``quiet`` seconds pass without another), the retries that follow only
  counted; on a clean exit after warnings, one summary line;
* in a run with a log file (:func:`log_to_file`, ``yangkey produce``) every line also goes
  there, and only there from the Spark workers it starts.

``YANGKEY_KAFKA_LOG=1`` lets every line through to stderr, for debugging.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV_SHOW = "YANGKEY_KAFKA_LOG"


def _stderr(line: str) -> None:
    # print, not click: this runs in Spark executors too, where nothing else needs click
    print(line, file=sys.stderr, flush=True)


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


CLIENT_LOGGER = "yangkey.librdkafka"
ENV_RUN_LOG = "YANGKEY_RUN_LOG"
"""The run's log file (:func:`log_to_file`), for the processes a run starts."""
_FILE_FORMAT = logging.Formatter("%(asctime)s kafka %(process)d: %(message)s", "%y/%m/%d %H:%M:%S")


def _show() -> bool:
    return os.environ.get(ENV_SHOW, "") not in ("", "0")


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the ``sys.stderr`` of the moment (click's, pytest's), not the one current when
    the handler was made: yangkey's loggers live as long as the process."""

    def emit(self, record: logging.LogRecord) -> None:
        self.setStream(sys.stderr)
        super().emit(record)


class _Console(StderrHandler):
    """``kafka: …`` on stderr."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.setLevel(level)
        self.setFormatter(logging.Formatter("kafka: %(message)s"))


def logged(config: Mapping[str, Any]) -> dict[str, Any]:
    """A client config with the ``logger`` setting (unless it has one): build every
    ``Producer``, ``Consumer`` and ``AdminClient`` from one, so librdkafka's lines go
    through yangkey's logger, never straight to stderr."""
    return {"logger": client_logger(), **config}


@functools.cache
def client_logger() -> logging.Logger:
    """The logger of every client but a task's transactional producer: warnings and errors on
    stderr (everything with ``YANGKEY_KAFKA_LOG=1``), but in a process of a run with a log
    file (``YANGKEY_RUN_LOG``, a local Spark worker) only there."""
    logger = logging.getLogger(CLIENT_LOGGER)
    logger.propagate = False
    logger.setLevel(logging.DEBUG if _show() else logging.INFO)
    run_log = os.environ.get(ENV_RUN_LOG)
    if _show() or not run_log:
        logger.addHandler(_Console(logging.DEBUG if _show() else logging.WARNING))
    if run_log:
        _add_file(logger, run_log)
    return logger


def _add_file(logger: logging.Logger, path: str) -> logging.Handler | None:
    for handler in logger.handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
            return None
    try:
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return None  # the lines are only the run's diagnostics: never fail over them
    handler.setFormatter(_FILE_FORMAT)
    logger.addHandler(handler)
    return handler


@contextmanager
def log_to_file(path: Path) -> Iterator[None]:
    """Within: every librdkafka line of this process also goes to ``path``, and the
    processes started meanwhile (Spark's local JVM and its Python workers) write theirs
    there only (``YANGKEY_RUN_LOG``)."""
    previous = os.environ.get(ENV_RUN_LOG)
    os.environ[ENV_RUN_LOG] = str(path)
    added = [
        (logger, handler)
        for logger in (client_logger(), transactional_logger())
        if (handler := _add_file(logger, str(path.resolve()))) is not None
    ]
    try:
        yield
    finally:
        for logger, handler in added:
            logger.removeHandler(handler)
            handler.close()
        if previous is None:
            os.environ.pop(ENV_RUN_LOG, None)
        else:
            os.environ[ENV_RUN_LOG] = previous


@contextmanager
def quiet_librdkafka(
    echo: Callable[[str], None] = _stderr,
    *,
    quiet: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[logging.Logger]:
    """:func:`client_logger` summarised (see the module doc), for the ``logger`` setting."""
    logger = client_logger()
    summary = Summary(echo, quiet=quiet, clock=clock)
    consoles = [] if _show() else [h for h in logger.handlers if isinstance(h, _Console)]
    for console in consoles:
        logger.removeHandler(console)
    if not _show():
        logger.addHandler(summary)
    try:
        yield logger
    finally:
        logger.removeHandler(summary)
        for console in consoles:
            logger.addHandler(console)
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
    them. In a worker of a run with a log file, every line goes there instead."""
    logger = logging.getLogger("yangkey.librdkafka.transactions")
    run_log = os.environ.get(ENV_RUN_LOG)
    if _show() or not run_log:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("kafka: %(message)s"))
        if not _show():
            handler.addFilter(_WithoutCoordinatorRetries())
        logger.addHandler(handler)
    if run_log:
        _add_file(logger, run_log)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger
