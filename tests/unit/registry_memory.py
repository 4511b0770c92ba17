"""An in-memory stand-in for the registry's store topic, shared by the registry's unit tests."""

from __future__ import annotations

from collections.abc import Callable

from yangkey.kafka.log import LogUnavailable, Replay


class MemoryLog:
    """A single-partition topic in a list: offsets, tombstones and compaction as Kafka does;
    :meth:`recreate` deletes and creates it again (a new topic id, offsets from 0)."""

    def __init__(self) -> None:
        self.records: list[tuple[int, bytes | None, bytes | None]] = []
        self.next_offset = 0
        self.topic_id = "topic-1"
        self.before_append: Callable[[], None] | None = None
        self.down = False

    def _reachable(self) -> None:
        if self.down:
            # as KafkaLog does: the registry maps it to its own error at its boundary
            raise LogUnavailable("the broker is down (MemoryLog.down)")

    def end_offset(self, timeout: float | None = None, *, store_end: int = 0) -> int:
        self._reachable()
        return self.next_offset

    def identity(self, timeout: float | None = None) -> str:
        self._reachable()
        return self.topic_id

    def read_to(self, store: Replay, high: int, *, timeout: float | None = None) -> None:
        self._reachable()
        for offset, key, value in self.records:
            if store.end <= offset < high:
                store.apply(offset, key, value)
        store.advance(high)

    def read(self, store: Replay) -> None:
        self.read_to(store, self.next_offset)

    def append(self, key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        self._reachable()
        hook, self.before_append = self.before_append, None
        if hook is not None:
            hook()  # another instance writes between our read and our append
        offset = self.next_offset
        self.records.append((offset, key, value))
        self.next_offset += 1
        return offset

    def reset(self, position: int = -2) -> None:
        pass

    def compact(self) -> None:
        """Keep the last record of each key, drop tombstones (past delete.retention.ms)."""
        last = {key: offset for offset, key, _ in self.records}
        self.records = [(o, k, v) for o, k, v in self.records if last[k] == o and v is not None]

    def recreate(self) -> None:
        self.records, self.next_offset = [], 0
        self.topic_id += "'"
