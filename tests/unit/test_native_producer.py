"""The Spark sink's native producer (yangkey/spark/delivery/native_producer.py and
native/src/sink.rs) without a broker: the config it passes or refuses, the library look-up
and version check that decide between it and confluent-kafka, the errors it raises (the
``KafkaException`` confluent-kafka raises, word for word), delivery failures and log lines.
The broker tests are tests/integration/test_native_sink_broker.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, libversion

from yangkey.spark.delivery import native_producer
from yangkey.spark.delivery.native_producer import (
    NativeProducer,
    ProduceFailed,
    Unavailable,
    check_library,
    librdkafka_config,
    librdkafka_path,
)

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

NOWHERE = "127.0.0.1:1"  # nothing listens there: deliveries time out


@pytest.fixture(autouse=True)
def _native_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """These tests are about the native producer: not switched off by the environment."""
    monkeypatch.delenv("YANGKEY_NATIVE", raising=False)
    monkeypatch.delenv("YANGKEY_NATIVE_SINK", raising=False)
    native_producer.load.cache_clear()
    yield
    native_producer.load.cache_clear()


def test_config_strings_as_confluent_kafka_converts_them() -> None:
    def on_delivery(*_: Any) -> None: ...

    settings = librdkafka_config(
        {
            "bootstrap.servers": "b:9092",
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "batch.num.messages": 10_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "compression.type": "lz4",
            "delivery.report.only.error": False,
            "socket.timeout.ms": 60_000.0,
            "logger": logging.getLogger("x"),
            "on_delivery": on_delivery,
        }
    )
    assert settings == [
        ("bootstrap.servers", "b:9092"),
        ("enable.idempotence", "true"),
        ("acks", "all"),
        ("linger.ms", "5"),
        ("batch.num.messages", "10000"),
        ("queue.buffering.max.kbytes", "1048576"),
        ("compression.type", "lz4"),
        ("delivery.report.only.error", "false"),
        ("socket.timeout.ms", "60000.0"),
    ]


@pytest.mark.parametrize(
    ("setting", "value", "words"),
    [
        ("error_cb", print, "client setting error_cb calls Python"),
        ("stats_cb", print, "client setting stats_cb calls Python"),
        ("oauth_cb", print, "client setting oauth_cb calls Python"),
        ("my.callback", print, "client setting my.callback calls Python"),
        ("default.topic.config", {"acks": "all"}, "default.topic.config calls Python"),
        ("ssl.keystore", [1], "client setting ssl.keystore is a list"),
        ("sasl.password", None, "client setting sasl.password is a NoneType"),
    ],
)
def test_config_python_only_settings_refused(setting: str, value: object, words: str) -> None:
    with pytest.raises(Unavailable, match=words):
        librdkafka_config({"bootstrap.servers": "b", setting: value})
    # ... and the sink then stays on confluent-kafka, saying why
    producer, why = NativeProducer.open({"bootstrap.servers": "b", setting: value})
    assert producer is None
    assert words in why


def test_config_refused_by_librdkafka_raises_confluent_kafkas_error() -> None:
    with pytest.raises(KafkaException) as native:
        NativeProducer.open({"bootstrap.servers": "b", "no.such.setting": "1"})
    with pytest.raises(KafkaException) as reference:
        Producer({"bootstrap.servers": "b", "no.such.setting": "1"})
    assert native.value.args[0].code() == KafkaError._INVALID_ARG
    assert native.value.args[0].str() == reference.value.args[0].str()
    with pytest.raises(KafkaException) as native:
        NativeProducer.open({"bootstrap.servers": "b", "acks": "several"})
    assert "acks" in native.value.args[0].str()


def test_library_found_is_confluent_kafkas() -> None:
    path = librdkafka_path()
    assert path is not None
    assert Path(path).name.startswith("librdkafka")
    version, words = yangkey_native.rdkafka_version(path)
    assert version == libversion()[1]
    assert words == libversion()[0]
    assert check_library(yangkey_native, path) == (yangkey_native, path)


def test_library_path_from_maps(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text(
        "7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n"
        "7f02-7f03 r-xp 00000000 08:01 2 /opt/x/confluent_kafka.libs/librdkafka-ab12.so.1\n"
        "7f04-7f05 rw-p 00000000 00:00 0\n",
        encoding="utf-8",
    )
    assert librdkafka_path(maps) == "/opt/x/confluent_kafka.libs/librdkafka-ab12.so.1"


def test_wrong_library_falls_back_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "librdkafka.so.1"
    module, why = check_library(yangkey_native, str(missing))
    assert module is None
    assert str(missing) in why
    not_kafka = tmp_path / "libnot.so"
    not_kafka.write_bytes(b"\x7fELF not really")
    module, why = check_library(yangkey_native, str(not_kafka))
    assert module is None
    assert str(not_kafka) in why


def test_other_version_falls_back_with_the_reason() -> None:
    class Other:
        @staticmethod
        def rdkafka_version(path: str) -> tuple[int, str]:
            return 0x010900FF, "1.9.0"

    module, why = check_library(Other, "/lib/librdkafka.so.1")
    assert module is None
    assert "librdkafka 1.9.0 (0x10900ff)" in why
    assert f"confluent-kafka runs {libversion()[0]}" in why


@pytest.mark.parametrize("variable", ["YANGKEY_NATIVE", "YANGKEY_NATIVE_SINK"])
def test_switched_off(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    assert native_producer.wanted()
    monkeypatch.setenv(variable, "0")
    assert not native_producer.wanted()
    if variable == "YANGKEY_NATIVE":
        assert native_producer._load() == (None, "YANGKEY_NATIVE=0")


def test_error_mapped_to_confluent_kafkas() -> None:
    raised = yangkey_native.RdKafkaError(-185, "_TIMED_OUT", "Timed out", True, False, True)
    mapped = native_producer._kafka_exception(raised)
    error = mapped.args[0]
    assert isinstance(mapped, KafkaException)
    assert (error.code(), error.name(), error.str()) == (-185, "_TIMED_OUT", "Timed out")
    assert error.retriable() and not error.fatal() and error.txn_requires_abort()


def _unreachable(**extra: object) -> NativeProducer:
    producer, why = NativeProducer.open(
        {"bootstrap.servers": NOWHERE, "message.timeout.ms": 300, **extra}
    )
    assert producer is not None, why
    return producer


def test_delivery_failure_as_confluent_kafka_reports_it() -> None:
    producer = _unreachable()
    try:
        sent = producer.produce_chunk(
            [("t1", b"k", b"v", (("h", b"1"),)), ("t2", None, b"w", ())],
            lambda topic: (),
        )
        assert sent == 2
        assert producer.flush(10) == 0
        failure = producer.delivery_failure()
    finally:
        producer.close()
    errors: list[KafkaError] = []
    reference = Producer(
        {
            "bootstrap.servers": NOWHERE,
            "message.timeout.ms": 300,
            "on_delivery": lambda error, _message: errors.append(error),
        }
    )
    reference.produce("t1", b"v", b"k")
    reference.flush(10)
    assert failure is not None
    assert failure[:2] == (2, "t1")
    assert failure[2] == errors[0].str() == "Local: Message timed out"


def test_refused_message_names_its_topic() -> None:
    producer = _unreachable(**{"message.max.bytes": 1000})
    try:
        with pytest.raises(ProduceFailed) as failed:
            producer.produce_chunk(
                [("small", None, b"v", ()), ("big", None, b"x" * 5000, ())], lambda topic: ()
            )
        with pytest.raises(KafkaException) as reference:
            Producer({"bootstrap.servers": NOWHERE, "message.max.bytes": 1000}).produce(
                "big", b"x" * 5000
            )
    finally:
        producer.purge()
        producer.close()
    assert failed.value.topic == "big"
    assert failed.value.error.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert failed.value.error.args[0].str() == reference.value.args[0].str()


def test_log_lines_reach_the_logger_as_confluent_kafkas_do() -> None:
    lines: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record)

    logger = logging.getLogger("yangkey.test.native_producer")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Keep())
    producer = _unreachable(logger=logger, debug="generic")
    try:
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            producer.poll(0.1)
    finally:
        producer.close()
    assert lines
    record = lines[0]
    assert record.levelno == logging.DEBUG  # librdkafka's level 7
    facility, name = record.args[:2]  # type: ignore[index]
    assert record.msg == "%s [%s] %s"
    assert str(name).startswith("rdkafka#producer-")
    assert str(facility).isupper()


def test_headers_of_a_topic_asked_once() -> None:
    asked: list[str] = []

    def headers_for(topic: str) -> tuple[tuple[str, bytes], ...]:
        asked.append(topic)
        return (("schema-id", b"7"),)

    producer = _unreachable()
    try:
        chunk = [("a", b"k", b"v", ()), ("b", b"k", b"v", ()), ("a", b"k", b"v", ())]
        assert producer.produce_chunk(chunk, headers_for) == 3
        assert producer.produce_chunk(chunk, headers_for) == 3
        with pytest.raises(TypeError):
            producer.produce_chunk([("a", 5, b"v", ())], headers_for)
    finally:
        producer.purge()
        producer.close()
    assert asked == ["a", "b"]


def test_run_summary_says_which_producer_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    from yangkey.spark.report import produced_natively  # noqa: PLC0415
    from yangkey.spark.transform import Tally  # noqa: PLC0415

    tally = Tally(records=5, native_sink=5)
    assert Tally.from_json(tally.to_json()).native_sink == 5
    assert Tally().merge(tally).merge(Tally(records=3)).native_sink == 5
    assert produced_natively(5, 8) == (
        "sink: 5 of 8 records produced by the native producer (yangkey-native)"
    )
    # the driver has the native producer, no executor used it: said, so it is seen
    assert "every record by confluent-kafka's producer" in produced_natively(0, 8)
    monkeypatch.setenv("YANGKEY_NATIVE_SINK", "0")
    assert produced_natively(0, 8) == ""
