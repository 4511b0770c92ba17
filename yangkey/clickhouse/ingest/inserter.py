"""The batch inserter: one batch stored on a helper thread while the loop polls the next."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from yangkey.clickhouse.connection import ChdbConnection, Connection
from yangkey.clickhouse.ingest.arrow import insert_encoded


def _nothing() -> None:
    pass


class BatchInserter:
    """Stores one batch on a helper thread while the loop polls and encodes the next (chdb
    releases the GIL while it inserts): end to end is about the slower of the two, not their
    sum. One batch in flight at most, inserted in order; its ``stored`` callback (the offset
    commit) runs on the caller's thread once its INSERTs have all succeeded, never before."""

    def __init__(self, conn: Connection, database: str) -> None:
        if isinstance(conn, ChdbConnection):
            # ReplacingMergeTree (current state) and AggregatingMergeTree (instance state)
            # would otherwise merge each block as it is written: readers merge anyway (FINAL,
            # GROUP BY), and skipping it saves ~1-1.5 us of engine CPU per row
            conn.command("SET optimize_on_insert = 0")
        self.conn = conn
        self.database = database
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="yangkey-insert")
        self.pending: Future[None] | None = None
        self.stored: Callable[[], None] = _nothing

    def _insert(self, batches: list[tuple[str, bytes]]) -> None:
        for topic, data in batches:
            insert_encoded(self.conn, self.database, topic, data)

    def submit(self, batches: list[tuple[str, bytes]], stored: Callable[[], None]) -> None:
        self.flush()
        self.pending = self.pool.submit(self._insert, batches)
        self.stored = stored

    def flush(self) -> None:
        """Wait for the batch in flight; once stored, run its callback. An insert error is
        raised here (and the callback not run: its offsets stay uncommitted); an interrupt
        while waiting leaves the batch in flight for the next flush."""
        pending = self.pending
        if pending is None:
            return
        error = pending.exception()
        self.pending = None
        stored, self.stored = self.stored, _nothing
        if error is not None:
            raise error
        stored()

    def close(self) -> None:
        """Wait for the thread without running the callback (after a failure)."""
        self.pending = None
        self.pool.shutdown(wait=True)
