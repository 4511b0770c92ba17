"""The driver JVM's stderr filter (yangkey.spark.runtime.driver): the incubator warning never
shows, Java stack traces only until the run is interrupted, everything else always."""

from __future__ import annotations

import os

from yangkey.spark.runtime.driver import StderrFilter

TRACE = (
    b"java.util.concurrent.RejectedExecutionException: Task Future(<not completed>) rejected"
    b" from java.util.concurrent.ThreadPoolExecutor@5e1f [Shutting down, pool size = 1]\n"
    b"\tat java.base/java.util.concurrent.ThreadPoolExecutor.reject(ThreadPoolExecutor.java:2065)\n"
    b"\tat scala.concurrent.impl.Promise$Transformation.submitWithValue(Promise.scala:429)\n"
    b"Caused by: java.lang.InterruptedException\n"
    b"\t... 12 more\n"
)


def run(before: bytes, after: bytes = b"", *, interrupt: bool = False) -> bytes:
    """What reaches our stderr when the JVM writes ``before``, then (``interrupt``: once the
    run was interrupted) ``after``."""
    jvm_read, jvm_write = os.pipe()
    out_read, out_write = os.pipe()
    shown = b""
    with os.fdopen(jvm_read, "rb") as source:
        stderr_filter = StderrFilter(source, out_write).start()
        os.write(jvm_write, before)
        if interrupt:
            while len(shown) < len(before):  # copied as it was, before the interruption
                shown += os.read(out_read, 65536)
            stderr_filter.interrupt()
        os.write(jvm_write, after)
        os.close(jvm_write)
        stderr_filter.thread.join(5)
    os.close(out_write)
    with os.fdopen(out_read, "rb") as rest:
        return shown + rest.read()


def test_the_incubator_warning_is_dropped_and_the_rest_kept() -> None:
    shown = run(b"WARNING: Using incubator modules: jdk.incubator.vector\nERROR x\n")
    assert shown == b"ERROR x\n"


def test_traces_show_until_the_run_is_interrupted() -> None:
    assert run(TRACE) == TRACE  # a failure of a running job is news
    shown = run(TRACE, TRACE + b"a line that is not a trace\n", interrupt=True)
    assert shown == TRACE + b"a line that is not a trace\n"
