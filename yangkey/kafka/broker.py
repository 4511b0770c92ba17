"""A real, single-node Apache Kafka broker (KRaft) that yangkey runs itself.

Why not a mock: the pipeline depends on broker behaviour that mocks get wrong — murmur2
partitioning seen by Java clients, transactions and ``read_committed``, log compaction of
current-state topics. So tests and ``yangkey kafka start`` run the genuine broker:
:class:`EmbeddedKafka` takes its jars from :mod:`yangkey.kafka.install` (a Kafka distribution
or the pinned download), formats a fresh KRaft log dir (standalone controller, random cluster
id), writes the settings of :mod:`yangkey.kafka.properties`, starts ``java kafka.Kafka`` in its
own process group and waits until an AdminClient gets metadata. An optional state file
(:mod:`yangkey.kafka.process`) lets a later, separate process find and stop it.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO

from yangkey.errors import BrokerError
from yangkey.kafka.install import KAFKA_VERSION, resolve_jars
from yangkey.kafka.java import TAIL_LINES, check_java, find_java, headline, tail
from yangkey.kafka.process import (
    LOG_NAME,
    STATE_FILE,
    BrokerState,
    broker_answers,
    parent_death_hook,
    remove_broker_files,
    remove_state,
    terminate,
    write_state,
)
from yangkey.kafka.properties import (
    LOG4J2,
    broker_properties,
    free_port,
    port_is_free,
    random_cluster_id,
    render_properties,
)

DEFAULT_HEAP = "512m"
"""Small enough to sit beside a Spark driver on a 2-core / 24 GiB box, ample for tests."""


class EmbeddedKafka:
    """A single-node KRaft Kafka broker in a subprocess, reachable on ``bootstrap``.

    Use as a context manager (``with EmbeddedKafka() as kafka: kafka.bootstrap``) or call
    :meth:`start` / :meth:`stop`. ``properties`` overrides any ``server.properties`` entry.
    ``kafka_home`` (else ``$KAFKA_HOME``) runs an unpacked Kafka distribution's jars instead of
    the pinned download; ``version`` then becomes the distribution's.
    With ``state_dir`` a ``broker.json`` there lets another process stop it
    (:func:`stop_recorded`); :meth:`detach` hands the broker over to that file entirely.

    Unless ``keep`` is set, the data dir (a fresh temp dir when none is given) is deleted on
    stop. A broker still running when the interpreter exits is stopped by an atexit hook,
    so a crashed test session does not leave JVMs behind; ``die_with_parent`` (Linux) also
    covers a session that is killed outright (the signal follows the *thread* that called
    :meth:`start`), but must stay off for a broker meant to outlive its starter (:meth:`detach`).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        controller_port: int = 0,
        properties: Mapping[str, object] | None = None,
        data_dir: Path | str | None = None,
        keep: bool = False,
        state_dir: Path | str | None = None,
        version: str = KAFKA_VERSION,
        heap: str = DEFAULT_HEAP,
        startup_timeout: float = 120.0,
        java: str | None = None,
        cache_dir: Path | None = None,
        kafka_home: Path | str | None = None,
        jvm_options: tuple[str, ...] = (),
        die_with_parent: bool = False,
    ) -> None:
        self.version = version
        self.keep = keep
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.properties: dict[str, object] = dict(properties or {})
        self.jvm_options = jvm_options
        self.die_with_parent = die_with_parent
        self._requested_port = port
        self._requested_controller_port = controller_port
        self._requested_data_dir = Path(data_dir) if data_dir is not None else None
        self._state_dir = Path(state_dir) if state_dir is not None else None
        self._java = java
        self._cache_dir = cache_dir
        self._kafka_home = kafka_home
        self._process: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None
        self._data_dir: Path | None = None
        self._owns_data_dir = False
        self._port = 0
        self._controller_port = 0
        self._properties_path: Path | None = None
        self._started_at = 0.0
        self.cluster_id = ""
        self.startup_seconds = 0.0

    # -- properties -----------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT``, for ``bootstrap.servers``."""
        if not self._port:
            raise BrokerError("not started", source="kafka broker")
        return f"127.0.0.1:{self._port}"

    @property
    def port(self) -> int:
        return self._port

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise BrokerError("not started", source="kafka broker")
        return self._data_dir

    @property
    def log_path(self) -> Path:
        """The broker's stdout/stderr (log4j2 console output)."""
        return self.data_dir / LOG_NAME

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except (OSError, BrokerError):
            return "(no broker log)"
        return tail(text, lines) or "(broker log is empty)"

    # -- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> EmbeddedKafka:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> EmbeddedKafka:
        """Install if needed, format, launch and wait until the broker serves metadata."""
        if self._process is not None:
            raise BrokerError(f"already started on {self.bootstrap}", source="kafka broker")
        started = time.monotonic()
        if self._state_dir is not None:
            recorded = BrokerState.read(self._state_dir)
            if recorded is not None and recorded.alive():
                raise BrokerError(
                    f"a broker is already running on {recorded.bootstrap} (pid {recorded.pid});"
                    " stop it first (`yangkey kafka stop`)",
                    source=str(self._state_dir / STATE_FILE),
                )
        libs, self.version = resolve_jars(
            self.version, home=self._kafka_home, cache_dir=self._cache_dir
        )
        java = find_java(self._java)
        check_java(java)
        if self._requested_port and not port_is_free(self._requested_port):
            raise BrokerError(
                f"port {self._requested_port} on 127.0.0.1 is already in use", source="kafka broker"
            )
        self._prepare_data_dir()
        try:
            # Free ports are only free until someone else binds them: retry on a clash.
            for attempt in range(3):
                self._launch(java, libs)
                try:
                    self._wait_ready()
                    break
                except _PortClash:
                    self._kill_now()
                    if attempt == 2 or self._requested_port or self._requested_controller_port:
                        raise BrokerError(
                            "the broker could not bind its ports:\n" + self.log_tail(),
                            source="kafka broker",
                        ) from None
        except BaseException:
            self._kill_now()
            self._cleanup_data_dir()
            raise
        self._started_at = time.time()
        self.startup_seconds = round(time.monotonic() - started, 2)
        atexit.register(self._atexit)
        if self._state_dir is not None:
            write_state(self._state_dir, self.state())
        return self

    def state(self) -> BrokerState:
        """This broker as a state file would record it."""
        if self._process is None or self._properties_path is None:
            raise BrokerError("not started", source="kafka broker")
        return BrokerState(
            pid=self._process.pid,
            bootstrap=self.bootstrap,
            data_dir=str(self.data_dir),
            log=str(self.log_path),
            properties=str(self._properties_path),
            version=self.version,
            keep=self.keep,
            owns_data_dir=self._owns_data_dir,
            started_at=self._started_at,
        )

    def wait(self) -> int:
        """Block until the broker process exits (``yangkey kafka start --foreground``)."""
        if self._process is None:
            raise BrokerError("not started", source="kafka broker")
        return self._process.wait()

    def detach(self) -> BrokerState:
        """Leave the broker running after this process exits; the state file now owns it."""
        if self._state_dir is None:
            raise BrokerError("detach needs a state_dir to record the broker in")
        if self.die_with_parent:
            raise BrokerError("started with die_with_parent: it cannot outlive this process")
        state = self.state()
        write_state(self._state_dir, state)
        atexit.unregister(self._atexit)
        if self._log_handle is not None:
            self._log_handle.close()  # the child keeps its own descriptor
            self._log_handle = None
        self._process = None
        return state

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after ``timeout``; then remove the data dir.

        Safe to call twice and on a broker that never started.
        """
        atexit.unregister(self._atexit)
        process = self._process
        if process is not None:
            terminate(process.pid, lambda: process.poll() is None, timeout)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            if self._state_dir is not None:
                remove_state(self._state_dir, process.pid)
        self._process = None
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        self._cleanup_data_dir()

    def _atexit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop(timeout=10.0)

    # -- internals ------------------------------------------------------------------------

    def _prepare_data_dir(self) -> None:
        if self._requested_data_dir is None:
            self._data_dir = Path(tempfile.mkdtemp(prefix="yangkey-kafka-"))
            self._owns_data_dir = True
            return
        data_dir = self._requested_data_dir.resolve()
        if (data_dir / "kraft" / "meta.properties").exists():
            raise BrokerError(
                "already holds a formatted Kafka log; remove it or pick another data dir",
                source=str(data_dir),
            )
        data_dir.mkdir(parents=True, exist_ok=True)
        self._data_dir = data_dir
        # A caller-chosen dir is the caller's: only its contents we created are removed.
        self._owns_data_dir = False

    def _cleanup_data_dir(self) -> None:
        if self._data_dir is not None and not self.keep:
            remove_broker_files(self._data_dir, owned=self._owns_data_dir)

    def _jvm(self, java: str, libs: Path, heap: str) -> list[str]:
        return [
            java,
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-XX:+ExplicitGCInvokesConcurrent",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.data_dir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.data_dir}",
            *self.jvm_options,
            "-cp",
            str(libs / "*"),  # the JVM expands the wildcard itself: no shell involved
        ]

    def _launch(self, java: str, libs: Path) -> None:
        data_dir = self.data_dir
        log_dir = data_dir / "kraft"
        shutil.rmtree(log_dir, ignore_errors=True)  # a previous attempt's format
        self._port = self._requested_port or free_port()
        self._controller_port = self._requested_controller_port or free_port()
        while self._controller_port == self._port:
            self._controller_port = free_port()
        props = broker_properties(
            port=self._port,
            controller_port=self._controller_port,
            log_dir=log_dir,
            overrides=self.properties,
        )
        self._properties_path = data_dir / "server.properties"
        self._properties_path.write_text(
            render_properties(props, f"generated by yangkey for Kafka {self.version}"),
            encoding="utf-8",
        )
        (data_dir / "log4j2.properties").write_text(LOG4J2, encoding="utf-8")
        self.cluster_id = random_cluster_id()
        format_command = [
            *self._jvm(java, libs, "256m"),
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            self.cluster_id,
            "--config",
            str(self._properties_path),
            "--standalone",
        ]
        try:
            formatted = subprocess.run(
                format_command, capture_output=True, text=True, timeout=120, check=False
            )
        except subprocess.TimeoutExpired as exc:
            reason = "formatting the KRaft log dir timed out"
            raise BrokerError(reason, source="kafka broker") from exc
        if formatted.returncode != 0:
            output = formatted.stdout + "\n" + formatted.stderr
            raise BrokerError(
                f"formatting the KRaft log dir failed (exit {formatted.returncode})"
                f" {headline(output)}\n{tail(output, 15)}",
                source="kafka broker",
            )
        if self._log_handle is not None:
            self._log_handle.close()
        self._log_handle = (data_dir / LOG_NAME).open("ab")
        try:
            self._process = subprocess.Popen(
                [*self._jvm(java, libs, self.heap), "kafka.Kafka", str(self._properties_path)],
                stdin=subprocess.DEVNULL,
                stdout=self._log_handle,
                stderr=subprocess.STDOUT,
                cwd=data_dir,
                start_new_session=True,  # own process group: Ctrl-C in a shell does not hit it
                # Runs between fork and exec; only a prepared ctypes call, so no Python lock
                # another thread could hold is needed there.
                preexec_fn=parent_death_hook() if self.die_with_parent else None,  # noqa: PLW1509
            )
        except OSError as exc:
            raise BrokerError(f"cannot run {java}: {exc}", source="kafka broker") from exc

    def _wait_ready(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = process.poll()
            if code is not None:
                tail = self.log_tail()
                if "Address already in use" in tail or "BindException" in tail:
                    raise _PortClash
                raise BrokerError(
                    f"Kafka exited with code {code} during startup {headline(tail)}\n"
                    f"log tail ({self.log_path}):\n{tail}",
                    source="kafka broker",
                )
            if broker_answers(self.bootstrap, timeout=2.0):
                return
            if time.monotonic() > deadline:
                raise BrokerError(
                    f"Kafka did not answer on {self.bootstrap} within"
                    f" {self.startup_timeout:.0f}s; log tail ({self.log_path}):\n{self.log_tail()}",
                    source="kafka broker",
                )
            time.sleep(0.2)

    def _kill_now(self) -> None:
        """Stop a broker that failed to come up, without waiting for a clean shutdown."""
        process = self._process
        self._process = None
        if process is not None:
            if process.poll() is None:
                terminate(process.pid, lambda: process.poll() is None, 5.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None


class _PortClash(Exception):
    """Internal: the broker lost the race for a port we picked; retry with new ones."""
