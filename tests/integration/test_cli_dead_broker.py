"""A dead broker is one error line: librdkafka's own log lines (one per connection retry,
written by the C library straight to stderr unless routed) never reach the user.

Run as a real process: CliRunner would not see what librdkafka writes to file descriptor 2.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("chdb")
pytest.importorskip("confluent_kafka")

EXAMPLE = Path(__file__).parents[2] / "examples" / "subscriptions.yaml"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens once the socket is closed


def test_ingest_against_a_closed_port_prints_one_error_line(tmp_path: Path) -> None:
    port = _closed_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("YANGKEY_KAFKA_LOG")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "ingest", "-s", str(EXAMPLE),
         "-b", f"127.0.0.1:{port}", "--embedded", str(tmp_path / "db")],
        check=False, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[:2000]
    assert lines[0].startswith(
        f"error: kafka://127.0.0.1:{port}: cannot connect to any of 127.0.0.1:{port} "
    ), lines
    assert done.stdout == ""
    # said at once (a TCP connect), not after librdkafka's metadata timeout (it was 19 s)
    assert time.monotonic() - started < 10
