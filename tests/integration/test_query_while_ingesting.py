"""Querying an embedded directory while ``yangkey ingest --follow`` holds it (issue 34 item 2).

chdb lets one process open a data directory; the follower answers ``state``, ``history`` and
``sql`` of other processes over ``<dir>/yangkey.sock``, in the same formats as a direct run,
and keeps ingesting meanwhile. Where nobody answers, one ``error:`` line says who holds it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from factories import unique_name
from test_ingest_crash import Ingest, produce_all, wait_until, write_subscriptions

from yangkey.catalog import load_catalog
from yangkey.demo.sample import generate
from yangkey.kafka.config import ensure_topics
from yangkey.messages import KeyedMessage, Rejection
from yangkey.producer import MessageBuilder
from yangkey.spark.preflight import topic_specs


def yangkey(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "yangkey.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def keyed(rounds: int, seed: int, catalog: Any) -> list[KeyedMessage]:
    builder = MessageBuilder(catalog)
    messages: list[KeyedMessage] = []
    data = generate(nodes=2, interfaces=3, rounds=rounds, seed=seed)
    for index, raw in enumerate(data.records):
        built = builder.build(raw, f"sample:{index}")
        if not isinstance(built, Rejection):
            messages.extend(built)
    return messages


def stored(directory: Path) -> int:
    result = yangkey(
        "sql",
        "--embedded",
        str(directory),
        "--format",
        "json",
        "SELECT count() AS n FROM yangkey.history",
    )
    assert result.returncode == 0, result.stderr
    return int(json.loads(result.stdout)["n"])


def test_state_history_sql_answered_by_the_follower_while_it_ingests(
    kafka_broker: Any, tmp_path: Path, processes: list[Ingest]
) -> None:
    bootstrap: str = kafka_broker.bootstrap
    prefix = unique_name("qwi")
    subscriptions = write_subscriptions(tmp_path, prefix)
    catalog = load_catalog(subscriptions)
    ensure_topics(bootstrap, topic_specs(catalog, None))
    first = keyed(1, 1, catalog)
    produce_all(bootstrap, first)
    directory = tmp_path / "ch"
    ingest = Ingest(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "ingest",
            "--subscriptions",
            str(subscriptions),
            "--bootstrap",
            bootstrap,
            "--embedded",
            str(directory),
            "--consumer-group",
            f"{prefix}-group",
            "--follow",
        ],
        tmp_path / "ingest.log",
    )
    processes.append(ingest)
    wait_until(lambda: "waiting for messages" in ingest.output(), 180, "the idle report", ingest)
    assert "answering `yangkey state|history|sql" in ingest.output()
    sock = directory / "yangkey.sock"
    assert sock.is_socket()
    assert sock.stat().st_mode & 0o777 == 0o600
    # the first batch stored (idle is reported before the consumer's first poll, too)
    wait_until(lambda: stored(directory) == len(first), 120, "the first batch", ingest)

    # state: every key of the first batch, as JSON lines and as TSV (piped, no --format)
    keys = {m.key.decode() for m in first if m.key is not None}
    state = yangkey("state", "--embedded", str(directory), "--format", "json")
    assert state.returncode == 0, state.stderr
    rows = [json.loads(line) for line in state.stdout.splitlines()]
    assert {row["message_key"] for row in rows} == keys
    tsv = yangkey("state", "--embedded", str(directory))
    assert tsv.returncode == 0, tsv.stderr
    assert len(tsv.stdout.splitlines()) == len(keys) + 1  # a header line, then one per key
    assert "Cannot lock" not in tsv.stderr + state.stderr

    # history of one node (compared with a direct run below)
    node = rows[0]["node"]
    history_args = ("history", "--embedded", str(directory), "--node", node, "--format", "json")
    history = yangkey(*history_args)
    assert history.returncode == 0, history.stderr
    lines = [json.loads(line) for line in history.stdout.splitlines()]
    assert lines and {line["node"] for line in lines} == {node}

    # sql: the count, and a bad query is one error line while ingest goes on
    assert stored(directory) == len(first)
    bad = yangkey("sql", "--embedded", str(directory), "SELECT nonsense FROM yangkey.history")
    assert bad.returncode == 1
    assert bad.stderr.startswith("error: embedded ClickHouse at ")
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr

    # it keeps ingesting: a second batch shows up in the answers
    second = keyed(2, 2, catalog)
    produce_all(bootstrap, second)
    deadline = time.monotonic() + 60
    while stored(directory) < len(first) + len(second):
        assert ingest.running(), ingest.output()
        assert time.monotonic() < deadline, ingest.output()
        time.sleep(0.5)
    through_follower = yangkey("state", "--embedded", str(directory), "--format", "json")
    assert through_follower.returncode == 0
    history_through_follower = yangkey(*history_args)
    assert history_through_follower.returncode == 0

    ingest.process.send_signal(signal.SIGTERM)
    assert ingest.wait(60) == 0, ingest.output()
    assert not sock.exists()  # removed on the way out
    # the same query opening the directory itself prints the same rows
    direct = yangkey("state", "--embedded", str(directory), "--format", "json")
    assert direct.returncode == 0, direct.stderr
    assert direct.stdout.splitlines() == through_follower.stdout.splitlines()
    assert yangkey(*history_args).stdout == history_through_follower.stdout


HOLDER = """
import sys, time
from chdb import session
s = session.Session(sys.argv[1])
s.query("CREATE DATABASE IF NOT EXISTS yangkey")
print("ready", flush=True)
time.sleep(300)
"""


def test_a_directory_held_by_another_process_is_one_error_line(tmp_path: Path) -> None:
    """A process that is not a yangkey ingest holds the directory (here plain chdb): the query
    commands say who, in one line, instead of chdb's raw lock exception; a stale socket file
    left there (a killed ingest) is named too."""
    directory = tmp_path / "ch"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        result = yangkey("state", "--embedded", str(directory))
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"error: embedded ClickHouse at {directory}: in use by pid ")
        assert str(holder.pid) in lines[0]
        assert "does not answer queries" in lines[0]
        assert "DB::Exception" not in result.stderr

        # a socket file nobody listens on (what a SIGKILLed ingest leaves)
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(directory / "yangkey.sock"))
        stale.close()
        result = yangkey("sql", "--embedded", str(directory), "SELECT 1")
        assert result.returncode == 1
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "yangkey.sock does not answer" in result.stderr
    finally:
        holder.kill()
        holder.wait(30)
    # the holder gone, the stale socket is no obstacle: the command opens the directory
    result = yangkey("sql", "--embedded", str(directory), "--format", "json", "SELECT 1 AS one")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"one": 1}
    assert os.path.exists(directory / "yangkey.sock")  # only an ingest removes it
