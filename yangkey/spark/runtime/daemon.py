"""PySpark's worker daemon, made to die with the JVM that started it.

Spark starts ``python -m pyspark.daemon`` (here: ``spark.python.daemon.module`` names this
module), which moves itself into a process group of its own and forks one worker per task.
Killing the job's process group therefore missed them, and a JVM killed outright left them
running. Here the daemon watches its parent and kills its whole group (itself and every
worker) once the JVM is gone; on Linux each forked worker also asks the kernel for SIGKILL
when the daemon dies (``PR_SET_PDEATHSIG``: the daemon forks from its main thread, which
lives as long as the daemon does).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any

from pyspark import daemon

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.5


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the daemon's watchdog still takes the worker down


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL_SECONDS)
    os.killpg(os.getpgid(0), signal.SIGKILL)


_original_worker = daemon.worker


def _worker(sock: Any, authenticated: bool) -> int:
    _die_with_parent()
    return _original_worker(sock, authenticated)


def main() -> None:
    parent = os.getppid()
    # Imported once here, before any fork, instead of by every worker: importing the task
    # code is about 0.7 s of CPU, paid by each executor core's first task before. Nothing it
    # imports starts a thread, so forking after it stays safe.
    import yangkey.spark.tasks  # noqa: F401, PLC0415

    daemon.worker = _worker  # the daemon's fork loop looks the function up at each fork
    threading.Thread(target=_watch, args=(parent,), name="yangkey-jvm-watch", daemon=True).start()
    daemon.manager()


if __name__ == "__main__":
    main()
