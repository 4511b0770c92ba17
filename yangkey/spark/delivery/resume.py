"""Resuming a batch run from its commit markers (:mod:`yangkey.spark.delivery.markers`).

A batch run with a run id that already has markers (a resumed run) plans only what the
markers do not cover: raw-topic offsets beyond the committed ranges, file bytes not yet
produced (the committed bytes must still be the same, checked by their hash, or the run stops
with an error). New tasks take task numbers never used by the run (the run record
``<prefix>-R-run`` says how many were handed out), and the transactions an interrupted run
left open are fenced (aborted) before anything is planned, so read_committed readers are not
blocked until the broker's transaction timeout.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from yangkey.errors import InputError
from yangkey.spark.delivery.markers import Marker
from yangkey.spark.source.kafka_source import KafkaRange
from yangkey.spark.source.splitting import FileRange, count_newlines, cut_ranges, path_key
from yangkey.spark.source.units import PlannedRange, PlannedTask


@dataclass
class Resumed:
    """A batch plan after the run's markers: what is left, under fresh task numbers."""

    plan: list[PlannedTask]
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
        return Resumed(
            [PlannedTask(handed_out + i, r) for i, r in enumerate(plan)], [], 0, handed_out
        )
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
    numbered = [PlannedTask(handed_out + i, r) for i, r in enumerate(left)]
    return Resumed(numbered, [markers[t] for t in sorted(used)], 0, handed_out)
