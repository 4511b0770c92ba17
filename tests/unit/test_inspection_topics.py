"""`yangkey kafka topics` against a stand-in admin client: what it counts, and the answers it
must not count."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest

from yangkey.errors import BrokerError
from yangkey.inspection import topics as topics_module


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


class _Admin:
    """One topic ``t`` of two partitions; partition 1's latest offset is ``high1``."""

    high1 = 7

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    def list_topics(self, timeout: float) -> Any:
        parts = {p: SimpleNamespace(replicas=[1, 2]) for p in (0, 1)}
        return SimpleNamespace(topics={"t": SimpleNamespace(error=None, partitions=parts)})

    def describe_configs(self, resources: list[Any]) -> dict[Any, Future[Any]]:
        policy = SimpleNamespace(value="compact")
        return {r: _done({"cleanup.policy": policy}) for r in resources}

    def list_offsets(self, request: dict[Any, Any]) -> dict[Any, Future[Any]]:
        latest = "latest" in repr(next(iter(request.values())))
        answers = {}
        for tp in request:
            offset = (self.high1 if tp.partition == 1 else 5) if latest else 2
            answers[tp] = _done(SimpleNamespace(offset=offset))
        return answers


@pytest.fixture()
def admin(monkeypatch: pytest.MonkeyPatch) -> type[_Admin]:
    import confluent_kafka.admin  # noqa: PLC0415

    class Admin(_Admin):
        pass

    class Spec:
        @staticmethod
        def earliest() -> str:
            return "earliest"

        @staticmethod
        def latest() -> str:
            return "latest"

    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", Admin)
    monkeypatch.setattr(confluent_kafka.admin, "OffsetSpec", Spec)
    return Admin


def test_messages_are_the_offsets_held_over_every_partition(admin: type[_Admin]) -> None:
    [info] = topics_module.list_topics("127.0.0.1:1")
    assert (info.name, info.partitions, info.replication) == ("t", 2, 2)
    assert info.cleanup_policy == "compact"
    assert info.messages == (5 - 2) + (7 - 2)


def test_an_invalid_offset_is_an_error_not_zero_messages(admin: type[_Admin]) -> None:
    # librdkafka's answer for a partition whose leader just died: offset -1001, no error.
    admin.high1 = -1001
    with pytest.raises(BrokerError) as caught:
        topics_module.list_topics("127.0.0.1:1")
    message = str(caught.value)
    assert "t partition 1" in message
    assert "-1001" in message
