"""Progress lines of ``yangkey ingest`` when piped: a rate while messages arrive, "waiting for
messages" (and far less often) while none do; ``--quiet`` keeps the warnings only."""

from __future__ import annotations

import pytest

from yangkey.clickhouse import progress as progress_module
from yangkey.clickhouse.ingest.events import IngestResult
from yangkey.clickhouse.progress import IngestProgress


def test_idle_says_waiting_less_often_and_a_rate_only_while_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    lines: list[tuple[float, str]] = []
    reporter = IngestProgress(True, lambda line: lines.append((now[0] - 1000, line)))
    assert reporter.live is None  # pytest's stderr is not a terminal
    result = IngestResult()
    # busy for 20 s (a batch a second), then idle for 200 s (an empty poll a second)
    for second in range(1, 221):
        now[0] = 1000.0 + second
        if second <= 20:
            result.messages["t"] = result.messages.get("t", 0) + 100
            result.batches += 1
        reporter.progress(result)
    busy = [(t, line) for t, line in lines if t <= 20]
    idle = [(t, line) for t, line in lines if t > 20]
    assert [t for t, _ in busy] == [5, 10, 15, 20]
    assert all(line.endswith(f"(100/s) in {t:.0f} batches") for t, line in busy)
    # first waiting line at the usual pace after the last message, then once a minute
    assert [t for t, _ in idle] == [25, 85, 145, 205]
    assert all(line == "ingest: 2000 messages so far, waiting for messages" for _, line in idle)

    # a message after the wait: back to rates at the usual pace
    result.messages["t"] += 1
    now[0] += 1
    reporter.progress(result)
    assert lines[-1][1].startswith("ingest: 2001 messages (")


def test_quiet_keeps_warnings_and_drops_the_rest() -> None:
    lines: list[str] = []
    result = IngestResult(messages={"t": 3}, seconds=1.0)
    quiet = IngestProgress(False, lines.append)
    quiet.note("following new topics: t")
    quiet.progress(result)
    quiet.warning("t: no typed instance tables")
    quiet.finished(result, failed=False)
    assert lines == ["ingest: warning: t: no typed instance tables"]
    shown = IngestProgress(True, lines.append)
    shown.note("following new topics: t")
    shown.finished(result, failed=False)
    assert lines[1] == "ingest: following new topics: t"
    assert lines[2].startswith("ingest: done, 3 messages in 1.0s (3/s), 0 to errors, 0 expired")
    # after a failure the caller prints the one error line: no summary
    shown.finished(result, failed=True)
    assert len(lines) == 3
