"""Live progress of a batch run (the tasks' reports, the driver's line) and signals while
Spark starts (no Spark here)."""

from __future__ import annotations

import os
import signal
import socket
import time
from typing import Any, cast

import pytest

from yangkey.spark import progress as progress_module
from yangkey.spark.progress import REPORT, Progress, every, reporting
from yangkey.spark.runtime.stopping import Stopper


def _progress(
    total_units: int = 0, units_are_records: bool = False, started: float | None = 0.0
) -> Progress:
    return Progress(cast(Any, None), None, total_units, units_are_records, started)


def _report(progress: Progress, task: int, attempt: int, records: int, units: int) -> bytes:
    return REPORT.pack(progress.token, task, attempt, records, units)


def test_line_counts_running_tasks_with_total_rate_and_eta() -> None:
    progress = _progress(total_units=4000, started=100.0)  # file ranges: bytes
    assert progress.line(0.0, 0, 2) is None  # nothing reported yet: keep "starting Spark"
    progress.receive(_report(progress, 0, 0, 10, 500), now=100.0)
    progress.receive(_report(progress, 1, 0, 10, 500), now=100.5)
    # 1,000 of 4,000 bytes in 2 s: 20 records are a quarter, 3,000 bytes left take 6 s.
    assert progress.line(102.0, 0, 2) == (
        "20 of ~80 records (25%), 10 records/s, ETA 6s, 0/2 tasks"
    )


def test_the_rate_counts_from_the_run_start_not_the_first_report() -> None:
    # A task's first datagram comes half a second into its work: counted from that
    # datagram, the first line said 24,149,000 records/s.
    progress = _progress(total_units=109_000_000, started=10.0)
    progress.receive(_report(progress, 0, 0, 24_149, 8_800_000), now=11.5)
    assert progress.line(11.5, 0, 2) == (
        "24,149 of ~299,118 records (8%), 16,099 records/s, ETA 17s, 0/2 tasks"
    )


def test_no_rate_before_the_run_has_a_start() -> None:
    progress = _progress(total_units=1000, started=None)
    progress.receive(_report(progress, 0, 0, 10, 100), now=5.0)
    assert progress.line(5.0, 0, 1) == "10 of ~100 records (10%), 0/1 tasks"


def test_raw_topic_total_is_its_offsets() -> None:
    progress = _progress(total_units=1_000_000, units_are_records=True)
    progress.receive(_report(progress, 3, 0, 250_000, 250_000), now=0.0)
    line = progress.line(125.0, 1, 4)
    assert line == ("250,000 of ~1,000,000 records (25%), 2,000 records/s, ETA 6m15s, 1/4 tasks")


def test_a_retry_replaces_the_failed_attempt_and_strays_are_ignored() -> None:
    progress = _progress()
    progress.receive(_report(progress, 0, 0, 900, 900), now=0.0)
    progress.receive(_report(progress, 0, 1, 100, 100), now=1.0)  # the retry starts over
    progress.receive(_report(progress, 0, 0, 950, 950), now=1.5)  # the old attempt, late
    progress.receive(REPORT.pack(b"12345678", 1, 0, 10**6, 10**6), now=2.0)  # another run
    progress.receive(b"garbage", now=2.0)
    assert progress.line(10.0, 0, 1) == "100 records, 10 records/s, 0/1 tasks"


def test_tasks_report_over_udp_while_they_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "REPORT_EVERY", 0.0)  # a datagram per record
    driver = _progress()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(5)
        channel = ("127.0.0.1", sock.getsockname()[1], driver.token)
        records = [(b"abc", "f:1"), (b"defgh", "f:2"), (b"", "f:3")]
        seen = []
        for record in reporting(iter(records), channel, 7, 2, lambda r: len(r[0]) + 1):
            seen.append(record)
            driver.receive(sock.recv(64), now=0.0)
            assert (
                driver.line(1.0, 0, 1) == f"{len(seen)} records, {len(seen)} records/s, 0/1 tasks"
            )
        assert seen == records
        final = REPORT.unpack(sock.recv(64))  # sent when the records run out
    assert final == (driver.token, 7, 2, 3, 4 + 6 + 1)


def test_no_channel_passes_records_through() -> None:
    records = [(b"x", "f:1")]
    assert list(reporting(records, None, 0, 0, len)) == records


def test_every_throttles_lines_for_a_pipe() -> None:
    clock = iter([0.0, 1.0, 4.9, 5.0, 6.0, 10.5])
    lines: list[str] = []
    update = every(5.0, lines.append, lambda: next(clock))
    for n in range(6):
        update(f"line {n}")
    assert lines == ["line 0", "line 3", "line 5"]


def test_stopper_takes_sigint_back_from_the_spark_context() -> None:
    original = signal.getsignal(signal.SIGINT)
    stopper = Stopper()
    with stopper.installed():
        ours = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as SparkContext does
        stopper.reclaim()
        assert signal.getsignal(signal.SIGINT) == ours
    assert signal.getsignal(signal.SIGINT) == original
    stopper.reclaim()  # not installed: leaves the handler alone
    assert signal.getsignal(signal.SIGINT) == original


def test_a_signal_while_spark_starts_waits_for_it() -> None:
    stopper = Stopper()
    with stopper.installed():
        stopper.starting = True
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt into the JVM's start
        time.sleep(0.1)
        assert stopper.signum == signal.SIGINT
        stopper.starting = False
    with pytest.raises(KeyboardInterrupt), Stopper().installed():
        os.kill(os.getpid(), signal.SIGINT)  # nothing started: interrupt at once
        time.sleep(1)
