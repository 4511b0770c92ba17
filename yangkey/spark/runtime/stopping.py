"""Ctrl-C and SIGTERM without py4j tracebacks.

Python runs signal handlers in the main thread, which is usually blocked in a py4j call
(``awaitTermination``, ``collect``): a ``KeyboardInterrupt`` raised there tears the call
apart and py4j logs the traceback. The :class:`Stopper` only records the signal and stops
the work from a helper thread instead (the streaming query, or the batch's Spark jobs), so
the blocked call returns normally; a second signal ends the process at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

from yangkey.spark.runtime import driver

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopper:
    def __init__(self) -> None:
        self.signum: int | None = None
        self.session: Any = None
        """The SparkSession whose jobs a signal cancels (until a stream has its query)."""
        self.query: Any = None
        """Stream: the StreamingQuery a signal stops."""
        self.starting = False
        """Spark is starting: a signal waits for it to be up (then the run ends at once)."""
        self._installed = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[Stopper]:
        """The handlers for SIGINT and SIGTERM while the block runs (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {sig: signal.signal(sig, self._handle) for sig in _SIGNALS}
        self._installed = True
        try:
            yield self
        finally:
            self._installed = False
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def reclaim(self) -> None:
        """Take SIGINT back from the SparkContext that just started: its own handler cancels
        the jobs and raises KeyboardInterrupt into the blocked py4j call, which is what this
        class exists to avoid."""
        if self._installed and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._handle)

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None:
            os._exit(128 + signum)  # asked twice: do not wait for Spark
        self.signum = signum
        if self.query is None and self.session is None:
            if self.starting:
                return  # interrupting the JVM's start-up would leave py4j half-way
            raise KeyboardInterrupt  # no Spark call under way yet
        threading.Thread(target=self._stop, name="yangkey-stop", daemon=True).start()

    def _stop(self) -> None:
        driver.interrupted()  # the JVM's traces from here on are the interruption itself
        with contextlib.suppress(Exception):
            if self.session is not None:
                # What Spark logs from here on is the interruption itself (a broadcast cut off
                # half-way, a cancelled stage): noise after "interrupted".
                self.session.sparkContext.setLogLevel("OFF")
            if self.query is not None:
                self.query.stop()
            elif self.session is not None:
                self.session.sparkContext.cancelAllJobs()
