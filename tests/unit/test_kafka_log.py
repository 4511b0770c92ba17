"""The compacted log's end-offset question (yangkey.kafka.log.KafkaLog.end_offset) when the
broker asked does not answer: no broker here, the admin clients are stand-ins."""

from __future__ import annotations

import socket
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from yangkey.errors import ConfigError
from yangkey.kafka import log as kafka_log
from yangkey.kafka.log import KafkaLog, LogUnavailable


class Offset:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class Admin:
    """An admin client whose offset requests fail with ``error`` (or answer ``offset``)."""

    def __init__(self, *, error: int | None = None, offset: int = 0) -> None:
        self.error = error
        self.offset = offset
        self.asked = 0

    def list_offsets(self, request: dict[TopicPartition, Any], **_: Any) -> dict[Any, Future[Any]]:
        self.asked += 1
        future: Future[Any] = Future()
        if self.error is None:
            future.set_result(Offset(self.offset))
        else:
            future.set_exception(KafkaException(KafkaError(self.error)))
        return {partition: future for partition in request}


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def log() -> Any:
    found = KafkaLog(closed_port(), "_schemas", timeout=3.0)
    yield found
    found.close()


def test_a_request_librdkafka_timed_out_is_asked_again_of_a_new_client(
    log: KafkaLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The leader died with the request in flight: the old client's metadata still names it.
    stuck = Admin(error=KafkaError._TIMED_OUT)
    log.admin = stuck  # type: ignore[assignment]
    fresh = Admin(offset=7)
    monkeypatch.setattr(kafka_log, "AdminClient", lambda config: fresh)
    assert log.end_offset() == 7
    assert stuck.asked == 1 and fresh.asked == 1


def test_an_invalid_offset_answer_is_asked_again_of_a_new_client(
    log: KafkaLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # librdkafka's answer, with no error, to a request whose leader was killed: the same
    # client gives it again and again (test_cluster reproduces it on a real cluster).
    stuck = Admin(offset=-1001)
    log.admin = stuck  # type: ignore[assignment]
    fresh = Admin(offset=7)
    monkeypatch.setattr(kafka_log, "AdminClient", lambda config: fresh)
    assert log.end_offset() == 7
    assert stuck.asked == 1 and fresh.asked == 1


class Moving:
    """An admin client answering ``error`` once, then the offset: a leader change."""

    def __init__(self, error: int) -> None:
        self.answers = [Admin(error=error), Admin(offset=7)]

    def list_offsets(self, request: dict[TopicPartition, Any], **_: Any) -> dict[Any, Any]:
        admin = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return admin.list_offsets(request)


@pytest.mark.parametrize(
    "error",
    [
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.OFFSET_NOT_AVAILABLE,
    ],
)
def test_a_leader_change_answer_is_asked_again(log: KafkaLog, error: int) -> None:
    # test_cluster saw "Leader epoch is newer than broker epoch" right after a leader's death.
    moving = Moving(error)
    log.admin = moving  # type: ignore[assignment]
    assert log.end_offset() == 7
    assert len(moving.answers) == 1


def test_a_transient_error_other_than_a_timeout_keeps_the_client(
    log: KafkaLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    moving = Admin(error=KafkaError.NOT_LEADER_FOR_PARTITION)
    log.admin = moving  # type: ignore[assignment]
    made: list[Admin] = []
    monkeypatch.setattr(kafka_log, "AdminClient", lambda config: made.append(Admin()) or made[-1])
    with pytest.raises(LogUnavailable, match="cannot read the end of _schemas"):
        log.end_offset(timeout=1.0)
    assert moving.asked > 1 and not made


class Entry:
    def __init__(self, value: str) -> None:
        self.value = value


class Configs:
    """An admin client whose first ``unknown`` config requests answer "unknown topic", as a
    broker does that has not heard of a topic created a moment ago on another."""

    def __init__(self, unknown: int) -> None:
        self.unknown = unknown
        self.asked = 0

    def describe_configs(self, resources: list[Any], **_: Any) -> dict[Any, Future[Any]]:
        self.asked += 1
        future: Future[Any] = Future()
        if self.asked <= self.unknown:
            future.set_exception(KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)))
        else:
            future.set_result({"cleanup.policy": Entry("compact")})
        return {resource: future for resource in resources}


def test_a_topics_configuration_is_asked_again_while_the_broker_does_not_know_it() -> None:
    admin = Configs(unknown=2)
    assert kafka_log.topic_configs(admin, "_catalog", 5.0) == {  # type: ignore[arg-type]
        "cleanup.policy": "compact"
    }
    assert admin.asked == 3


def test_a_topic_unknown_for_the_whole_wait_is_one_error_naming_it() -> None:
    admin = Configs(unknown=1_000)
    with pytest.raises(ConfigError, match="cannot read its configuration") as caught:
        kafka_log.topic_configs(admin, "_catalog", 0.5)  # type: ignore[arg-type]
    assert caught.value.source == "topic _catalog" and admin.asked > 1
