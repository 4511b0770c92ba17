"""The in-memory replica of the store topic: follows the log, writes to it optimistically, and
never trusts (or writes from) a memory the topic no longer backs (issue 31, items 4 and 7).

Writes (seed 003): read the log to its end, decide from memory, append a record whose ``seq``
is the end offset seen, and compare the offset it landed at. Equal: it won; the writer applies
its own record at once. Different: another writer got there first; read again and decide
again. Writes of one instance are serialised, so no rollback is ever needed.

A changed store is noticed three ways: the end offset is below what this instance has read
(the topic was truncated or recreated), the topic's id is not the one read so far (checked
before every write, whenever new records appear, and by the watchdog every second), or records
that are not this registry's appear. The first two make the instance drop its memory and
replay the topic, as a fresh instance would, so all instances agree with the topic again; the
third refuses writes until an operator moves the registry to another topic.

When the store cannot be reached, reads are answered from memory (after one bounded attempt
to read the log) and writes fail at once with 503/50003; the log rebuilds its Kafka clients,
and the first successful read clears the state. Once the store is known away, requests never
wait for it: the watch alone tries it again (every second), else one request every
:data:`RETRY_AFTER` seconds, and the others answer meanwhile (a 3-broker cluster showed reads
held 3-10 s behind the watch's attempt, then their own, each time the retry window ran out).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from yangkey.kafka.log import LogUnavailable, RecordTooLarge, Replay
from yangkey.registry.errors import (
    RegistryError,
    StoreChanged,
    store_error,
    store_timeout,
    store_unavailable,
)
from yangkey.registry.store import RecordKey, Store

log = logging.getLogger("yangkey.registry")

RETRY_AFTER = 2.0
"""Seconds a failed store access is remembered when no watch runs: meanwhile reads use memory
without waiting and writes are refused at once (with the watch: until it reaches the store)."""
UNAVAILABLE = (50002, 50003)


class Log(Protocol):
    """The single-partition topic, as the registry needs it."""

    def end_offset(self, timeout: float | None = None, *, store_end: int = 0) -> int:
        """The offset the next record will get."""

    def identity(self, timeout: float | None = None) -> str:
        """The topic's id: another one means the topic was created again."""

    def read_to(self, store: Replay, high: int, *, timeout: float | None = None) -> None:
        """Apply to ``store`` every record from ``store.end`` up to ``high``."""

    def append(self, key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        """Write one record and return the offset it landed at."""

    def reset(self, position: int = ...) -> None:
        """Start again with new clients (the default position: the topic's beginning)."""


@contextmanager
def _store_errors() -> Iterator[None]:
    """The log's errors (:mod:`yangkey.kafka.log`) as the registry's, with Confluent's codes:
    the store away is 503/50003 (writes refused, reads from memory), a read that did not
    finish in time 500/50002, a record over the topic's limit 422/42209."""
    try:
        yield
    except RecordTooLarge:
        raise RegistryError(
            422, 42209, "Write failed because schema is too large for the store topic"
        ) from None
    except LogUnavailable as exc:
        raise (store_timeout if exc.timed_out else store_unavailable)(exc.reason) from None


class _StoreLog:
    """A :class:`Log` whose errors are the registry's (:func:`_store_errors`)."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.timeout: float = getattr(log, "timeout", 15.0)

    def end_offset(self, timeout: float | None = None, *, store_end: int = 0) -> int:
        with _store_errors():
            return self.log.end_offset(timeout, store_end=store_end)

    def identity(self, timeout: float | None = None) -> str:
        with _store_errors():
            return self.log.identity(timeout)

    def read_to(self, store: Replay, high: int, *, timeout: float | None = None) -> None:
        with _store_errors():
            self.log.read_to(store, high, timeout=timeout)

    def append(self, key: bytes, value: bytes | None, *, store_end: int = 0) -> int:
        with _store_errors():
            return self.log.append(key, value, store_end=store_end)

    def reset(self) -> None:
        with _store_errors():
            self.log.reset()


class _Locked:
    """The replica's store as :meth:`Log.read_to` feeds it: each record applied under the
    memory lock, so readers never see a half-applied record, and never wait for Kafka."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica

    @property
    def end(self) -> int:
        return self.replica.store.end

    @end.setter
    def end(self, end: int) -> None:
        self.advance(end)

    def apply(self, offset: int, raw_key: bytes | None, raw_value: bytes | None) -> None:
        with self.replica.lock:
            self.replica.store.apply(offset, raw_key, raw_value)

    def advance(self, end: int) -> None:
        with self.replica.lock:
            self.replica.store.advance(end)


class Replica:
    def __init__(
        self, log: Log, node: str, *, max_attempts: int = 100, read_timeout: float = 5.0
    ) -> None:
        self.log = _StoreLog(log)
        # Unique by construction (item 6): two instances given one --node-id still write
        # different keys, so compaction never keeps one's record in place of the other's.
        self.node = f"{node}-{secrets.token_hex(4)}"
        self.max_attempts = max_attempts
        self.read_timeout = read_timeout
        self.store = Store()
        self.conflicts = 0
        """Writes that lost a race and were retried."""
        self.reloads = 0
        """Times the store changed under this instance and it replayed the topic."""
        self.topic_id: str | None = None
        self.refused: str | None = None
        """Why writes are refused for good (records of another registry appeared)."""
        self.unavailable: str | None = None
        """The last store error, until the store answers again."""
        self._failed_at = 0.0
        self._watching = False
        self.lock = threading.RLock()
        """Held while memory is read or a record applied; never while waiting for Kafka."""
        self._read_lock = threading.Lock()  # one reader of the log at a time
        self._write_lock = threading.RLock()  # writers, and a reload (which may run in one)

    # ------------------------------------------------------------------ following the log

    def sync(
        self, *, verify: bool = False, timeout: float | None = None, patient: bool = True
    ) -> None:
        """Read the log to its end. ``verify``: also check it is still the topic read so far
        (new records are always checked). A changed store is replayed from the start.
        ``patient=False``: return at once if the store was found away while this call waited
        for another reader (memory answers; the caller need not try again)."""
        generation = self.reloads
        asked = time.monotonic()
        try:
            with self._read_lock:
                if not patient and self.unavailable is not None and self._failed_at >= asked:
                    return
                self._follow(verify=verify, timeout=timeout)
        except StoreChanged as changed:
            self._reload(changed.why, generation)
        except RegistryError as exc:
            if exc.code in UNAVAILABLE:
                self._down(exc.reason)
            raise

    def _follow(self, *, verify: bool, timeout: float | None) -> None:
        # Read before asking: a writer thread may apply its own record meanwhile, and the end
        # offset it was acknowledged with is then above this one's, not below.
        applied = self.store.end
        end = self.log.end_offset(timeout, store_end=applied)
        if end < applied:
            time.sleep(0.2)  # a new leader's high watermark may lag for a moment
            end = self.log.end_offset(timeout, store_end=applied)
            if end < applied:
                raise StoreChanged(
                    f"the end offset of the store topic went back from {applied} to {end}"
                )
        if verify or end > self.store.end or self.topic_id is None:
            topic_id = self.log.identity(timeout)
            if self.topic_id is None:
                self.topic_id = topic_id
            elif topic_id != self.topic_id:
                raise StoreChanged(
                    f"the store topic was created again (topic id {self.topic_id}, now {topic_id})"
                )
        first = self.store.end == 0
        if timeout is None:
            timeout = self.log_timeout(end - self.store.end)
        self.log.read_to(_Locked(self), end, timeout=timeout)
        self._up()
        if self.store.foreign and self.refused is None:
            self.refused = (
                f"{self.store.foreign} records that are not this registry's appeared in the "
                "store topic (another schema registry writes to it?); writes are refused: "
                "restart on another --store-topic"
            )
            if not first:  # at start, the caller refuses the topic
                log.error("registry: %s", self.refused)

    def _reload(self, reason: str, generation: int) -> None:
        """Drop memory and replay the topic as it is now (writers wait)."""
        with self._write_lock, self._read_lock:
            if self.reloads != generation:
                return  # another thread replayed it meanwhile
            log.error("registry: %s; replaying it, as a new instance would", reason)
            fresh = Store()
            self.log.reset()
            try:
                end = self.log.end_offset(self.read_timeout)
                topic_id = self.log.identity(self.read_timeout)
                self.log.read_to(fresh, end, timeout=self.log_timeout(end))
            except RegistryError as exc:
                # Writes stay refused, reads use the old memory, the next sync starts over.
                self.topic_id = "(changed)"
                self._down(f"{reason}; replaying it failed: {exc.reason}")
                raise store_unavailable(f"{reason}; replaying it failed: {exc.reason}") from None
            with self.lock:
                self.store = fresh
                self.topic_id = topic_id
            self.reloads += 1
            if fresh.foreign:
                self.refused = (
                    f"the store topic, replayed, holds {fresh.foreign} records that are not "
                    "this registry's; writes are refused: restart on another --store-topic"
                )
                log.error("registry: %s", self.refused)
        self._up()
        log.warning(
            "registry: replayed the store topic: %d schemas, %d subjects (end offset %d)",
            len(fresh.schemas),
            len(fresh.subject_names()),
            fresh.end,
        )

    def log_timeout(self, records: int) -> float:
        """Long enough to read ``records`` (about 10,000 a second, with slack), at least the
        log's own timeout."""
        return max(self.log.timeout, self.read_timeout + records / 2_000)

    def _down(self, reason: str) -> None:
        if self.unavailable is None:
            log.warning("registry: %s", reason)
        self.unavailable = reason
        self._failed_at = time.monotonic()

    def _up(self) -> None:
        if self.unavailable is not None:
            log.warning("registry: the store answers again")
        self.unavailable = None

    def recently_down(self) -> bool:
        return self.unavailable is not None and time.monotonic() - self._failed_at < RETRY_AFTER

    def away(self) -> bool:
        """The store is known away and someone else finds out when it is back: the watch, or
        the next request after :data:`RETRY_AFTER` seconds."""
        return self.unavailable is not None and (self._watching or self.recently_down())

    def refresh(self) -> None:
        """Read the log before answering from memory; when the store is away, memory answers
        at once (Confluent's and Redpanda's followers answer from their cache too)."""
        if self.away():
            return
        try:
            self.sync(timeout=self.read_timeout, patient=False)
        except RegistryError as exc:
            if exc.code not in UNAVAILABLE:
                raise

    def watch(self, interval: float = 1.0) -> Callable[[], None]:
        """Follow the store in the background: new records, a topic created again, the store
        coming back. Returns the function that stops it."""
        stop = threading.Event()

        def follow() -> None:
            while not stop.wait(interval):
                try:
                    self.sync(verify=True, timeout=self.read_timeout)
                except RegistryError:
                    pass  # remembered in self.unavailable, logged on the change
                except Exception:  # a bug must not stop the watch silently
                    log.exception("registry: the store watch failed")

        thread = threading.Thread(target=follow, name="registry-watch", daemon=True)
        thread.start()
        self._watching = True

        def halt() -> None:
            self._watching = False
            stop.set()
            thread.join(timeout=interval + self.read_timeout + 1)

        return halt

    # ------------------------------------------------------------------ writing

    def writable(self) -> None:
        """Refuse a write the store cannot take now, with the reason."""
        if self.refused is not None:
            raise store_error(self.refused)
        if self.away():
            raise store_unavailable(self.unavailable or "")

    def sequenced(
        self, decide: Callable[[int], tuple[RecordKey, bytes] | None], *, fresh: bool = False
    ) -> None:
        """Run ``decide(seq)`` on an up-to-date store and append its record until it wins.

        ``fresh``: the caller has just read the log, the first decision need not read it
        again (a stale one only loses its race: its record lands at another offset)."""
        self.writable()  # not queued behind a write waiting for a store found away meanwhile
        with self._write_lock:
            self.writable()
            for attempt in range(self.max_attempts):
                if attempt or not fresh:
                    self.sync()
                self.writable()
                with self.lock:
                    seq = self.store.end
                    decided = decide(seq)
                if decided is None:
                    return
                if not self._same_topic():
                    continue  # replayed: decide again
                key, value = decided
                raw_key = key.encode()
                if self.append(raw_key, value, seq) == key.seq:
                    with self.lock:  # no record lies between: ours is the next one
                        self.store.apply(key.seq, raw_key, value)
                    return
                self.conflicts += 1
            raise store_error(f"gave up after {self.max_attempts} conflicting writes")

    def _same_topic(self) -> bool:
        """Before a write: is the topic still the one read? (Else it is replayed.)"""
        generation = self.reloads
        try:
            topic_id = self.log.identity(self.read_timeout)
        except RegistryError as exc:
            if exc.code in UNAVAILABLE:
                self._down(exc.reason)
            raise
        if topic_id == self.topic_id:
            return True
        self._reload(
            f"the store topic was created again (topic id {self.topic_id}, now {topic_id})",
            generation,
        )
        return False

    def append(self, raw_key: bytes, value: bytes | None, seq: int) -> int:
        try:
            return self.log.append(raw_key, value, store_end=seq)
        except RegistryError as exc:
            if exc.code in UNAVAILABLE:
                self._down(exc.reason)
            raise

    def unsequenced(self, records: list[tuple[bytes, bytes | None]]) -> None:
        """Append records every reader applies wherever they land (tombstones, id records),
        then read them back."""
        self.writable()
        with self._write_lock:
            self.writable()
            self.sync(verify=True)
            for raw_key, value in records:
                self.append(raw_key, value, self.store.end)
            self.sync()
