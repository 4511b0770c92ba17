"""A real, single-node Apache Kafka broker (KRaft) that yangkey installs and runs itself.

Why not a mock: the pipeline depends on broker behaviour that mocks get wrong — murmur2
partitioning seen by Java clients, transactions and ``read_committed``, log compaction of
current-state topics. So tests and ``yangkey kafka start`` run the genuine broker:

1. :func:`install_kafka` resolves ``org.apache.kafka:kafka_2.13`` and a log4j2 backend from
   Maven Central with ``mvn dependency:copy-dependencies`` into
   ``$YANGKEY_CACHE/kafka-<version>/libs`` (default ``~/.cache/yangkey``). A marker file makes
   it a no-op once complete; a file lock serialises concurrent installs (parallel test runs).
2. :class:`EmbeddedKafka` formats a fresh KRaft log dir (standalone controller, random
   cluster id), writes ``server.properties`` with listeners on 127.0.0.1 only and settings
   that make a one-node broker behave (replication factor 1 for internal topics, compaction
   that runs within a second or two), starts ``java kafka.Kafka`` in its own process group
   and waits until an AdminClient gets metadata.
3. An optional state file (``<state_dir>/broker.json``) lets a later, separate process find
   and stop the broker (``yangkey kafka stop``).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from yangkey.errors import BrokerError

KAFKA_VERSION = "4.3.1"
"""Newest Kafka 4.x whose whole runtime resolves from Maven Central (4.x brokers need Java 17+).

4.4.0 is listed there, but its ``kafka-tools-api`` jar could not be fetched when this was pinned.
"""
SCALA_VERSION = "2.13"
LOG4J_VERSION = "2.24.3"
"""log4j2 is Kafka 4's logging backend; its jars are not dependencies of ``kafka_2.13``."""
SLF4J_VERSION = "1.7.36"
"""Kafka 4 compiles against slf4j 1.7; pinning it keeps ``log4j-slf4j-impl`` the binding."""
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
"""Pinned: Maven 3.8's built-in default (2.8) is old and its version depends on the Maven."""
MIN_JAVA = 17
DEFAULT_HEAP = "512m"
"""Small enough to sit beside a Spark driver on a 2-core / 24 GiB box, ample for tests."""
STATE_FILE = "broker.json"
_MARKER = "install.json"
_LOG_NAME = "broker.log"
_TAIL_LINES = 40


# --------------------------------------------------------------------------- install


def cache_root() -> Path:
    """Where yangkey caches downloads: ``$YANGKEY_CACHE``, else the XDG cache dir."""
    explicit = os.environ.get("YANGKEY_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "yangkey"


def kafka_home(version: str = KAFKA_VERSION, cache_dir: Path | None = None) -> Path:
    """``<cache>/kafka-<version>``: one directory per version so upgrades never mix jars."""
    return (cache_dir or cache_root()) / f"kafka-{version}"


def installed_jars(version: str = KAFKA_VERSION, cache_dir: Path | None = None) -> Path | None:
    """The ``libs`` directory if a previous install completed and no jar went missing."""
    home = kafka_home(version, cache_dir)
    marker = home / _MARKER
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        jars = [str(name) for name in recorded["jars"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    libs = home / "libs"
    if jars and all((libs / name).is_file() for name in jars):
        return libs
    return None


def find_maven() -> str:
    """``mvn`` from ``$MAVEN_HOME``/``$M2_HOME`` or the PATH, else a clear error."""
    for variable in ("MAVEN_HOME", "M2_HOME"):
        home = os.environ.get(variable)
        if home and (Path(home) / "bin" / "mvn").is_file():
            return str(Path(home) / "bin" / "mvn")
    found = shutil.which("mvn")
    if found is None:
        raise BrokerError(
            "maven (mvn) not found on PATH: install Maven 3.6+ (e.g. `apt-get install maven`)"
            " or set MAVEN_HOME; it is needed once to fetch Kafka's jars from Maven Central",
            source="kafka install",
        )
    return found


def _pom(version: str) -> str:
    """A throwaway project whose only purpose is its dependency list."""
    deps = [
        ("org.apache.kafka", f"kafka_{SCALA_VERSION}", version),
        ("org.slf4j", "slf4j-api", SLF4J_VERSION),
        ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
        ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
        ("org.apache.logging.log4j", "log4j-api", LOG4J_VERSION),
    ]
    body = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.yangkey.generated</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
{body}
  </dependencies>
</project>
"""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


_JAVA_EXCEPTION = re.compile(r"\b(?:[\w$]+\.)*([\w$]+(?:Exception|Error)): (.+)")


def _headline(text: str) -> str:
    """The first Java exception in a log, e.g. ``ConfigException: Invalid value …``.

    Put before the log tail in errors, so the cause is readable without scrolling through
    a stack trace.
    """
    match = _JAVA_EXCEPTION.search(_ANSI.sub("", text))
    return f"{match.group(1)}: {match.group(2).strip()}" if match else ""


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    """The last lines of a tool's output, without the colour codes Maven emits anyway."""
    kept = [line for line in _ANSI.sub("", text).rstrip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock so two test sessions never install into the same dir."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_kafka(
    version: str = KAFKA_VERSION,
    *,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    timeout: float = 900.0,
) -> Path:
    """Resolve Kafka's runtime jars into the cache and return the ``libs`` directory.

    Idempotent: returns at once when the marker file says a previous run completed. Jars are
    copied into a temp dir next to ``libs`` and renamed into place, so an interrupted run
    never leaves a half-filled ``libs`` that looks complete.
    """
    ready = installed_jars(version, cache_dir)
    if ready is not None:
        return ready
    say = progress or (lambda _message: None)
    home = kafka_home(version, cache_dir)
    with _locked(home / ".install.lock"):
        ready = installed_jars(version, cache_dir)  # another process may have finished
        if ready is not None:
            return ready
        mvn = find_maven()
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=".install-", dir=home))
        try:
            (work / "pom.xml").write_text(_pom(version), encoding="utf-8")
            out = work / "libs"
            say(f"resolving org.apache.kafka:kafka_{SCALA_VERSION}:{version} from Maven Central")
            command = [
                mvn,
                "-B",
                "-q",
                "-U",  # retry artifacts a failed earlier attempt left cached as "not found"
                "-Dstyle.color=never",
                "-f",
                str(work / "pom.xml"),
                f"{DEPENDENCY_PLUGIN}:copy-dependencies",
                f"-DoutputDirectory={out}",
                "-DincludeScope=runtime",
            ]
            try:
                result = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    cwd=work,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise BrokerError(
                    f"mvn did not finish within {timeout:.0f}s (is Maven Central reachable?)",
                    source="kafka install",
                ) from exc
            if result.returncode != 0:
                raise BrokerError(
                    f"mvn failed (exit {result.returncode}) resolving Kafka {version}:\n"
                    + _tail(result.stdout + "\n" + result.stderr, 25),
                    source="kafka install",
                )
            jars = sorted(path.name for path in out.glob("*.jar"))
            wanted = (f"kafka_{SCALA_VERSION}-{version}.jar", f"log4j-core-{LOG4J_VERSION}.jar")
            missing = [name for name in wanted if name not in jars]
            if missing:
                raise BrokerError(
                    f"mvn succeeded but did not produce {', '.join(missing)}",
                    source="kafka install",
                )
            libs = home / "libs"
            if libs.exists():
                shutil.rmtree(libs)  # incomplete leftovers: the marker was missing or stale
            out.rename(libs)
            seconds = round(time.monotonic() - started, 1)
            marker = {"version": version, "jars": jars, "seconds": seconds, "at": time.time()}
            (home / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
            say(f"{len(jars)} jars in {libs} ({seconds}s)")
            return libs
        finally:
            shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------- java


def find_java(java: str | None = None) -> str:
    """An explicit path, ``$JAVA_HOME/bin/java`` or ``java`` on the PATH."""
    if java:
        return java
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise BrokerError(
            f"java not found: install a JDK {MIN_JAVA}+ (e.g. `apt-get install openjdk-17-jre`)"
            " or set JAVA_HOME",
            source="kafka broker",
        )
    return found


@lru_cache(maxsize=8)
def java_major_version(java: str) -> int:
    """The feature release of a ``java`` binary (``1.8`` → 8, ``17.0.15`` → 17)."""
    try:
        result = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrokerError(f"cannot run {java} -version: {exc}", source="kafka broker") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    if match is None:
        raise BrokerError(
            f"cannot read the version of {java}: {_tail(result.stderr, 3)}", source="kafka broker"
        )
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def _check_java(java: str) -> None:
    major = java_major_version(java)
    if major < MIN_JAVA:
        raise BrokerError(
            f"{java} is Java {major}; Kafka 4 brokers need Java {MIN_JAVA}+ (set JAVA_HOME)",
            source="kafka broker",
        )


# --------------------------------------------------------------------------- properties


def random_cluster_id() -> str:
    """A Kafka-style cluster id: a random UUID, URL-safe base64 without padding.

    Same shape as Kafka's ``Uuid.randomUuid()``, which also refuses ids starting with ``-``
    because they read as command-line flags.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS says is free right now (a race remains; start() retries on a clash)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def broker_properties(
    *,
    port: int,
    controller_port: int,
    log_dir: Path,
    overrides: Mapping[str, object] | None = None,
    host: str = "127.0.0.1",
) -> dict[str, str]:
    """``server.properties`` for a combined broker+controller node on ``host`` only.

    Every value differing from Kafka's defaults is here because a one-node test broker needs
    it: internal topics must not ask for 3 replicas, nothing may be created by accident (auto
    creation off, so a typo in a topic name fails loudly), and the log cleaner must run in
    seconds rather than minutes so compaction is observable in a test.
    """
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"{host}:{controller_port}",
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(log_dir),
        # One node: every replication factor and ISR must be 1 or internal topics never come up.
        "num.partitions": "1",
        "default.replication.factor": "1",
        "min.insync.replicas": "1",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # Fewer internal partitions: 50 each costs seconds on the first group/transaction.
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.num.partitions": "10",
        "auto.create.topics.enable": "false",
        "delete.topic.enable": "true",
        "group.initial.rebalance.delay.ms": "0",
        # Compaction within seconds: the cleaner polls every 100 ms, nothing is too young to
        # clean; topics still choose segment.ms / min.cleanable.dirty.ratio themselves.
        "log.cleaner.enable": "true",
        "log.cleaner.backoff.ms": "100",
        "log.cleaner.min.compaction.lag.ms": "0",
        "log.cleaner.threads": "1",
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),  # default 128 MiB of heap
        "log.segment.delete.delay.ms": "1000",
        "log.retention.check.interval.ms": "5000",
        "log.initial.task.delay.ms": "1000",
        # Small thread pools: two cores are shared with Spark and ClickHouse.
        "num.network.threads": "2",
        "num.io.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "4",
    }
    for key, value in (overrides or {}).items():
        props[key] = _java_value(value)
    return props


def _java_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_properties(props: Mapping[str, str], header: str = "") -> str:
    """Java properties text; backslashes are the only thing values need escaped here."""
    lines = [f"# {line}" for line in header.splitlines()]
    for key, value in props.items():
        escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
        lines.append(f"{key}={escaped}")
    return "\n".join(lines) + "\n"


_LOG4J2 = """\
# Everything to stdout, which EmbeddedKafka redirects to broker.log in the data dir.
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
"""


# --------------------------------------------------------------------------- state file


@dataclass(frozen=True)
class BrokerState:
    """What a separate process needs to find, check and stop a running broker."""

    pid: int
    bootstrap: str
    data_dir: str
    log: str
    properties: str
    version: str
    keep: bool
    owns_data_dir: bool
    started_at: float

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def read(cls, state_dir: Path) -> BrokerState | None:
        """The recorded broker, or None when there is no (readable) state file."""
        path = Path(state_dir) / STATE_FILE
        try:
            raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                pid=int(raw["pid"]),
                bootstrap=str(raw["bootstrap"]),
                data_dir=str(raw["data_dir"]),
                log=str(raw["log"]),
                properties=str(raw["properties"]),
                version=str(raw["version"]),
                keep=bool(raw["keep"]),
                owns_data_dir=bool(raw["owns_data_dir"]),
                started_at=float(raw["started_at"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BrokerError(f"unreadable state file: {exc}", source=str(path)) from exc

    def alive(self) -> bool:
        """True if ``pid`` is still *this* broker (a recycled PID must never be signalled)."""
        return _is_our_java(self.pid, self.properties)


def _is_our_java(pid: int, properties: str) -> bool:
    proc = Path("/proc") / str(pid)
    try:
        status = (proc / "stat").read_text()
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        if Path("/proc/self").exists():
            return False
        # No procfs (macOS): fall back to "a process with that pid exists".
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    # A zombie (state Z after the closing paren) has exited; containers whose PID 1 does not
    # reap children keep those around indefinitely.
    if status.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    return b"kafka.Kafka" in cmdline and properties.encode() in cmdline


_BROKER_FILES = ("kraft", "server.properties", "log4j2.properties", _LOG_NAME)


def _remove_broker_files(data_dir: Path, *, owned: bool) -> None:
    """Delete a temp data dir whole; from a caller's dir only what the broker put there."""
    if owned:
        shutil.rmtree(data_dir, ignore_errors=True)
        return
    for name in _BROKER_FILES:
        path = data_dir / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    with contextlib.suppress(OSError):
        data_dir.rmdir()  # only succeeds when nothing of the caller's is left


def _write_state(state_dir: Path, state: BrokerState) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    temp = state_dir / f".{STATE_FILE}.tmp"
    temp.write_text(state.to_json(), encoding="utf-8")
    temp.replace(state_dir / STATE_FILE)


def _remove_state(state_dir: Path, pid: int) -> None:
    """Remove the state file only if it still describes ``pid`` (not a newer broker)."""
    try:
        current = BrokerState.read(state_dir)
    except BrokerError:
        current = None
    if current is None or current.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            (state_dir / STATE_FILE).unlink()


def _terminate(pid: int, is_alive: Callable[[], bool], timeout: float) -> bool:
    """SIGTERM the broker's process group, SIGKILL it after ``timeout``; True if killed hard.

    The group (the broker is a session leader) so that nothing the JVM spawned survives.
    """

    def signal_group(sig: signal.Signals) -> None:
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive():
            return False
        time.sleep(0.1)
    signal_group(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    return True


def stop_recorded(state_dir: Path, timeout: float = 30.0) -> BrokerState | None:
    """Stop the broker a state file describes (from any process); None if there was none.

    Removes its data dir unless it was started with ``keep``, and the state file.
    """
    state_dir = Path(state_dir)
    state = BrokerState.read(state_dir)
    if state is None:
        return None
    if state.alive():
        _terminate(state.pid, state.alive, timeout)
        if state.alive():
            raise BrokerError(f"pid {state.pid} survived SIGKILL", source="kafka broker")
    if not state.keep:
        _remove_broker_files(Path(state.data_dir), owned=state.owns_data_dir)
    _remove_state(state_dir, state.pid)
    return state


def broker_answers(bootstrap: str, timeout: float = 5.0) -> bool:
    """True if a Kafka broker at ``bootstrap`` returns cluster metadata within ``timeout``."""
    host, _, port = bootstrap.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=1.0):
            pass
    except (OSError, ValueError):
        return False  # skip librdkafka: it would log a connection-refused line per attempt
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    try:
        metadata = admin.list_topics(timeout=timeout)
    except KafkaException:
        return False
    return bool(metadata.brokers)


# --------------------------------------------------------------------------- the broker


class EmbeddedKafka:
    """A single-node KRaft Kafka broker in a subprocess, reachable on ``bootstrap``.

    Use as a context manager (``with EmbeddedKafka() as kafka: kafka.bootstrap``) or call
    :meth:`start` / :meth:`stop`. ``properties`` overrides any ``server.properties`` entry.
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
        return self.data_dir / _LOG_NAME

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = _TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except (OSError, BrokerError):
            return "(no broker log)"
        return _tail(text, lines) or "(broker log is empty)"

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
        libs = install_kafka(self.version, cache_dir=self._cache_dir)
        java = find_java(self._java)
        _check_java(java)
        if self._requested_port and not _port_is_free(self._requested_port):
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
            _write_state(self._state_dir, self.state())
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
        _write_state(self._state_dir, state)
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
            _terminate(process.pid, lambda: process.poll() is None, timeout)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            if self._state_dir is not None:
                _remove_state(self._state_dir, process.pid)
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
            _remove_broker_files(self._data_dir, owned=self._owns_data_dir)

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
        (data_dir / "log4j2.properties").write_text(_LOG4J2, encoding="utf-8")
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
                f" {_headline(output)}\n{_tail(output, 15)}",
                source="kafka broker",
            )
        if self._log_handle is not None:
            self._log_handle.close()
        self._log_handle = (data_dir / _LOG_NAME).open("ab")
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
                preexec_fn=_parent_death_hook() if self.die_with_parent else None,  # noqa: PLW1509
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
                    f"Kafka exited with code {code} during startup {_headline(tail)}\n"
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
                _terminate(process.pid, lambda: process.poll() is None, 5.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None


def _parent_death_hook() -> Callable[[], None] | None:
    """A pre-exec hook making the child get SIGTERM when its parent dies (Linux only).

    atexit hooks do not run when a test session is SIGKILLed or SIGTERMed (a CI timeout);
    without ``PR_SET_PDEATHSIG`` its broker JVM would outlive it. The libc lookup happens
    here, in the parent, so the hook itself does nothing but one system call.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    sigterm = int(signal.SIGTERM)

    def hook() -> None:
        prctl(pr_set_pdeathsig, sigterm, 0, 0, 0)

    return hook


class _PortClash(Exception):
    """Internal: the broker lost the race for a port we picked; retry with new ones."""
