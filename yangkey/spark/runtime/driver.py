"""The driver JVM yangkey launches for a local run: its stderr read through a filter, and its
exit awaited when the run ends.

PySpark starts the JVM with stderr inherited, so what the JVM prints reaches the terminal
as is: on every start ``WARNING: Using incubator modules: jdk.incubator.vector`` (Spark 4
adds the module; the JVM has no switch for the warning), and after Ctrl-C the stack traces
of the work being cut off (``RejectedExecutionException`` from executors shutting down),
above yangkey's one "interrupted" line. :func:`launch` starts the gateway as PySpark would,
with stderr piped through :class:`StderrFilter`, which drops the incubator line always and,
once :func:`interrupted` was called, Java stack traces; everything else is passed on.

At the end, :func:`finish` closes the gateway's stdin (PySpark's JVM exits on EOF) and waits
for the JVM, so that it does not outlive ``yangkey produce`` by its shutdown hooks' seconds.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import IO, Any

INCUBATOR = re.compile(rb"^WARNING: Using incubator modules: ")
#: A Java exception's first line, and the lines of its stack trace.
_TRACE_START = re.compile(
    rb"^(?:Exception in thread \".*\" )?(?:[\w$]+\.)+[\w$]*(?:Exception|Error)(?::.*)?$"
)
_TRACE_LINE = re.compile(rb"^(?:\s+at |\s+\.\.\. \d+ more|Caused by: |\s*Suppressed: )")
FINISH_TIMEOUT = 10.0

_state: dict[str, Any] = {"process": None, "filter": None}


class StderrFilter:
    """Copies the JVM's stderr to ours, line by line, without the lines :data:`INCUBATOR`
    matches and, once :meth:`interrupt` was called, without Java stack traces."""

    def __init__(self, source: IO[bytes], target_fd: int = 2) -> None:
        self.source = source
        self.target_fd = target_fd
        self.interrupted = threading.Event()
        self.dropped = 0
        self.thread = threading.Thread(target=self._copy, name="yangkey-jvm-stderr", daemon=True)

    def start(self) -> StderrFilter:
        self.thread.start()
        return self

    def interrupt(self) -> None:
        self.interrupted.set()

    def keep(self, line: bytes, in_trace: bool) -> tuple[bool, bool]:
        """(whether ``line`` is shown, whether a trace goes on after it)."""
        bare = line.rstrip(b"\r\n")
        if INCUBATOR.match(bare):
            return False, False
        if not self.interrupted.is_set():
            return True, False
        if _TRACE_START.match(bare) or (in_trace and _TRACE_LINE.match(bare)):
            return False, True
        return True, False

    def _copy(self) -> None:
        in_trace = False
        with contextlib.suppress(OSError, ValueError):
            for line in iter(self.source.readline, b""):
                shown, in_trace = self.keep(line, in_trace)
                if shown:
                    os.write(self.target_fd, line)
                else:
                    self.dropped += 1


def launch(conf: Any) -> Any:
    """PySpark's gateway for ``conf`` (a ``SparkConf``) with the JVM's stderr filtered, set as
    the one ``SparkContext`` uses; None when a gateway exists already (a session of this
    process, or spark-submit's)."""
    import importlib  # noqa: PLC0415
    from subprocess import PIPE  # noqa: PLC0415

    from pyspark import SparkContext  # noqa: PLC0415

    if getattr(SparkContext, "_gateway", None) is not None:
        return None
    java_gateway: Any = importlib.import_module("pyspark.java_gateway")  # untyped
    gateway = java_gateway.launch_gateway(conf, popen_kwargs={"stderr": PIPE})
    process = getattr(gateway, "proc", None)
    if process is not None and process.stderr is not None:
        _state["filter"] = StderrFilter(process.stderr).start()
        _state["process"] = process
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)
    return gateway


def interrupted() -> None:
    """The run is being stopped (Ctrl-C, SIGTERM): from now on the JVM's stack traces are the
    interruption itself, not news."""
    stderr_filter = _state["filter"]
    if stderr_filter is not None:
        stderr_filter.interrupt()


def finish(timeout: float = FINISH_TIMEOUT) -> bool:
    """After ``SparkSession.stop()``: end the JVM :func:`launch` started (EOF on its stdin,
    then SIGKILL after ``timeout``) and forget its gateway; True if it exited by itself."""
    process = _state["process"]
    if process is None:
        return True
    from pyspark import SparkContext  # noqa: PLC0415

    _state["process"] = None
    context: Any = SparkContext
    with contextlib.suppress(Exception):
        context._gateway.shutdown()
    context._gateway = None
    context._jvm = None
    with contextlib.suppress(OSError):
        process.stdin.close()
    try:
        process.wait(timeout)
        clean = True
    except Exception:  # subprocess.TimeoutExpired: it hangs in a shutdown hook
        process.kill()
        process.wait()
        clean = False
    stderr_filter = _state["filter"]
    if stderr_filter is not None:
        stderr_filter.thread.join(1.0)  # its last lines, before ours
        _state["filter"] = None
    return clean
