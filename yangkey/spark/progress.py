"""What a run has done: live progress while Spark works, and the summary at the end."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from yangkey.spark.sink import PartitionResult
from yangkey.spark.transform import Tally


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
            "dead_letter_topic": self.dead_letter_topic,
            "partitions": self.partitions,
            "skipped_partitions": self.skipped,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
            "dry_run": self.dry_run,
        }


class Progress:
    """Records done (from finished tasks) and tasks done, polled from the driver."""

    def __init__(self, session: SparkSession, update: Callable[[str], None] | None) -> None:
        self.session = session
        self.update = update
        self.records = session.sparkContext.accumulator(0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.base = 0

    def __enter__(self) -> Progress:
        if self.update is not None:
            self._thread = threading.Thread(target=self._loop, name="yangkey-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _loop(self) -> None:
        tracker = self.session.sparkContext.statusTracker()
        while not self._stop.wait(0.5):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            records = self.base + int(self.records.value)
            if self.update is not None:
                tasks = f", {done}/{total} tasks" if total else ""
                self.update(f"{records:,} records done{tasks}")
