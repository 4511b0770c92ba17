"""A producer run's log file: what Spark and the Kafka clients say beyond yangkey's own lines.

A fault that ends a run used to print its ``error:`` line after a hundred lines of Spark's
log, a task's Python traceback and the Java stack around it, and every retry of every
librdkafka client. Now the terminal keeps yangkey's lines (the run id and this file, warnings,
progress, the summary or the one ``error:`` line, last), and the rest goes to
``$XDG_STATE_HOME/yangkey/logs/produce-<time>-<run id>.log``: the log4j log of the driver
JVM yangkey starts (at ``--spark-log-level``; a failed task's traceback is in it) and every
librdkafka line of the driver and of its local Spark workers
(:func:`yangkey.kafka.logs.log_to_file`). The newest :data:`KEPT` logs are kept.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from yangkey.dirs import user_state_home

KEPT = 20
PROPERTY = "yangkey.run.log"
"""The JVM system property naming the file (the log4j2 config reads it)."""


def log_dir() -> Path:
    return user_state_home() / "logs"


def new_run_log(run_id: str, directory: Path | None = None) -> Path | None:
    """A new, empty log file for run ``run_id`` (None if the directory is not writable: the
    run goes on and logs as before); the oldest beyond :data:`KEPT` are removed."""
    directory = directory or log_dir()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    path = directory / f"produce-{stamp}-{run_id}.log"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        older = sorted(directory.glob("produce-*.log"), key=lambda p: p.stat().st_mtime)
        for stale in older[: max(0, len(older) - (KEPT - 1))]:
            stale.unlink()
        path.touch()
    except OSError:
        return None
    return path


def where(path: Path | None) -> str:
    """``; details in PATH`` for an error line, when the log holds anything."""
    with contextlib.suppress(OSError):
        if path is not None and path.stat().st_size:
            return f"; details in {path}"
    return ""
