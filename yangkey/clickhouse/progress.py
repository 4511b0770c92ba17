"""What ``yangkey ingest`` shows while it runs: the events of an ingest run
(:class:`~yangkey.clickhouse.ingest.events.IngestEvents`) as a rich live table on a terminal,
plain ``ingest:`` lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from yangkey.clickhouse.ingest.events import IngestResult

WAITING = "waiting for messages"


def stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class IngestProgress:
    """Renders an ingest run: progress every ``interval`` seconds while messages arrive and
    every ``idle_interval`` seconds while none do, notes, warnings and the summary. Not
    ``enabled`` (``--quiet``): warnings only."""

    idle_after = 2.0
    """Seconds without a message before the report says "waiting for messages"."""

    def __init__(
        self,
        enabled: bool = True,
        log: Callable[[str], None] = stderr_line,
        interval: float = 5.0,
        idle_interval: float = 60.0,
    ) -> None:
        self.enabled = enabled
        self.log = log
        self.interval = interval
        self.idle_interval = idle_interval
        self.started = time.monotonic()
        self.last_line = self.started
        self.line_total = 0
        self.last_message = self.started
        self.seen_total = 0
        self.said_waiting = False
        self.live: Any = None
        if enabled and sys.stderr.isatty():
            from rich.console import Console  # noqa: PLC0415
            from rich.live import Live  # noqa: PLC0415

            self.live = Live(console=Console(stderr=True), refresh_per_second=4, transient=False)
            self.live.start()

    def note(self, text: str) -> None:
        if self.enabled:
            self.log(f"ingest: {text}")

    def warning(self, text: str) -> None:
        self.log(f"ingest: warning: {text}")

    def _table(self, result: IngestResult, state: str) -> Any:
        from rich.table import Table  # noqa: PLC0415

        done = state == "done"
        elapsed = result.seconds if done else time.monotonic() - self.started
        rate = result.total / max(elapsed, 1e-9)
        # an average that only decays while nothing arrives says nothing: no rate when idle
        shown_rate = "" if state == WAITING else f" ({rate:,.0f}/s)"
        table = Table(title=f"yangkey ingest - {state}", title_justify="left")
        table.add_column("topic")
        table.add_column("messages", justify="right")
        table.add_column("to errors" if done else "", justify="right")
        table.add_column("expired" if done else "", justify="right")
        for topic in sorted(set(result.messages) | set(result.errors) | set(result.expired)):
            errors = f"{result.errors.get(topic, 0):,}" if done else ""
            expired = f"{result.expired.get(topic, 0):,}" if done else ""
            table.add_row(topic, f"{result.messages.get(topic, 0):,}", errors, expired)
        table.add_row(
            "[bold]total[/bold]",
            f"[bold]{result.total:,}[/bold]{shown_rate}",
            f"{result.total_errors:,}" if done else f"{result.decode_errors:,} undecodable",
            f"{result.total_expired:,}" if done else "",
        )
        return table

    def progress(self, result: IngestResult) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if result.total != self.seen_total:
            self.seen_total = result.total
            self.last_message = now
            self.said_waiting = False
        idle = now - self.last_message >= self.idle_after
        if self.live is not None:
            self.live.update(self._table(result, WAITING if idle else "consuming"))
            return
        if idle:
            # the first waiting line comes at the usual pace, the next ones far less often
            pause = self.idle_interval if self.said_waiting else self.interval
            if now - self.last_line >= pause:
                self.log(f"ingest: {result.total} messages so far, {WAITING}")
                self.last_line, self.line_total = now, result.total
                self.said_waiting = True
        elif now - self.last_line >= self.interval:
            rate = (result.total - self.line_total) / max(now - self.last_line, 1e-9)
            self.log(f"ingest: {result.total} messages ({rate:.0f}/s) in {result.batches} batches")
            self.last_line, self.line_total = now, result.total

    def finished(self, result: IngestResult, *, failed: bool) -> None:
        if self.live is not None:
            self.live.update(self._table(result, "failed" if failed else "done"))
            self.live.stop()
            self.live = None
        elif self.enabled and not failed:
            per_topic = ", ".join(f"{t}={n}" for t, n in sorted(result.messages.items()))
            self.log(
                f"ingest: done, {result.total} messages in {result.seconds:.1f}s "
                f"({result.rate:.0f}/s), {result.total_errors} to errors, "
                f"{result.total_expired} expired (older than retention: errors table only)"
                + (f" [{per_topic}]" if per_topic else "")
            )
