"""What ``yangkey produce`` leaves on the terminal (issue 34 item 7): no JVM incubator warning,
and Ctrl-C in the middle of a run ends with the one "interrupted" line (no Java stack
traces of the work cut off) and no JVM left behind once the command has returned."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from factories import unique_name
from test_ingest_crash import write_subscriptions

from yangkey.demo.sample import generate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def session_processes(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def test_ctrl_c_on_produce_is_one_line_and_leaves_no_jvm(kafka_broker: Any, tmp_path: Path) -> None:
    prefix = unique_name("term")
    subscriptions = write_subscriptions(tmp_path, prefix)
    data = tmp_path / "in.jsonl"
    # Long enough to be interrupted: a task reports its first progress after half a second,
    # and with the native key pass 23k records are keyed sooner than that (seen twice in CI:
    # exit 0, no progress line to answer). The same rounds 16 times over: ~365k records,
    # seconds per task.
    records = generate(nodes=400, interfaces=10, rounds=40, seed=3).records
    data.write_bytes(b"".join(record.rstrip(b"\n") + b"\n" for record in records) * 16)
    command = [
        sys.executable, "-m", "yangkey.cli", "produce", "--subscriptions", str(subscriptions),
        "--input", str(data), "--bootstrap", kafka_broker.bootstrap, "--create-topics",
        "--master", "local[2]", "--run-id", prefix,
    ]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    # its own session, as a terminal's foreground job: Ctrl-C goes to the whole group
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    lines: list[str] = []

    def drain() -> None:
        assert process.stderr is not None
        lines.extend(process.stderr)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        # a progress line after "starting Spark…": the tasks run
        while not any("records" in line for line in lines):
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            time.sleep(0.1)
        assert len(session_processes(process.pid)) >= 2, "the driver and its JVM"
        os.killpg(process.pid, signal.SIGINT)
        code = process.wait(120)
        left = session_processes(process.pid)  # right after the command returned
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    reader.join(10)
    text = "".join(lines)
    assert code == 128 + signal.SIGINT, text
    assert lines[-1].startswith(f"interrupted (run {prefix}:"), text
    assert "WARNING: Using incubator modules" not in text
    for noise in ("Exception", "\tat ", "Traceback", "py4j"):
        assert noise not in text, text
    assert left == [], f"still running after the exit: {left}"
