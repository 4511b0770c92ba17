"""The Spark sink's native producer: ``yangkey_native.RdProducer`` over the process's librdkafka.

confluent-kafka's ``Producer.produce`` is one Python call per message, its headers converted
one by one; the job's sink spent as much CPU there as the whole plain produce loop (issue 33).
``yangkey_native.RdProducer`` sends a chunk of messages through librdkafka's C API in one
call. It links no librdkafka of its own: it opens the one confluent-kafka already loaded
(:func:`librdkafka_path`: the wheel's ``confluent_kafka.libs/librdkafka-*.so.1``, or the
system library a source build links), and runs only when that library's version is
confluent-kafka's (:func:`load`). Anything missing or different (no native module, an older
contract, another librdkafka, a Python-only client setting) leaves the sink on
confluent-kafka's ``Producer``, and one debug line says why; ``YANGKEY_NATIVE=0`` forces it.

:class:`NativeProducer` speaks the part of confluent-kafka's ``Producer`` the sink calls and
raises the same ``KafkaException`` (its ``KafkaError`` carrying librdkafka's code, words and
flags), so :class:`~yangkey.spark.delivery.sink.KafkaSink` words every error as it did.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException

from yangkey import native
from yangkey.messages import Headers

log = logging.getLogger(__name__)

ENV_SINK = "YANGKEY_NATIVE_SINK"
"""``0``: the Spark sink uses confluent-kafka's producer (the native decoder stays)."""

PYTHON_ONLY = frozenset({"logger", "on_delivery"})
"""confluent-kafka settings the native producer serves itself (log lines, delivery reports)."""
UNSUPPORTED = frozenset(
    {"error_cb", "throttle_cb", "stats_cb", "oauth_cb", "on_commit", "default.topic.config"}
)
"""confluent-kafka settings that call Python or nest a dict: the native producer has no
equivalent, so a config with one stays on confluent-kafka."""

_LEVELS = (50, 50, 50, 40, 30, 20, 20, 10)
"""syslog level -> logging level, as confluent-kafka maps librdkafka's lines."""


class Unavailable(Exception):
    """Why the native producer cannot serve this config (the sink uses confluent-kafka)."""


def librdkafka_path(maps: Path = Path("/proc/self/maps")) -> str | None:
    """The file of the librdkafka this process loaded (through confluent-kafka), or None."""
    try:
        lines = maps.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if Path(path).name.startswith("librdkafka") and ".so" in path:
            return path
    # No /proc (not Linux): the wheel's copy, next to the package.
    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*")) if libs.is_dir() else []
    return str(found[0]) if found else None


def librdkafka_config(config: Mapping[str, object]) -> list[tuple[str, str]]:
    """``config`` as librdkafka's string settings, as confluent-kafka converts them (booleans
    ``true``/``false``, numbers in decimal); the Python-only settings the native producer
    serves itself are left out. Raises :class:`Unavailable` for a setting it cannot pass."""
    settings: list[tuple[str, str]] = []
    for key, value in config.items():
        if key in PYTHON_ONLY:
            continue
        if key in UNSUPPORTED or callable(value):
            raise Unavailable(f"client setting {key} calls Python (confluent-kafka only)")
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            raise Unavailable(
                f"client setting {key} is a {type(value).__name__}, not a string or a number"
            )
        settings.append((key, text))
    return settings


def wanted() -> bool:
    """Whether this run asks for the native producer (read on the driver, shipped to the
    tasks in :attr:`~yangkey.spark.delivery.spec.SinkSpec.native`): not under
    ``YANGKEY_NATIVE=0`` or ``YANGKEY_NATIVE_SINK=0``."""
    return all(os.environ.get(name, "").strip() != "0" for name in (native.ENV_NATIVE, ENV_SINK))


@cache
def load() -> tuple[Any, str]:
    """``(yangkey_native, librdkafka path)`` when the native producer can run, else
    ``(None, why)``; logged once at debug level."""
    module, detail = _load()
    if module is None:
        log.debug("yangkey Spark sink: confluent-kafka (%s)", detail)
    else:
        log.debug("yangkey Spark sink: native (librdkafka %s)", detail)
    return module, detail


def _load() -> tuple[Any, str]:
    if os.environ.get(native.ENV_NATIVE, "").strip() == "0":
        return None, f"{native.ENV_NATIVE}=0"
    try:
        import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None, "yangkey-native not installed"
    if getattr(yangkey_native, "CONTRACT", None) != native.CONTRACT or not hasattr(
        yangkey_native, "RdProducer"
    ):
        return None, "yangkey-native has no RdProducer of this contract: rebuild it"
    path = librdkafka_path()
    if path is None:
        return None, "confluent-kafka's librdkafka not found"
    return check_library(yangkey_native, path)


def check_library(module: Any, path: str) -> tuple[Any, str]:
    """``(module, path)`` when ``path`` is the librdkafka confluent-kafka runs (same
    ``rd_kafka_version()``), else ``(None, why)``."""
    try:
        version, words = module.rdkafka_version(path)
    except OSError as exc:
        return None, str(exc)
    expected = confluent_kafka.libversion()[1]
    if version != expected:
        return None, (
            f"{path} is librdkafka {words} ({version:#x}), confluent-kafka runs"
            f" {confluent_kafka.libversion()[0]} ({expected:#x})"
        )
    return module, path


class ProduceFailed(Exception):
    """librdkafka refused a message of a chunk (``error``: the ``KafkaException``)."""

    def __init__(self, topic: str, error: KafkaException) -> None:
        super().__init__(topic, error)
        self.topic = topic
        self.error = error


def _kafka_exception(exc: BaseException) -> KafkaException:
    code, _name, words, retriable, fatal, txn_requires_abort = exc.args[:6]
    return KafkaException(
        KafkaError(
            code,
            words,
            fatal=fatal,
            retriable=retriable,
            txn_requires_abort=txn_requires_abort,
        )
    )


class NativeProducer:
    """confluent-kafka's ``Producer`` as the sink uses it, over ``yangkey_native.RdProducer``.

    Build it with :meth:`open`; its errors are confluent-kafka's ``KafkaException``."""

    def __init__(self, module: Any, path: str, config: Mapping[str, object]) -> None:
        settings = librdkafka_config(config)
        logger = config.get("logger")
        self.logger = logger if isinstance(logger, logging.Logger) else None
        self._error_type: type[BaseException] = module.RdKafkaError
        self.module = module
        """``yangkey_native`` (its ``Outbox``: :mod:`~yangkey.spark.delivery.direct`)."""
        with self._calling():
            self._producer = module.RdProducer(path, settings)

    @classmethod
    def open(cls, config: Mapping[str, object]) -> tuple[NativeProducer | None, str]:
        """A native producer of ``config``, or None and why not."""
        module, detail = load()
        if module is None:
            return None, detail
        try:
            return cls(module, detail, config), "native"
        except Unavailable as exc:
            log.debug("yangkey Spark sink: confluent-kafka (%s)", exc)
            return None, str(exc)

    @contextmanager
    def _calling(self) -> Iterator[None]:
        try:
            yield
        except self._error_type as exc:
            raise _kafka_exception(exc) from None
        finally:
            self._forward_logs()

    def _forward_logs(self) -> None:
        producer = getattr(self, "_producer", None)
        if producer is None:
            return
        lines = producer.drain_logs()
        if self.logger is None:
            return
        for level, facility, name, text in lines:
            self.logger.log(_LEVELS[min(max(level, 0), 7)], "%s [%s] %s", facility, name, text)

    # -- what the sink calls ---------------------------------------------------------------

    def produce_chunk(
        self,
        messages: Sequence[tuple[str, bytes | None, bytes, Headers]],
        headers_for: Callable[[str], Headers],
    ) -> int:
        """Produce ``messages`` in one call; ``headers_for(topic)`` is added to each of a
        topic's. Returns how many: fewer when a delivery failed while the queue was full."""
        try:
            return int(self._producer.produce(messages, headers_for))
        except self._error_type as exc:
            index = exc.args[6] if len(exc.args) > 6 else 0
            raise ProduceFailed(messages[index][0], _kafka_exception(exc)) from None
        finally:
            self._forward_logs()

    def produce_outbox(self, outbox: Any, headers_for: Callable[[str], Headers]) -> int:
        """Produce what a ``yangkey_native.Outbox`` holds, in order, in one call, the outbox
        emptied (:mod:`~yangkey.spark.delivery.direct`); returns how many as
        :meth:`produce_chunk` does."""
        try:
            return int(self._producer.produce_outbox(outbox, headers_for))
        except self._error_type as exc:
            raise ProduceFailed(outbox.failed_topic or "?", _kafka_exception(exc)) from None
        finally:
            self._forward_logs()

    def delivery_failure(self) -> tuple[int, str, str] | None:
        """``(failed, first topic, librdkafka's words)``, or None while none failed."""
        failure: tuple[int, str, str] | None = self._producer.delivery_failure()
        return failure

    def poll(self, timeout: float = -1) -> int:
        with self._calling():
            return int(self._producer.poll(timeout))

    def flush(self, timeout: float = -1) -> int:
        with self._calling():
            return int(self._producer.flush(timeout))

    def init_transactions(self, timeout: float = -1) -> None:
        with self._calling():
            self._producer.init_transactions(timeout)

    def begin_transaction(self) -> None:
        with self._calling():
            self._producer.begin_transaction()

    def send_offsets_to_transaction(
        self, marker: confluent_kafka.TopicPartition, group_id: str, timeout: float = -1
    ) -> None:
        with self._calling():
            self._producer.send_offsets_to_transaction(
                marker.topic,
                marker.partition,
                marker.offset,
                marker.metadata,
                group_id,
                timeout,
            )

    def commit_transaction(self, timeout: float = -1) -> None:
        with self._calling():
            self._producer.commit_transaction(timeout)

    def abort_transaction(self, timeout: float = -1) -> None:
        with self._calling():
            self._producer.abort_transaction(timeout)

    def purge(self) -> None:
        with self._calling():
            self._producer.purge()

    def close(self) -> None:
        with self._calling():
            self._producer.close()
