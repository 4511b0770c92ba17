"""What a run has done: live progress while Spark works, and the summary at the end."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pyspark.sql import SparkSession

from yangkey.spark.delivery.spec import PartitionResult
from yangkey.spark.source.splitting import LineRecords, RawRecord, told
from yangkey.spark.transform import Tally

REPORT = struct.Struct("!8sIIQQ")
"""A task's datagram: the run's token, task number, attempt, records read, work done."""
REPORT_EVERY = 0.5


class Channel(NamedTuple):
    """Where a task sends its progress datagrams: the driver's socket and the run's token."""

    host: str
    port: int
    token: bytes


class TaskReport(NamedTuple):
    """The last report of one task: its attempt, records read, work done."""

    attempt: int
    records: int
    units: int


@dataclass
class Summary:
    """The outcome of a run (or of the batches of a stream so far)."""

    run_id: str
    tally: Tally = field(default_factory=Tally)
    partitions: int = 0
    skipped: int = 0
    """Partitions an earlier attempt or run had committed (not produced again)."""
    batches: int = 0
    seconds: float = 0.0
    dead_letter_topic: str = ""
    dry_run: bool = False
    skipped_subscriptions: int = 0
    """Subscriptions of the file that did not compile: their notifications were
    dead-lettered (kind ``bad-subscription``)."""

    def add(self, results: Iterable[PartitionResult]) -> None:
        for result in results:
            self.partitions += 1
            self.skipped += int(result.skipped)
            self.tally.merge(result.tally)

    @property
    def rate(self) -> float:
        return self.tally.records / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "records": self.tally.records,
            "messages": self.tally.messages,
            "rejected": self.tally.rejections,
            "produced": dict(sorted(self.tally.produced.items())),
            "rejected_by_kind": dict(sorted(self.tally.rejected.items())),
            "empty_updates": self.tally.empty,
            "dead_letter_topic": self.dead_letter_topic,
            "partitions": self.partitions,
            "skipped_partitions": self.skipped,
            "skipped_subscriptions": self.skipped_subscriptions,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
            "dry_run": self.dry_run,
        }


class Progress:
    """Live progress of a batch run: records done, of a total estimated from the plan, rate
    and ETA, from the running tasks.

    Spark's own metrics reach the driver only when a task finishes (a Python task's records
    not at all), so each task sends small UDP datagrams to the driver while it reads: the
    records it has read and the work they stand for (bytes of a file range, offsets of a
    raw-topic range). Datagrams that get lost only delay the figures; the summary comes from
    the tasks' results, as before.
    """

    def __init__(
        self,
        session: SparkSession,
        update: Callable[[str], None] | None,
        total_units: int = 0,
        units_are_records: bool = False,
        started: float | None = None,
    ) -> None:
        self.session = session
        self.update = update
        self.total_units = total_units
        self.units_are_records = units_are_records
        self.token = os.urandom(8)
        self.address: tuple[str, int] | None = None
        self._socket: socket.socket | None = None
        self._tasks: dict[int, TaskReport] = {}
        self.started = started
        """The monotonic clock's reading the rate and ETA count from: the run's start (set
        on entering when not given), not the first report, which already carries half a
        second of a task's records (it made the first rate millions of records/s)."""
        self._reported = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def channel(self) -> Channel | None:
        """What a task needs to report (None: no live progress)."""
        if self.address is None:
            return None
        return Channel(*self.address, self.token)

    def __enter__(self) -> Progress:
        if self.started is None:
            self.started = time.monotonic()
        if self.update is None:
            return self
        host = "127.0.0.1"
        if not (self.session.sparkContext.master or "").startswith("local"):
            # Executors on other nodes reach the driver where Spark itself does.
            host = self.session.conf.get("spark.driver.host", host) or host
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((host, 0))
        except OSError:
            sock.close()  # no live figures then, only the spinner and the summary
        else:
            sock.settimeout(0.2)
            self._socket = sock
            self.address = (host, sock.getsockname()[1])
        self._thread = threading.Thread(target=self._loop, name="yangkey-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._socket is not None:
            self._socket.close()

    def receive(self, datagram: bytes, now: float) -> None:
        if len(datagram) != REPORT.size or not datagram.startswith(self.token):
            return
        _, task, attempt, records, units = REPORT.unpack(datagram)
        known = self._tasks.get(task)
        if known is None or attempt >= known.attempt:
            self._tasks[task] = TaskReport(attempt, records, units)
            self._reported = True

    def line(self, now: float, tasks_done: int, tasks_total: int) -> str | None:
        """The progress line, or None while no task has reported."""
        if not self._reported:
            return None
        records = sum(report.records for report in self._tasks.values())
        units = sum(report.units for report in self._tasks.values())
        parts = [f"{records:,} records"]
        if self.total_units and units:
            fraction = min(1.0, units / self.total_units)
            total = self.total_units if self.units_are_records else round(records / fraction)
            parts[0] = f"{records:,} of ~{max(total, records):,} records ({fraction:.0%})"
        elapsed = 0.0 if self.started is None else now - self.started
        if elapsed > 0:
            parts.append(f"{records / elapsed:,.0f} records/s")
            if self.total_units and units:
                left = max(0, self.total_units - units) * elapsed / units
                parts.append(f"ETA {_clock(left)}")
        if tasks_total:
            parts.append(f"{tasks_done}/{tasks_total} tasks")
        return ", ".join(parts)

    def _loop(self) -> None:
        tracker = self.session.sparkContext.statusTracker()
        shown = 0.0
        while not self._stop.is_set():
            if self._socket is not None:
                with contextlib.suppress(OSError):
                    self.receive(self._socket.recv(64), time.monotonic())
            else:
                self._stop.wait(0.2)
            now = time.monotonic()
            if now - shown < 0.5:
                continue
            shown = now
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            text = self.line(now, done, total)
            if text is not None and self.update is not None:
                self.update(text)


def reporting(
    records: Iterable[RawRecord],
    channel: Channel | None,
    task: int,
    attempt: int,
    weigh: Callable[[RawRecord], int],
) -> Iterable[RawRecord]:
    """Task side of :class:`Progress`: ``records`` passed through, with a datagram to the
    driver every :data:`REPORT_EVERY` seconds (and one at the end) saying how many records
    and how much work (``weigh``) the task has read. :class:`LineRecords` are told it a
    chunk of lines at a time (by the loop that reads them), not wrapped."""
    if channel is None:
        return records
    if isinstance(records, LineRecords):
        return LineRecords(
            records.data, records.path, records.first_line, _Reporter(channel, task, attempt)
        )
    return told(records, _Reporter(channel, task, attempt), weigh)


class _Reporter:
    """``reporting``'s datagrams, told (records, work) as they are read; ``(0, -1)`` says
    the task has read all it will."""

    def __init__(self, channel: Channel, task: int, attempt: int) -> None:
        self.channel = channel
        self.task = task
        self.attempt = attempt
        self.count = self.done = 0
        self.sock: socket.socket | None = None
        self.due = time.monotonic() + REPORT_EVERY

    def __call__(self, count: int, done: int) -> None:
        if done < 0:
            self.send()
            if self.sock is not None:
                self.sock.close()
                self.sock = None
            return
        self.count += count
        self.done += done
        if time.monotonic() >= self.due:
            self.send()
            self.due = time.monotonic() + REPORT_EVERY

    def send(self) -> None:
        host, port, token = self.channel
        if self.sock is None:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with contextlib.suppress(OSError):
            self.sock.sendto(
                REPORT.pack(token, self.task, self.attempt, self.count, self.done), (host, port)
            )


def _clock(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def every(
    seconds: float, emit: Callable[[str], None], clock: Callable[[], float] = time.monotonic
) -> Callable[[str], None]:
    """``emit`` at most once per ``seconds`` (the first line at once): progress lines for a
    log or a pipe, where a spinner cannot redraw."""
    last = [-seconds]

    def update(line: str) -> None:
        now = clock()
        if now - last[0] >= seconds:
            last[0] = now
            emit(line)

    return update
