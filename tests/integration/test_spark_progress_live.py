"""Live progress from running Spark tasks: executors' Python workers report to the driver
while they read, not only when a task ends."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from pyspark.sql import SparkSession

from yangkey.spark.progress import Progress, reporting
from yangkey.spark.source.splitting import RawRecord

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "subscriptions.yaml"
FIXTURE = REPO / "tests" / "fixtures" / "notifications" / "telemetry-interfaces.json"
LINE = re.compile(r"^(\d+) of ~20 records \(\d+%\), [\d,]+ records/s, ETA \w+, (\d)/2 tasks$")


def test_progress_counts_records_of_tasks_still_running(spark: SparkSession) -> None:
    lines: list[str] = []
    with Progress(spark, lines.append, total_units=20, units_are_records=True) as progress:
        channel = progress.channel
        assert channel is not None and channel[0] == "127.0.0.1"

        def slow_task(index: int, _: Iterable[int]) -> Iterator[int]:
            def records() -> Iterator[RawRecord]:
                for number in range(10):
                    time.sleep(0.25)  # 2.5 s per task: several progress lines while it runs
                    yield b"{}", f"slow:{number}"

            yield sum(1 for _ in reporting(records(), channel, index, 0, lambda r: 1))

        rdd = spark.sparkContext.parallelize([0, 1], 2)
        assert rdd.mapPartitionsWithIndex(slow_task).collect() == [10, 10]
    parsed = [(int(m[1]), int(m[2])) for line in lines if (m := LINE.match(line))]
    assert parsed, lines
    # Records counted while no task had finished: the figures come from running tasks.
    assert any(0 < records < 20 and done < 2 for records, done in parsed), lines


def test_ctrl_c_stops_a_running_stream_in_one_line(tmp_path: Path) -> None:
    # One file per micro-batch and no trigger interval: batches run back to back, so the
    # signal lands in a running batch or between two; both must end the same way.
    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(40):
        (inputs / f"part-{number:02d}.jsonl").write_bytes(FIXTURE.read_bytes())
    command = [sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions",
               str(EXAMPLE), "--input", str(inputs), "--dry-run", "--master", "local[1]",
               "--stream", "--checkpoint", str(tmp_path / "ck"), "--max-per-trigger", "1",
               "--layout", "document"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               text=True, start_new_session=True)
    lines: list[str] = []

    def drain() -> None:
        assert process.stderr is not None
        lines.extend(process.stderr)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while not any(line.startswith("batch 1:") for line in lines):
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        code = process.wait(120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    reader.join(10)
    text = "".join(lines)
    assert code == 128 + signal.SIGINT, text
    assert lines[-1].startswith("interrupted"), text
    for noise in ("Traceback", "py4j", "Exception", "ERROR"):
        assert noise not in text, text
