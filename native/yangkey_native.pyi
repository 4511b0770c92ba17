"""Type stub of yangkey_native (the compiled decoder; yangkey/native.py is its adapter)."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

CONTRACT: int
__version__: str

class Decoder:
    def __init__(self, model: dict[str, Any]) -> None: ...
    def decode(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        wanted: Callable[[Any], Any] | None = None,
    ) -> Any | None:
        """The reference's Notification, its error raised, or None: the reference decodes."""
    @property
    def documents(self) -> int: ...
    @property
    def full_parses(self) -> int: ...
    def check(self, raw: bytes) -> bool:
        """The JSON parse alone (no Python object built): True when well formed, no duplicate."""
    def loads(self, raw: bytes) -> Any | None:
        """The JSON tree orjson.loads builds (duplicate members refused), or None."""
    def keys(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Callable[..., tuple[Walker, str, Any] | None],
        with_xpaths: bool = False,
        routes: Routes | dict[tuple[int, str | None], tuple[Walker, str, Any]] | None = None,
        with_instances: bool = False,
        learning: bool = False,
    ) -> tuple[Any, ...] | None:
        """(extra, subscription id, sequence number, event time, key, branch keys, xpaths) of a
        JSON push-update (with_instances: and per branch its instance feed header), or None:
        the reference derives it (yangkey/native.py)."""
    def keys_xml(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Callable[[int, str | None], tuple[Walker, str, Any] | None],
        with_xpaths: bool = False,
        routes: Routes | dict[tuple[int, str | None], tuple[Walker, str, Any]] | None = None,
        with_instances: bool = False,
    ) -> tuple[Any, ...] | None:
        """``keys`` of an XML push-update (contract 5; with_instances, contract 6: and per
        branch its instance feed header), or None: the reference derives it."""
    def instances(
        self,
        raw: bytes,
        source: str,
        walker: Walker,
        ns_modules: Mapping[str, str] | None = None,
    ) -> tuple[bytes | None, ...] | None:
        """Per branch the instance feed header of a JSON push-update or yang-patch (with
        ns_modules, contract 6: an XML one's too), or None: the reference."""

class Walker:
    def __init__(self, branches: list[Any], feeds: list[Any] | None = None) -> None:
        """A compiled subscription's walkers, from yangkey.native.tables' plain data; feeds:
        per branch yangkey.native.feed_table's."""

class Routes:
    """The route's answers by (subscription id, node), read by Decoder.keys without Python."""
    def __init__(self) -> None: ...
    def __setitem__(
        self, asked: tuple[int, str | None], answer: tuple[Walker, str, Any]
    ) -> None: ...
    def __len__(self) -> int: ...
    def clear(self) -> None: ...

class RdKafkaError(Exception):
    """A librdkafka error (contract 6): args ``(code, name, string, retriable, fatal,
    txn_requires_abort)``; ``RdProducer.produce`` adds the index of the refused message."""

def rdkafka_version(path: str) -> tuple[int, str]:
    """``(rd_kafka_version(), rd_kafka_version_str())`` of the librdkafka at ``path``
    (contract 6); OSError when it cannot be opened or lacks a function RdProducer calls."""

class RdProducer:
    """A librdkafka producer over the library at ``path`` (contract 6): the Spark sink's
    (yangkey/spark/delivery/native_producer.py). Raises RdKafkaError."""
    def __init__(self, path: str, config: list[tuple[str, str]]) -> None: ...
    def produce(
        self,
        messages: Sequence[tuple[str, bytes | None, bytes | None, tuple[tuple[str, bytes], ...]]],
        headers_for: Callable[[str], Iterable[tuple[str, bytes]]],
    ) -> int:
        """Produce every ``(topic, key, value, headers)``, each topic's ``headers_for(topic)``
        added; how many (fewer: a delivery failed while the queue was full)."""
    def poll(self, timeout: float) -> int: ...
    def flush(self, timeout: float) -> int:
        """The messages still queued or in flight after waiting up to ``timeout`` seconds."""
    def delivery_failure(self) -> tuple[int, str, str] | None:
        """``(failed, first failed topic, librdkafka's words)``, or None."""
    def drain_logs(self) -> list[tuple[int, str, str, str]]:
        """librdkafka's log lines since the last call: (syslog level, facility, client, text)."""
    def init_transactions(self, timeout: float) -> None: ...
    def begin_transaction(self) -> None: ...
    def send_offsets_to_transaction(
        self,
        topic: str,
        partition: int,
        offset: int,
        metadata: str | None,
        group_id: str,
        timeout: float,
    ) -> None: ...
    def commit_transaction(self, timeout: float) -> None: ...
    def abort_transaction(self, timeout: float) -> None: ...
    def purge(self) -> None: ...
    def close(self) -> None: ...
