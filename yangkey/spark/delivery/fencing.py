"""Runs that share a transactional-id prefix: heartbeats, staleness, and fencing crashed runs.

Every exactly-once run ``R`` keeps a run record: the committed offset of consumer group
``<prefix>-R-run`` on partition 0 of the dead-letter topic is the number of task numbers the
run has handed out (its transactional ids are ``<prefix>-R-0`` … ``<prefix>-R-<n-1>``), and
the offset metadata says

* ``s``: ``running``, ``done`` (ended, nothing left open), ``failed`` (ended by an error or a
  signal: transactions may be left open) or ``fenced`` (another run aborted them);
* ``hb``: the wall-clock time of the driver's last heartbeat (milliseconds), refreshed every
  ``stale_after / 6`` seconds while the run is on;
* ``p``: that heartbeat period in seconds, ``m``: ``b`` (batch) or ``s`` (stream).

A driver killed with SIGKILL (or a lost machine) writes nothing more: its record says
``running`` with a heartbeat that ages. At start, and again every ``stale_after`` while other
unfinished runs exist, a run lists the records under its prefix and fences (``init_transactions``
on each transactional id, which aborts whatever transaction that id left open) every run that
is ``failed``, or ``running`` with a heartbeat older than the stale bound (``stale_after``, and
never less than three of that run's own heartbeat periods). A fresh heartbeat is a live run:
it is left alone. A record without a state (written by an older version, or by a batch run
between planning and its first heartbeat) is left alone too: nothing says it is dead.

Fencing never loses data: it aborts only what was not committed, and a run that was in fact
alive (a driver frozen for longer than the bound) sees its tasks fail as fenced, and Spark's
retry (or a resume with the same run id) produces those ranges again under the same markers.
Clocks of the drivers are compared: keep them within a fraction of the bound (NTP).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from confluent_kafka import KafkaException

from yangkey.errors import BrokerError
from yangkey.spark.delivery.markers import MarkerStore, RunScope
from yangkey.spark.delivery.spec import SinkSpec

DEFAULT_STALE_AFTER = 30.0
"""Seconds without a heartbeat after which an unfinished run counts as crashed."""
BEATS_PER_BOUND = 6
"""Heartbeats per stale bound: a run misses several in a row before it is fenced."""
MIN_MISSED_BEATS = 3
"""A run that beats slower than our bound is judged by its own period, never fewer beats."""

RUNNING, DONE, FAILED, FENCED = "running", "done", "failed", "fenced"
# Run ids never contain '-' (job._RUN_ID), so a longer prefix cannot pass for a run id here.
_RUN_ID = r"[A-Za-z0-9_.]{1,64}"

Verdict = Literal["fence", "live", "finished", "unknown"]


@dataclass(frozen=True)
class RunRecord:
    """One run's record as read back."""

    run_id: str
    tasks: int
    state: str = ""
    """Empty for a record without a state (older version, or not yet beating)."""
    heartbeat: float = 0.0
    """Wall-clock seconds of the last heartbeat."""
    period: float = 0.0
    stream: bool = False


def encode_record(state: str, heartbeat: float, period: float, stream: bool) -> str:
    data = {"s": state, "hb": int(heartbeat * 1000), "p": period, "m": "s" if stream else "b"}
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def decode_record(run_id: str, tasks: int, metadata: str | None) -> RunRecord:
    try:
        data = json.loads(metadata or "{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    try:
        heartbeat = float(data.get("hb", 0)) / 1000
        period = float(data.get("p", 0))
    except (TypeError, ValueError):
        heartbeat = period = 0.0
    return RunRecord(run_id, tasks, str(data.get("s", "")), heartbeat, period, data.get("m") == "s")


def stale_bound(record: RunRecord, stale_after: float) -> float:
    return max(stale_after, MIN_MISSED_BEATS * record.period)


def verdict(record: RunRecord, now: float, stale_after: float) -> Verdict:
    """What a starting run does about another run's record."""
    if record.state in (DONE, FENCED):
        return "finished"
    if record.state == FAILED:
        return "fence"
    if record.state != RUNNING:
        return "unknown"
    # A heartbeat from the future (a clock ahead of ours) is a live run, not a dead one.
    return "fence" if now - record.heartbeat > stale_bound(record, stale_after) else "live"


def run_of_group(group: str, prefix: str) -> str | None:
    """The run id whose record ``group`` is, under ``prefix``; None for any other group."""
    match = re.fullmatch(re.escape(prefix) + "-(" + _RUN_ID + ")-run", group)
    return match.group(1) if match else None


# --------------------------------------------------------------------------- the broker side


@dataclass
class Scan:
    """What one look at the other runs under a prefix found and did."""

    fenced: dict[str, int] = field(default_factory=dict)
    """Run id -> transactions it left open that were aborted."""
    live: list[tuple[str, float]] = field(default_factory=list)
    """(run id, seconds since its heartbeat) of runs left alone."""
    unknown: list[str] = field(default_factory=list)

    @property
    def unfinished(self) -> bool:
        return bool(self.live or self.unknown)

    def notes(self, prefix: str) -> list[str]:
        lines = [
            f"run {run_id} (prefix {prefix}) had stopped without finishing:"
            f" {count} open transaction(s) of it aborted"
            for run_id, count in sorted(self.fenced.items())
        ]
        if self.live:
            runs = ", ".join(f"{r} (heartbeat {age:.0f}s ago)" for r, age in sorted(self.live))
            lines.append(f"live run(s) under prefix {prefix} left alone: {runs}")
        return lines


class Runs:
    """The run records under one transactional-id prefix, seen from one run's driver."""

    def __init__(self, scope: RunScope, stale_after: float = DEFAULT_STALE_AFTER) -> None:
        self.scope = scope
        self.prefix = scope.prefix
        self.run_id = scope.run_id
        self.stale_after = stale_after

    def store(self, run_id: str) -> MarkerStore:
        return MarkerStore(self.scope.of_run(run_id))

    def others(self) -> list[RunRecord]:
        """Every other run's record under the prefix."""
        own = self.store(self.run_id)
        try:
            groups = {}
            for group in own.groups():
                run_id = run_of_group(group, self.prefix)
                if run_id is not None and run_id != self.run_id:
                    groups[run_id] = group
            # One look-up per run: records pile up (until the broker expires them, 7 days
            # by default), so ask in parallel.
            with ThreadPoolExecutor(max_workers=8) as pool:
                found = list(pool.map(own.committed, groups.values()))
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read the run records under prefix {self.prefix}: {exc}",
                source=f"kafka group {self.prefix}-*-run",
            ) from None
        return [
            decode_record(run_id, int(tp.offset), tp.metadata)
            for run_id, tp in zip(groups, found, strict=True)
            if tp is not None
        ]

    def fence_run(self, record: RunRecord) -> int:
        """Abort what ``record``'s run left open and mark its record fenced; returns how many
        transactional ids were fenced."""
        store = self.store(record.run_id)
        markers, handed_out = store.read()
        tasks = range(max(record.tasks, handed_out))
        # A batch task with a marker committed its one transaction; a stream task commits
        # a marker per micro-batch and may have the next one open.
        open_tasks = list(tasks) if record.stream else [t for t in tasks if t not in markers]
        fenced = store.fence(open_tasks) if open_tasks else 0
        store.record(record.tasks, encode_record(FENCED, time.time(), 0.0, record.stream))
        return fenced

    def scan(self) -> Scan:
        """Fence every crashed or failed run under the prefix; note the live ones."""
        result = Scan()
        for record in self.others():
            now = time.time()
            decision = verdict(record, now, self.stale_after)
            if decision == "fence":
                result.fenced[record.run_id] = self.fence_run(record)
            elif decision == "live":
                result.live.append((record.run_id, max(0.0, now - record.heartbeat)))
            elif decision == "unknown":
                result.unknown.append(record.run_id)
        return result


# --------------------------------------------------------------------------- heartbeat


class Heartbeat:
    """This run's record, kept fresh by a thread while the run is on (``runs`` None: a run
    without transactions, and nothing to do).

    It also watches: while other unfinished runs exist under the prefix, it looks again
    every ``stale_after`` and fences those gone stale since, so a run that crashed just
    before this one started does not block readers until the broker's transaction timeout.
    """

    def __init__(self, runs: Runs | None, tasks: int, stream: bool) -> None:
        self.runs = runs
        self.tasks = tasks
        self.stream = stream
        self.period = (runs.stale_after if runs else DEFAULT_STALE_AFTER) / BEATS_PER_BOUND
        self.watching = True
        self.scans: list[Scan] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Any = None

    def _write(self, state: str) -> None:
        assert self.runs is not None
        metadata = encode_record(state, time.time(), self.period, self.stream)
        with self._lock:
            self.runs.store(self.runs.run_id).record(self.tasks, metadata, self._consumer)

    def start(self) -> None:
        if self.runs is None:
            return
        store = self.runs.store(self.runs.run_id)
        try:
            # Only a group that exists: asking for the offsets of a new group on a new broker
            # waits for its offsets topic to be created.
            exists = store.record_group in store.groups()
            found = store.committed(store.record_group) if exists else None
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read the run record of run {store.run_id}: {exc}",
                source=f"kafka group {store.record_group}",
            ) from None
        if found is not None:  # never lower the count a resume planned from
            self.tasks = max(self.tasks, int(found.offset))
        self._consumer = store.record_consumer()
        self._write(RUNNING)
        self._thread = threading.Thread(target=self._loop, name="yangkey-heartbeat", daemon=True)
        self._thread.start()

    def grow(self, tasks: int) -> None:
        """A stream's micro-batch is about to use task numbers below ``tasks``: record them
        before any of its transactions opens."""
        if tasks > self.tasks and self._consumer is not None:
            self.tasks = tasks
            self._write(RUNNING)

    def _loop(self) -> None:
        assert self.runs is not None
        next_scan = time.monotonic() + self.runs.stale_after
        while not self._stop.wait(self.period):
            # A missed beat is retried at the next one; the run itself must not fail for it.
            with contextlib.suppress(BrokerError):
                self._write(RUNNING)
            if self.watching and time.monotonic() >= next_scan:
                next_scan = time.monotonic() + self.runs.stale_after
                with contextlib.suppress(BrokerError):
                    scan = self.runs.scan()
                    self.scans.append(scan)
                    self.watching = scan.unfinished

    def stop(self, failed: bool) -> None:
        """``failed``: the run ended by an error or a signal (transactions may be open).

        Best effort and bounded: with the broker unreachable the record keeps saying
        ``running``, goes stale, and later runs fence it, as they would a failed run."""
        thread = self._thread
        if thread is None:
            return
        self._thread = None
        self._stop.set()
        thread.join(timeout=10.0)
        if thread.is_alive():
            return  # a write stuck on an unreachable broker still holds the consumer
        try:
            with contextlib.suppress(BrokerError):
                self._write(FAILED if failed else DONE)
        finally:
            consumer, self._consumer = self._consumer, None
            with contextlib.suppress(KafkaException, RuntimeError):
                consumer.close()
            self.runs = None  # its admin client would outlive the run (Prepared keeps us)


def runs_of(sink: SinkSpec, stale_after: float) -> Runs:
    """The runs under ``sink``'s prefix, seen from ``sink``'s run."""
    return Runs(sink.scope(), stale_after)


def fence_stale_runs(sink: SinkSpec, stale_after: float) -> list[str]:
    """At start: fence the crashed runs under the prefix; one line per run fenced and one
    naming the live runs left alone."""
    return runs_of(sink, stale_after).scan().notes(sink.transactional_prefix)


def heartbeat_for(
    sink: SinkSpec, stale_after: float, stream: bool, tasks: int, enabled: bool
) -> Heartbeat:
    """The run's heartbeat; does nothing unless ``enabled`` (transactions on a real broker)."""
    return Heartbeat(runs_of(sink, stale_after) if enabled else None, tasks, stream)
