"""Commit markers: which exact input each task of a run committed, and resuming from them.

A task of run ``R`` (transactional id and marker group ``<prefix>-R-<task>``) commits its
marker in the same transaction as its messages: the committed offset of that group on
partition 0 of the dead-letter topic is ``batch id + 1``, and the offset metadata records

* the task's counts (:class:`~yangkey.spark.transform.Tally`),
* ``k``, the exact range it read: ``kafka:<topic>:<partition>:<start>:<end>`` or
  ``file:<path hash>:<start>:<end>:<sha-256 of those bytes>`` (empty in streaming),
* ``c``, the identity of the streaming checkpoint it ran under (empty in batch runs).

A batch run with a run id that already has markers (a resumed run) plans only what the
markers do not cover: raw-topic offsets beyond the committed ranges, file bytes not yet
produced (the committed bytes must still be the same, checked by their hash, or the run stops
with an error). New tasks take task numbers never used by the run (``<prefix>-R-run``
records how many were handed out; its offset metadata holds the run's state and heartbeat,
:mod:`yangkey.spark.fencing`), and the transactions an interrupted run left open are fenced
(aborted) before anything is planned, so read_committed readers are not blocked until the
broker's transaction timeout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from yangkey.errors import BrokerError, ConfigError, InputError
from yangkey.spark.kafka_source import KafkaRange
from yangkey.spark.transform import FileRange, Tally, count_newlines, cut_ranges

MARKER_METADATA_LIMIT = 3000
"""Brokers refuse offset metadata over ``offset.metadata.max.bytes`` (4096 by default)."""
IDENTITY_FILE = "yangkey-identity.json"

PlannedRange = FileRange | KafkaRange
T = TypeVar("T")
_TRY_AGAIN = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.UNSTABLE_OFFSET_COMMIT,
    KafkaError._WAIT_COORD,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
}


# --------------------------------------------------------------------------- markers


@dataclass(frozen=True)
class Marker:
    """A task's commit marker as read back."""

    task: int
    batches: int
    """The committed offset: the id of the last committed batch + 1."""
    tally: Tally
    range_key: str = ""
    identity: str = ""


def encode_marker(tally: Tally, range_key: str, identity: str) -> str:
    room = MARKER_METADATA_LIMIT - len(range_key) - len(identity) - 16
    data = json.loads(tally.to_compact_json(room))
    data["k"] = range_key
    data["c"] = identity
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def decode_marker(task: int, offset: int, metadata: str | None) -> Marker:
    text = metadata or "{}"
    try:
        data = json.loads(text)
    except ValueError:
        data = {}
    return Marker(
        task,
        offset,
        Tally.from_json(text) if data else Tally(),
        str(data.get("k", "")),
        str(data.get("c", "")),
    )


def kafka_range_key(kafka_range: KafkaRange) -> str:
    r = kafka_range
    return f"kafka:{r.topic}:{r.partition}:{r.start}:{r.end}"


def path_key(path: str) -> str:
    return hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]


def file_range_key(path: str, start: int, end: int, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()[:32]
    return f"file:{path_key(path)}:{start}:{end}:{digest}"


def describe_range_key(key: str) -> str:
    """A range key in words, for error messages."""
    parts = key.split(":")
    if len(parts) == 5 and parts[0] == "kafka":
        return f"offsets {parts[3]}-{parts[4]} of kafka://{parts[1]}@{parts[2]}"
    if len(parts) == 5 and parts[0] == "file":
        return f"bytes {parts[2]}-{parts[3]} (sha-256 {parts[4][:12]}…)"
    return key or "an input range recorded by an older version"


# --------------------------------------------------------------------------- the broker side


class MarkerStore:
    """The markers, run record and transactional ids of one run, seen from the driver."""

    def __init__(
        self,
        admin: Any,
        connection: Mapping[str, object],
        prefix: str,
        run_id: str,
        dead_letter_topic: str,
        timeout: float = 30.0,
    ) -> None:
        self.admin = admin
        self.connection = dict(connection)
        self.prefix = f"{prefix}-{run_id}-"
        self.run_id = run_id
        self.partition = TopicPartition(dead_letter_topic, 0)
        self.timeout = timeout

    def retrying(self, call: Callable[[], T]) -> T:
        """``call()`` again while the broker says try again (a coordinator still loading)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return call()
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                retry = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _TRY_AGAIN
                )
                if not retry or time.monotonic() > deadline:
                    raise
            time.sleep(0.2)

    @property
    def record_group(self) -> str:
        return f"{self.prefix}run"

    def committed(self, group: str) -> TopicPartition | None:
        """``group``'s committed offset (and metadata) on the marker partition, if any."""
        from confluent_kafka import ConsumerGroupTopicPartitions  # noqa: PLC0415

        request = [ConsumerGroupTopicPartitions(group, [self.partition])]

        def ask() -> Any:
            futures = self.admin.list_consumer_group_offsets(
                request, require_stable=True, request_timeout=self.timeout
            )
            return futures[group].result().topic_partitions

        found = self.retrying(ask)
        for tp in found or ():
            if tp.error is None and tp.offset is not None and tp.offset >= 0:
                return tp  # type: ignore[no-any-return]
        return None

    def groups(self) -> list[str]:
        """Every consumer group on the broker (raises KafkaException)."""
        listing = self.retrying(
            lambda: self.admin.list_consumer_groups(request_timeout=self.timeout).result()
        )
        return sorted(g.group_id for g in listing.valid)

    def read(self) -> tuple[dict[int, Marker], int]:
        """(markers by task number, number of task numbers handed out so far)."""
        try:
            groups = [g for g in self.groups() if g.startswith(self.prefix)]
            markers: dict[int, Marker] = {}
            handed_out = 0
            for group in groups:
                suffix = group[len(self.prefix) :]
                if suffix != "run" and not suffix.isdigit():
                    continue
                found = self.committed(group)
                if found is None:
                    continue
                if suffix == "run":
                    handed_out = max(handed_out, int(found.offset))
                    continue
                task = int(suffix)
                markers[task] = decode_marker(task, int(found.offset), found.metadata)
                handed_out = max(handed_out, task + 1)
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read the commit markers of run {self.run_id}: {exc}",
                source=f"kafka group {self.prefix}*",
            ) from None
        return markers, handed_out

    def record_consumer(self) -> Any:
        """A consumer that writes the run record (kept open by a heartbeat)."""
        return Consumer(
            {**self.connection, "group.id": self.record_group, "enable.auto.commit": False}
        )

    def record(self, handed_out: int, metadata: str = "", consumer: Any = None) -> None:
        """Remember how many task numbers the run has handed out (before tasks start), with
        the run's state (:mod:`yangkey.spark.fencing`) as metadata."""
        writer = consumer or self.record_consumer()
        offsets = [TopicPartition(self.partition.topic, 0, handed_out, metadata)]
        try:
            self.retrying(lambda: writer.commit(offsets=offsets, asynchronous=False))
        except KafkaException as exc:
            raise BrokerError(
                f"cannot record the tasks of run {self.run_id}: {exc}",
                source=f"kafka group {self.record_group}",
            ) from None
        finally:
            if consumer is None:
                writer.close()

    def fence(self, tasks: Iterable[int]) -> int:
        """Abort whatever transaction the given tasks left open; returns how many."""
        ids = [f"{self.prefix}{task}" for task in tasks]

        def one(transactional_id: str) -> None:
            settings = {"log_level": 3, **self.connection, "transactional.id": transactional_id}
            producer = Producer(settings)
            try:
                producer.init_transactions(self.timeout)
            except KafkaException as exc:
                raise BrokerError(
                    f"cannot fence the transactions an earlier attempt left open: {exc}",
                    source=f"transactional.id {transactional_id}",
                ) from None
            finally:
                with contextlib.suppress(KafkaException, RuntimeError):
                    producer.close()

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(one, ids))
        return len(ids)


# --------------------------------------------------------------------------- resuming


@dataclass
class Resumed:
    """A batch plan after the run's markers: what is left, under fresh task numbers."""

    plan: list[tuple[int, PlannedRange]]
    committed: list[Marker]
    """Markers of tasks whose ranges belong to this input (reported as skipped)."""
    fenced: int = 0
    handed_out: int = 0


def _subtract(start: int, end: int, covered: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    pieces = [(start, end)]
    for c_start, c_end in covered:
        next_pieces: list[tuple[int, int]] = []
        for p_start, p_end in pieces:
            if c_end <= p_start or c_start >= p_end:
                next_pieces.append((p_start, p_end))
                continue
            if p_start < c_start:
                next_pieces.append((p_start, c_start))
            if c_end < p_end:
                next_pieces.append((c_end, p_end))
        pieces = next_pieces
    return pieces


def _parse_key(key: str) -> list[str]:
    return key.split(":")


def _remaining_kafka(
    ranges: list[KafkaRange], markers: Iterable[Marker]
) -> tuple[list[KafkaRange], set[int]]:
    covered: dict[tuple[str, int], list[tuple[int, int, int]]] = defaultdict(list)
    for marker in markers:
        parts = _parse_key(marker.range_key)
        if len(parts) == 5 and parts[0] == "kafka":
            covered[(parts[1], int(parts[2]))].append((int(parts[3]), int(parts[4]), marker.task))
    left: list[KafkaRange] = []
    used: set[int] = set()
    for r in ranges:
        spans = covered.get((r.topic, r.partition), [])
        used.update(task for s, e, task in spans if s < r.end and e > r.start)
        for start, end in _subtract(r.start, r.end, [(s, e) for s, e, _ in spans]):
            left.append(KafkaRange(r.topic, r.partition, start, end))
    return left, used


def _remaining_file(
    ranges: list[FileRange], markers: Iterable[Marker], split_size: int, run_id: str
) -> tuple[list[FileRange], set[int]]:
    path = ranges[0].path
    key = path_key(path)
    spans: list[tuple[int, int, str, int]] = []
    for marker in markers:
        parts = _parse_key(marker.range_key)
        if len(parts) == 5 and parts[0] == "file" and parts[1] == key:
            spans.append((int(parts[2]), int(parts[3]), parts[4], marker.task))
    if not spans:
        return ranges, set()
    changed = (
        f"changed since run {run_id} produced it; start a new run (another --run-id) to"
        " produce it again, or restore the file"
    )
    size = max(r.end for r in ranges)
    layout = ranges[0].layout
    with open(path, "rb") as stream:
        for start, end, digest, _ in spans:
            stream.seek(start)
            data = stream.read(end - start)
            if len(data) != end - start or hashlib.sha256(data).hexdigest()[:32] != digest:
                raise InputError(f"bytes {start}-{end} {changed}", source=path)
        gaps = _subtract(0, size, [(s, e) for s, e, _, _ in spans])
        if gaps and layout == "document":
            raise InputError(f"the document {changed}", source=path)
        left: list[FileRange] = []
        for start, end in gaps:
            if start > 0:
                stream.seek(start - 1)
                if stream.read(1) != b"\n":
                    raise InputError(
                        f"the line ending at byte {start} was incomplete when run {run_id}"
                        f" produced it and has grown since; {changed}",
                        source=path,
                    )
            first_line = 1 + count_newlines(stream, 0, start)
            left.extend(cut_ranges(stream, path, start, end, first_line, split_size, layout))
    return left, {task for *_, task in spans}


def resume_plan(
    plan: Sequence[PlannedRange],
    markers: Mapping[int, Marker],
    handed_out: int,
    split_size: int,
    run_id: str,
) -> Resumed:
    """The ranges of ``plan`` no marker covers, numbered from ``handed_out`` on."""
    if not markers:
        return Resumed([(handed_out + i, r) for i, r in enumerate(plan)], [], 0, handed_out)
    left: list[PlannedRange] = []
    used: set[int] = set()
    kafka: list[KafkaRange] = [r for r in plan if isinstance(r, KafkaRange)]
    remaining, tasks = _remaining_kafka(kafka, markers.values())
    left.extend(remaining)
    used |= tasks
    by_path: dict[str, list[FileRange]] = defaultdict(list)
    for r in plan:
        if isinstance(r, FileRange):
            by_path[r.path].append(r)
    for ranges in by_path.values():
        remaining_files, tasks = _remaining_file(ranges, markers.values(), split_size, run_id)
        left.extend(remaining_files)
        used |= tasks
    numbered = [(handed_out + i, r) for i, r in enumerate(left)]
    return Resumed(numbered, [markers[t] for t in sorted(used)], 0, handed_out)


# --------------------------------------------------------------------------- stream identity


class CheckpointFiles(Protocol):
    """Reads and writes small files in the checkpoint directory (local or Hadoop)."""

    def read(self, name: str) -> str | None: ...

    def write(self, name: str, text: str) -> None: ...

    def exists(self, name: str) -> bool: ...


class LocalCheckpoint:
    def __init__(self, directory: str) -> None:
        self.directory = Path(
            directory[len("file://") :] if directory.startswith("file://") else directory
        ).expanduser()

    def read(self, name: str) -> str | None:
        try:
            return (self.directory / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write(self, name: str, text: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.directory / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(self.directory / name)

    def exists(self, name: str) -> bool:
        return (self.directory / name).exists()


class HadoopCheckpoint:
    """The same through the JVM's Hadoop FileSystem (hdfs://, s3a://…)."""

    def __init__(self, directory: str, session: Any) -> None:
        jvm = session._jvm
        self._jvm = jvm
        self._root = jvm.org.apache.hadoop.fs.Path(directory)
        conf = session._jsc.hadoopConfiguration()
        self._fs = self._root.getFileSystem(conf)

    def _path(self, name: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self._root, name)

    def read(self, name: str) -> str | None:
        path = self._path(name)
        if not self._fs.exists(path):
            return None
        stream = self._fs.open(path)
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write(self, name: str, text: str) -> None:
        stream = self._fs.create(self._path(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def exists(self, name: str) -> bool:
        return bool(self._fs.exists(self._path(name)))


@dataclass(frozen=True)
class StreamIdentity:
    identity: str
    run_id: str
    created: bool
    """True when this start created the checkpoint (the stream reads from --from)."""


_SPARK_STATE = ("offsets", "commits", "metadata")


def stream_identity(
    files: CheckpointFiles, run_id: str | None, legacy_run_id: str
) -> StreamIdentity:
    """The checkpoint's identity, written into it when it is created.

    A checkpoint of an older version (Spark state, no identity file) keeps the run id it
    had, derived from its path, and the empty identity of the markers it wrote.
    """
    text = files.read(IDENTITY_FILE)
    if text is not None:
        data = json.loads(text)
        recorded = str(data["run_id"])
        if run_id and run_id != recorded:
            raise ConfigError(
                f"the checkpoint belongs to run {recorded}, not {run_id}: drop --run-id or"
                " use another --checkpoint",
                source="--run-id",
            )
        return StreamIdentity(str(data["identity"]), recorded, False)
    if any(files.exists(name) for name in _SPARK_STATE):
        # Markers of older versions carry no identity: an empty one matches them.
        identity, chosen, created = "", run_id or legacy_run_id, False
    else:
        identity = uuid.uuid4().hex
        chosen, created = run_id or f"s{identity[:12]}", True
    files.write(IDENTITY_FILE, json.dumps({"identity": identity, "run_id": chosen}) + "\n")
    return StreamIdentity(identity, chosen, created)


def check_no_foreign_markers(
    markers: Mapping[int, Marker], identity: StreamIdentity, checkpoint: str
) -> None:
    """Refuse a stream whose run has markers ahead written under another checkpoint."""
    foreign = [m for m in markers.values() if m.batches > 0 and m.identity != identity.identity]
    if foreign:
        ahead = max(m.batches for m in foreign) - 1
        raise ConfigError(
            f"run {identity.run_id} has commit markers up to micro-batch {ahead} written under"
            f" another checkpoint, and this checkpoint's batches would start again at 0"
            " (their records would be skipped): restore the original checkpoint, or start"
            " a new run (another --run-id or none)",
            source=checkpoint,
        )
