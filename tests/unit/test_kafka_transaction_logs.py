"""librdkafka's lines of a task's transactional producer: a still-loading coordinator's
retries left out, everything else kept (the real client is exercised in tests/integration)."""

from __future__ import annotations

import ast
import io
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from yangkey.kafka import logs as kafkalogs


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


# --------------------------------------------------------------------------- every client

PACKAGE = Path(kafkalogs.__file__).parents[1]
CLIENTS = {"Producer", "Consumer", "AdminClient"}


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def test_every_client_yangkey_builds_takes_its_logger() -> None:
    """librdkafka prints on stderr itself unless a client has the ``logger`` setting: every
    Producer, Consumer and AdminClient is built from ``logged(config)``."""
    built: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _name(node.func) in CLIENTS:
                where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                argument = node.args[0] if node.args else None
                assert (
                    isinstance(argument, ast.Call) and _name(argument.func) == "logged"
                ), f"{where}: {_name(node.func)}(...) without logged(...)"
                built.append(where)
    assert len(built) >= 12, built  # the scan sees them (sink, markers, sources, registry...)


@pytest.fixture
def fresh_loggers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (kafkalogs.CLIENT_LOGGER, "yangkey.librdkafka.transactions"):
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
    kafkalogs.client_logger.cache_clear()
    kafkalogs.transactional_logger.cache_clear()
    monkeypatch.delenv(kafkalogs.ENV_SHOW, raising=False)
    monkeypatch.delenv(kafkalogs.ENV_RUN_LOG, raising=False)
    yield
    kafkalogs.client_logger.cache_clear()
    kafkalogs.transactional_logger.cache_clear()


REFUSED = "[thrd:127.0.0.1:9/1]: 127.0.0.1:9/1: Connect to ipv4#127.0.0.1:9 failed: refused"


@pytest.mark.usefixtures("fresh_loggers")
def test_a_runs_lines_go_to_its_log_and_its_workers_only_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.log"
    assert kafkalogs.logged({"a": 1}) == {"logger": kafkalogs.client_logger(), "a": 1}
    driver = kafkalogs.client_logger()
    driver.error("%s [%s] %s", "FAIL", "rdkafka#consumer-1", "before the run")
    assert capsys.readouterr().err == "kafka: FAIL [rdkafka#consumer-1] before the run\n"
    with kafkalogs.log_to_file(log):
        assert os.environ[kafkalogs.ENV_RUN_LOG] == str(log)
        driver.error("%s [%s] %s", "FAIL", "rdkafka#consumer-1", REFUSED)
        # a Spark worker this run started: a process with the variable, fresh loggers
        kafkalogs.client_logger.cache_clear()
        kafkalogs.transactional_logger.cache_clear()
        for name in (kafkalogs.CLIENT_LOGGER, "yangkey.librdkafka.transactions"):
            logging.getLogger(name).handlers = []
        worker = kafkalogs.client_logger()
        worker.error("%s [%s] %s", "FAIL", "rdkafka#consumer-2", REFUSED)
        task = kafkalogs.transactional_logger()
        task.warning("%s [%s] %s", "GETPID", "rdkafka#producer-3", "Coordinator load in progress")
    assert kafkalogs.ENV_RUN_LOG not in os.environ
    err = capsys.readouterr().err
    assert err == f"kafka: FAIL [rdkafka#consumer-1] {REFUSED}\n", "the worker's: not on stderr"
    written = log.read_text(encoding="utf-8")
    assert "rdkafka#consumer-1" in written and "rdkafka#consumer-2" in written
    assert "Coordinator load in progress" in written
