"""What one Spark partition holds, and how its task reads it: Spark's ``DataSource`` shape
(the driver plans serializable partitions, each task reads its own), one reader per input.

* :class:`PlannedUnits` — a batch run's plan: each partition holds one (task number, planned
  range), a :class:`~yangkey.spark.source.splitting.FileRange` or a
  :class:`~yangkey.spark.source.kafka_source.KafkaRange`, which reads itself;
* :class:`BinaryFiles` — the rows of Spark's ``binaryFile`` source (Hadoop URIs, batch);
* :class:`StreamedFiles` — the same rows in a micro-batch;
* :class:`StreamedRanges` — a micro-batch's raw-topic offset ranges
  (:class:`~yangkey.spark.source.kafka_source.RawKafkaSource`, one per partition).

Every reader gives an :class:`Opened` input: its records, the range key its commit marker
records (:func:`describe_range_key` says it in words), and what the progress reports count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from yangkey.spark.source.files import binary_files
from yangkey.spark.source.kafka_source import KafkaRange, read_kafka_range
from yangkey.spark.source.splitting import FileRange, LayoutChoice, RawRecord, split_records

PlannedRange = FileRange | KafkaRange
"""What one task of a batch run reads."""


class PlannedTask(NamedTuple):
    """One Spark partition of a batch run's plan: the task number (its transactional id and
    commit marker) and the range it reads."""

    task: int
    range: PlannedRange


def by_bytes(record: RawRecord) -> int:
    return len(record[0]) + 1  # the line's newline


def by_record(_record: RawRecord) -> int:
    return 1


class Opened(NamedTuple):
    """One partition's input, as its task reads it."""

    task: int | None
    """The task number the plan gave it (None: the Spark partition's own)."""
    key: str
    """The range key its commit marker records ("" where a micro-batch has none)."""
    records: Iterable[RawRecord]
    weigh: Callable[[RawRecord], int]
    """The work one record stands for in progress reports: its bytes, or one offset."""


class PartitionReader(Protocol):
    """How a task reads the items of its Spark partition."""

    def open(self, items: Iterable[Any]) -> Opened: ...


@dataclass(frozen=True)
class PlannedUnits:
    source_config: Mapping[str, object]
    """The raw topic's consumer settings (for a :class:`KafkaRange`)."""

    def open(self, items: Iterable[Any]) -> Opened:
        # One planned range per Spark partition, read to its end: a worker that leaves input
        # unread is not reused, and the next task pays a new Python process that imports
        # yangkey and compiles the catalog again (about a second of CPU).
        ((task, planned),) = items  # a PlannedTask
        key, records = planned.read(self.source_config)
        return Opened(task, key, records, by_record if planned.counts_records else by_bytes)


@dataclass(frozen=True)
class BinaryFiles:
    layout: LayoutChoice

    def open(self, items: Iterable[Any]) -> Opened:
        key, records = binary_files(items, self.layout)
        return Opened(None, key, records, by_bytes)


@dataclass(frozen=True)
class StreamedFiles:
    layout: LayoutChoice

    def open(self, items: Iterable[Any]) -> Opened:
        layout = self.layout
        records = (r for row in items for r in split_records(bytes(row[1]), str(row[0]), layout))
        return Opened(None, "", records, by_bytes)


@dataclass(frozen=True)
class StreamedRanges:
    source_config: Mapping[str, object]

    def open(self, items: Iterable[Any]) -> Opened:
        # read as a planned range reads, without the key (the micro-batch id is the marker's)
        ranges = [KafkaRange(str(t), int(p), int(s), int(e)) for t, p, s, e in items]
        records = (r for kr in ranges for r in read_kafka_range(self.source_config, kr))
        return Opened(None, "", records, by_record)


def describe_range_key(key: str) -> str:
    """A range key in words, for error messages."""
    parts = key.split(":")
    if len(parts) == 5 and parts[0] == "kafka":
        return f"offsets {parts[3]}-{parts[4]} of kafka://{parts[1]}@{parts[2]}"
    if len(parts) == 5 and parts[0] == "file":
        return f"bytes {parts[2]}-{parts[3]} (sha-256 {parts[4][:12]}…)"
    return key or "an input range recorded by an older version"
