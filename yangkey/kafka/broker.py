"""A real Apache Kafka (KRaft) that yangkey runs itself: one node, or a small cluster.

Why not a mock: the pipeline depends on broker behaviour that mocks get wrong — murmur2
partitioning seen by Java clients, transactions and ``read_committed``, log compaction of
current-state topics, and what replication does when a broker dies. So tests and ``yangkey
kafka start`` run the genuine broker: :class:`EmbeddedKafka` takes its jars from
:mod:`yangkey.kafka.install` (a Kafka distribution or the pinned download), formats fresh
KRaft log dirs (random cluster id), writes the settings of :mod:`yangkey.kafka.properties`,
starts one ``java kafka.Kafka`` per node (:mod:`yangkey.kafka.node`) in its own process group
and waits until an AdminClient sees every broker. An optional state file
(:mod:`yangkey.kafka.process`) lets a later, separate process find and stop it.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from yangkey.errors import BrokerError
from yangkey.jvm import TAIL_LINES, check_java, find_java, headline, tail
from yangkey.kafka.install import KAFKA_VERSION, resolve_jars
from yangkey.kafka.node import KafkaNode
from yangkey.kafka.process import (
    NODE_DIR_PREFIX,
    STATE_FILE,
    BrokerState,
    broker_answers,
    remove_broker_files,
    remove_state,
    stop_nodes,
    write_state,
)
from yangkey.kafka.properties import (
    broker_properties,
    free_port,
    port_is_free,
    random_cluster_id,
)

DEFAULT_HEAP = "512m"
"""Small enough to sit beside a Spark driver on a 2-core / 24 GiB box, ample for tests."""
CLUSTER_HEAP = "256m"
"""Each node of a cluster: three of them share the same box (a correctness tool, not a
benchmark)."""
MAX_BROKERS = 9


class EmbeddedKafka:
    """A KRaft Kafka of ``brokers`` nodes in subprocesses, reachable on ``bootstrap``.

    Use as a context manager (``with EmbeddedKafka() as kafka: kafka.bootstrap``) or call
    :meth:`start` / :meth:`stop`. ``properties`` overrides any ``server.properties`` entry.
    ``kafka_home`` (else ``$KAFKA_HOME``) runs an unpacked Kafka distribution's jars instead of
    the pinned download; ``version`` then becomes the distribution's.
    With ``state_dir`` a ``broker.json`` there lets another process stop it
    (:func:`stop_recorded`); :meth:`detach` hands the broker over to that file entirely.

    ``brokers`` > 1 runs a cluster: combined broker+controller nodes 1..N with a static
    controller quorum, each in ``<data dir>/node-<id>``, replicated as production clusters
    are (:func:`~yangkey.kafka.properties.replication_settings`); ``port`` then is the first
    node's and the others take the next ones. :meth:`kill_node`, :meth:`stop_node` and
    :meth:`start_nodes` (``blank=True``: a replaced disk) act on nodes while the others run.

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
        heap: str | None = None,
        startup_timeout: float = 120.0,
        java: str | None = None,
        cache_dir: Path | None = None,
        kafka_home: Path | str | None = None,
        jvm_options: tuple[str, ...] = (),
        die_with_parent: bool = False,
        brokers: int = 1,
    ) -> None:
        if not 1 <= brokers <= MAX_BROKERS:
            raise BrokerError(f"brokers must be 1 to {MAX_BROKERS}, not {brokers}")
        self.version = version
        self.keep = keep
        self.brokers = brokers
        self.heap = heap or (DEFAULT_HEAP if brokers == 1 else CLUSTER_HEAP)
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
        self._runtime: tuple[str, Path] | None = None
        self._data_dir: Path | None = None
        self._owns_data_dir = False
        self._started_at = 0.0
        self.nodes: list[KafkaNode] = []
        self.cluster_id = ""
        self.startup_seconds = 0.0

    # -- properties -----------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT`` (a cluster: every node's, comma-separated), for
        ``bootstrap.servers``."""
        if not self.nodes or not self.nodes[0].port:
            raise BrokerError("not started", source="kafka broker")
        return ",".join(node.bootstrap for node in self.nodes)

    @property
    def port(self) -> int:
        return self.nodes[0].port if self.nodes else 0

    @property
    def pid(self) -> int | None:
        return self.nodes[0].pid if self.nodes else None

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise BrokerError("not started", source="kafka broker")
        return self._data_dir

    @property
    def log_path(self) -> Path:
        """The (first) node's stdout/stderr (log4j2 console output)."""
        if not self.nodes:
            raise BrokerError("not started", source="kafka broker")
        return self.nodes[0].log_path

    @property
    def running(self) -> bool:
        return any(node.running for node in self.nodes)

    def node(self, node_id: int) -> KafkaNode:
        """The node whose ``node.id`` (also Kafka's broker id in metadata) is ``node_id``."""
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise BrokerError(f"no node {node_id}", source="kafka broker")

    def log_tail(self, lines: int = TAIL_LINES) -> str:
        if not self.nodes:
            return "(no broker log)"
        return self.nodes[0].log_tail(lines)

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
        """Install if needed, format, launch and wait until every broker serves metadata."""
        if self.running:
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
        self._runtime = (java, libs)
        for offset in range(self.brokers):
            for requested in (self._requested_port, self._requested_controller_port):
                if requested and not port_is_free(requested + offset):
                    raise BrokerError(
                        f"port {requested + offset} on 127.0.0.1 is already in use",
                        source="kafka broker",
                    )
        self._prepare_data_dir()
        try:
            # Free ports are only free until someone else binds them: retry on a clash.
            for attempt in range(3):
                self._launch()
                try:
                    self._wait_ready(self.nodes)
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
        if not self.nodes or self.nodes[0].pid is None:
            raise BrokerError("not started", source="kafka broker")
        first = self.nodes[0]
        return BrokerState(
            pid=first.state().pid,
            bootstrap=self.bootstrap,
            data_dir=str(self.data_dir),
            log=str(first.log_path),
            properties=str(first.properties_path),
            version=self.version,
            keep=self.keep,
            owns_data_dir=self._owns_data_dir,
            started_at=self._started_at,
            nodes=tuple(node.state() for node in self.nodes) if self.brokers > 1 else (),
        )

    def wait(self) -> int:
        """Block until a node's process exits (``yangkey kafka start --foreground``); its
        exit status."""
        if not self.running:
            raise BrokerError("not started", source="kafka broker")
        while True:
            for node in self.nodes:
                code = node.exit_code()
                if code is not None:
                    return code
            time.sleep(0.5)

    def detach(self) -> BrokerState:
        """Leave the broker running after this process exits; the state file now owns it."""
        if self._state_dir is None:
            raise BrokerError("detach needs a state_dir to record the broker in")
        if self.die_with_parent:
            raise BrokerError("started with die_with_parent: it cannot outlive this process")
        state = self.state()
        write_state(self._state_dir, state)
        atexit.unregister(self._atexit)
        for node in self.nodes:
            node.release()
        return state

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM every node (a clean shutdown), SIGKILL after ``timeout``; then remove the
        data dir. Safe to call twice and on a broker that never started."""
        atexit.unregister(self._atexit)
        pid = self.pid
        running = [(node.state().pid, node.is_running) for node in self.nodes if node.running]
        stop_nodes(running, len(self.nodes), timeout)
        for node in self.nodes:
            node.stop(timeout=5.0)
        if self._state_dir is not None and pid is not None:
            remove_state(self._state_dir, pid)
        self._cleanup_data_dir()

    # -- one node of a cluster --------------------------------------------------------------

    def kill_node(self, node_id: int) -> None:
        """SIGKILL one node, as a power cut would; the others go on."""
        self.node(node_id).kill()

    def stop_node(self, node_id: int, timeout: float = 30.0) -> None:
        """Shut one node down cleanly (SIGTERM; SIGKILL after ``timeout``)."""
        self.node(node_id).stop(timeout)

    def start_nodes(self, *node_ids: int, blank: bool = False) -> None:
        """Start stopped or killed nodes again on their ports and settings, and wait until
        they answer and the cluster lists every broker. ``blank``: each with an empty log
        dir, formatted anew for this cluster, as after replacing its disk (the node copies
        its partitions back from the other replicas)."""
        if self._runtime is None:
            raise BrokerError("not started", source="kafka broker")
        java, libs = self._runtime
        nodes = [self.node(node_id) for node_id in node_ids]
        for node in nodes:
            if node.running:
                raise BrokerError(f"node {node.node_id} is running", source="kafka broker")
        if blank:
            self._format(nodes)
        for node in nodes:
            node.launch(
                java,
                libs,
                self.heap,
                options=self.jvm_options,
                die_with_parent=self.die_with_parent,
            )
        self._wait_ready(nodes)

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
        formatted = [data_dir / "kraft", *data_dir.glob(f"{NODE_DIR_PREFIX}*/kraft")]
        if any((log_dir / "meta.properties").exists() for log_dir in formatted):
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

    def _ports(self) -> list[tuple[int, int]]:
        """(client port, controller port) of each node: the requested ones and the next
        ones for further nodes, else free ones."""
        taken: set[int] = set()

        def pick(requested: int, offset: int) -> int:
            if requested:
                return requested + offset
            port = free_port()
            while port in taken:
                port = free_port()
            return port

        ports: list[tuple[int, int]] = []
        for offset in range(self.brokers):
            client = pick(self._requested_port, offset)
            taken.add(client)
            controller = pick(self._requested_controller_port, offset)
            taken.add(controller)
            ports.append((client, controller))
        return ports

    def _launch(self) -> None:
        assert self._runtime is not None
        java, libs = self._runtime
        data_dir = self.data_dir
        ports = self._ports()
        self.nodes = [
            KafkaNode(
                node_id,
                data_dir if self.brokers == 1 else data_dir / f"{NODE_DIR_PREFIX}{node_id}",
            )
            for node_id in range(1, self.brokers + 1)
        ]
        voters = {node_id: controller for node_id, (_, controller) in enumerate(ports, 1)}
        for node, (client, controller) in zip(self.nodes, ports, strict=True):
            node.port, node.controller_port = client, controller
            props = broker_properties(
                port=client,
                controller_port=controller,
                log_dir=node.log_dir,
                overrides=self.properties,
                node_id=node.node_id,
                voters=voters if self.brokers > 1 else None,
            )
            node.configure(props, self.version)
        self.cluster_id = random_cluster_id()
        self._format(self.nodes)
        for node in self.nodes:
            node.launch(
                java,
                libs,
                self.heap,
                options=self.jvm_options,
                die_with_parent=self.die_with_parent,
            )

    def _format(self, nodes: list[KafkaNode]) -> None:
        """Format the nodes' log dirs for this cluster, in parallel (a JVM each)."""
        assert self._runtime is not None
        java, libs = self._runtime
        runs = [
            (
                node,
                subprocess.Popen(
                    node.format_command(java, libs, self.cluster_id, standalone=self.brokers == 1),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                ),
            )
            for node in nodes
        ]
        failures: list[str] = []
        for node, run in runs:
            try:
                output, _ = run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()
                failures.append(f"formatting the KRaft log dir of node {node.node_id} timed out")
                continue
            if run.returncode != 0:
                failures.append(
                    f"formatting the KRaft log dir failed (exit {run.returncode})"
                    f" {headline(output)}\n{tail(output, 15)}"
                )
        if failures:
            raise BrokerError("\n".join(failures), source="kafka broker")

    def _wait_ready(self, nodes: list[KafkaNode]) -> None:
        """Until every broker of the cluster is listed; a node of ``nodes`` that exits meanwhile
        is an error (or a port clash, for :meth:`start` to retry)."""
        deadline = time.monotonic() + self.startup_timeout
        while True:
            for node in nodes:
                code = node.exit_code()
                if code is not None:
                    if node.port_clash():
                        raise _PortClash
                    raise BrokerError(node.failure(code), source="kafka broker")
            # A restarted node's own listener: the others list it until its session expires.
            if all(broker_answers(node.bootstrap, timeout=2.0) for node in nodes) and (
                broker_answers(self.bootstrap, timeout=2.0, brokers=self.brokers)
            ):
                return
            if time.monotonic() > deadline:
                brokers = f" with {self.brokers} brokers" if self.brokers > 1 else ""
                raise BrokerError(
                    f"Kafka did not answer on {self.bootstrap}{brokers} within"
                    f" {self.startup_timeout:.0f}s; log tail ({nodes[0].log_path}):\n"
                    + nodes[0].log_tail(),
                    source="kafka broker",
                )
            time.sleep(0.2)

    def _kill_now(self) -> None:
        """Stop nodes that failed to come up, without waiting for a clean shutdown."""
        for node in self.nodes:
            node.stop(timeout=5.0)


class _PortClash(Exception):
    """Internal: the broker lost the race for a port we picked; retry with new ones."""
