"""librdkafka's lines of a task's transactional producer: a still-loading coordinator's
retries left out, everything else kept (the real client is exercised in tests/integration)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from yangkey import kafkalogs


def _emit(logger: logging.Logger, message: str) -> str:
    stream = io.StringIO()
    # pytest's own capture handlers sit beside ours
    (handler,) = [h for h in logger.handlers if type(h) is logging.StreamHandler]
    previous = handler.setStream(stream)
    try:
        # confluent-kafka calls logger.log(level, "%s [%s] %s", facility, client, text)
        logger.log(logging.WARNING, "%s [%s] %s", "GETPID", "rdkafka#producer-1", message)
    finally:
        handler.setStream(previous)
    return stream.getvalue()


@pytest.fixture
def fresh_logger(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    logger = logging.getLogger("yangkey.librdkafka.transactions")
    monkeypatch.setattr(logger, "handlers", [])
    kafkalogs.transactional_logger.cache_clear()
    yield
    kafkalogs.transactional_logger.cache_clear()  # its handler leaves with this test's list


@pytest.mark.usefixtures("fresh_logger")
def test_coordinator_retries_are_left_out_and_other_lines_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(kafkalogs.ENV_SHOW, raising=False)
    logger = kafkalogs.transactional_logger()
    retry = (
        "[thrd:main]: Failed to acquire transactional PID from broker TxnCoordinator/1:"
        " Broker: Coordinator load in progress: retrying"
    )
    assert _emit(logger, retry) == ""
    assert _emit(logger, retry.replace("Coordinator load in progress", "Not coordinator")) == ""
    lost = "[thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: Disconnected (after 2001ms in state UP)"
    assert _emit(logger, lost) == f"kafka: GETPID [rdkafka#producer-1] {lost}\n"
    assert kafkalogs.transactional_logger() is logger


@pytest.mark.usefixtures("fresh_logger")
def test_yangkey_kafka_log_keeps_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kafkalogs.ENV_SHOW, "1")
    retry = "[thrd:main]: Broker: Coordinator load in progress: retrying"
    assert "Coordinator load in progress" in _emit(kafkalogs.transactional_logger(), retry)
