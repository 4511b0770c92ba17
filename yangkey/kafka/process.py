"""The broker process from outside: its state file, whether it is alive and still ours,
stopping it (from any process), and whether it answers.

Brokers are recorded per user, not per working directory (a ``stop`` run from another
directory must find the broker): the default state dir is ``$XDG_STATE_HOME/yangkey/kafka``
(``~/.local/state/yangkey/kafka``), and every state dir in use, the default or one named with
``--state-dir``, is registered under ``$XDG_STATE_HOME/yangkey/brokers`` so that ``status``
lists them all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from yangkey.dirs import user_state_home
from yangkey.errors import BrokerError
from yangkey.jvm import pid_exists, terminate

STATE_FILE = "broker.json"
LOG_NAME = "broker.log"
NODE_DIR_PREFIX = "node-"
"""A cluster's data dir holds one ``node-<id>`` directory per node."""


def default_state_dir() -> Path:
    """Where ``yangkey kafka start`` records its broker when no ``--state-dir`` is given."""
    return user_state_home() / "kafka"


def _registry() -> Path:
    return user_state_home() / "brokers"


def _registry_entry(state_dir: Path) -> Path:
    digest = hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:16]
    return _registry() / digest


def recorded_state_dirs() -> list[Path]:
    """Every registered state dir that still holds a state file, the default one first;
    entries whose state file is gone are pruned."""
    found: set[Path] = set()
    with contextlib.suppress(FileNotFoundError):
        for entry in _registry().iterdir():
            try:
                state_dir = Path(entry.read_text(encoding="utf-8").strip())
            except OSError:
                continue
            if (state_dir / STATE_FILE).exists():
                found.add(state_dir)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()
    default = default_state_dir().resolve()
    if (default / STATE_FILE).exists():
        found.add(default)
    return sorted(found, key=lambda d: (d != default, str(d)))


@dataclass(frozen=True)
class NodeState:
    """One node of a recorded cluster."""

    node_id: int
    pid: int
    bootstrap: str
    log: str
    properties: str

    def alive(self) -> bool:
        """True if ``pid`` is still *this* node (a recycled PID must never be signalled)."""
        return _is_our_java(self.pid, self.properties)


@dataclass(frozen=True)
class BrokerState:
    """What a separate process needs to find, check and stop a running broker.

    A cluster (``yangkey kafka start --brokers N``) lists every node in ``nodes``;
    ``bootstrap`` is then all their addresses and ``pid``, ``log`` and ``properties`` are the
    first node's. A one-node broker leaves ``nodes`` empty (as records before clusters did).
    """

    pid: int
    bootstrap: str
    data_dir: str
    log: str
    properties: str
    version: str
    keep: bool
    owns_data_dir: bool
    started_at: float
    nodes: tuple[NodeState, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    def members(self) -> tuple[NodeState, ...]:
        """Every node, a one-node broker's included."""
        if self.nodes:
            return self.nodes
        return (NodeState(1, self.pid, self.bootstrap, self.log, self.properties),)

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
                nodes=tuple(
                    NodeState(
                        node_id=int(node["node_id"]),
                        pid=int(node["pid"]),
                        bootstrap=str(node["bootstrap"]),
                        log=str(node["log"]),
                        properties=str(node["properties"]),
                    )
                    for node in raw.get("nodes", ())
                ),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BrokerError(f"unreadable state file: {exc}", source=str(path)) from exc

    def alive(self) -> bool:
        """True if any node is still running (a recycled PID must never be signalled)."""
        return any(node.alive() for node in self.members())

    def running(self) -> tuple[NodeState, ...]:
        return tuple(node for node in self.members() if node.alive())


def _is_our_java(pid: int, properties: str) -> bool:
    proc = Path("/proc") / str(pid)
    try:
        status = (proc / "stat").read_text()
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        if Path("/proc/self").exists():
            return False
        return pid_exists(pid)  # no procfs (macOS): all there is to know
    # A zombie (state Z after the closing paren) has exited; containers whose PID 1 does not
    # reap children keep those around indefinitely.
    if status.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    return b"kafka.Kafka" in cmdline and properties.encode() in cmdline


_BROKER_FILES = ("kraft", "server.properties", "log4j2.properties", LOG_NAME)


def remove_broker_files(data_dir: Path, *, owned: bool) -> None:
    """Delete a temp data dir whole; from a caller's dir only what the broker put there."""
    if owned:
        shutil.rmtree(data_dir, ignore_errors=True)
        return
    for node_dir in data_dir.glob(f"{NODE_DIR_PREFIX}[0-9]*"):  # a cluster's nodes
        remove_broker_files(node_dir, owned=False)
    for name in _BROKER_FILES:
        path = data_dir / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    with contextlib.suppress(OSError):
        data_dir.rmdir()  # only succeeds when nothing of the caller's is left


def write_state(state_dir: Path, state: BrokerState) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    temp = state_dir / f".{STATE_FILE}.tmp"
    temp.write_text(state.to_json(), encoding="utf-8")
    temp.replace(state_dir / STATE_FILE)
    entry = _registry_entry(state_dir)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(str(state_dir.resolve()), encoding="utf-8")


def remove_state(state_dir: Path, pid: int) -> None:
    """Remove the state file only if it still describes ``pid`` (not a newer broker)."""
    try:
        current = BrokerState.read(state_dir)
    except BrokerError:
        current = None
    if current is None or current.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            (state_dir / STATE_FILE).unlink()
        with contextlib.suppress(FileNotFoundError):
            _registry_entry(state_dir).unlink()


QUORUMLESS_GRACE = 5.0
"""Seconds a node whose controller quorum is gone gets to stop before SIGKILL."""


def stop_nodes(
    targets: Sequence[tuple[int, Callable[[], bool]]], voters: int, timeout: float
) -> None:
    """:func:`terminate` the running nodes of a cluster of ``voters`` controllers.

    One after the other: a node's clean shutdown waits (up to minutes) for the active
    controller to approve it, which takes a majority of the voters. While one is left the
    nodes stop cleanly within ``timeout``; the rest get :data:`QUORUMLESS_GRACE`, then SIGKILL
    (all at once, every node would wait for a controller that is shutting down too).
    """
    majority = voters // 2 + 1
    alive = len(targets)
    for pid, is_alive in targets:
        grace = timeout if alive >= majority else min(timeout, QUORUMLESS_GRACE)
        terminate(pid, is_alive, grace)
        alive -= 1


def stop_recorded(state_dir: Path, timeout: float = 30.0) -> BrokerState | None:
    """Stop the broker a state file describes (from any process); None if there was none.

    Removes its data dir unless it was started with ``keep``, and the state file.
    """
    state_dir = Path(state_dir)
    state = BrokerState.read(state_dir)
    if state is None:
        return None
    stop_nodes([(node.pid, node.alive) for node in state.running()], len(state.members()), timeout)
    survivors = state.running()
    if survivors:
        pids = ", ".join(str(node.pid) for node in survivors)
        raise BrokerError(f"pid {pids} survived SIGKILL", source="kafka broker")
    if not state.keep:
        remove_broker_files(Path(state.data_dir), owned=state.owns_data_dir)
    remove_state(state_dir, state.pid)
    return state


def broker_answers(bootstrap: str, timeout: float = 5.0, *, brokers: int = 1) -> bool:
    """True if the Kafka cluster at ``bootstrap`` (``host:port[,host:port…]``) returns
    metadata listing at least ``brokers`` brokers within ``timeout``."""
    return broker_count(bootstrap, timeout) >= brokers


def accepts_connections(bootstrap: str) -> bool:
    """True if any of ``bootstrap``'s servers accepts a TCP connection within a second: a
    quick "nothing listens there" before librdkafka retries for its whole timeout."""
    return any(_accepts(server) for server in bootstrap.split(","))


def require_listening(bootstrap: str, fix: str = "start it or fix --bootstrap") -> None:
    """One :class:`BrokerError` at once when none of ``bootstrap``'s servers accepts a
    connection, instead of librdkafka's silent retries until a metadata timeout."""
    if not accepts_connections(bootstrap):
        raise BrokerError(
            f"cannot connect to any of {bootstrap} (nothing listens there, or the name does "
            f"not resolve): {fix}",
            source=f"kafka://{bootstrap}",
        )


def broker_count(bootstrap: str, timeout: float = 5.0) -> int:
    """How many brokers the cluster at ``bootstrap`` lists in its metadata (0: no answer)."""
    if not accepts_connections(bootstrap):
        return 0  # skip librdkafka: it would log a connection-refused line per attempt
    from confluent_kafka import KafkaException  # noqa: PLC0415 - only `status` and waits need it
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415

    from yangkey.kafka.logs import logged  # noqa: PLC0415

    admin = AdminClient(logged({"bootstrap.servers": bootstrap, "log_level": 0}))
    try:
        metadata = admin.list_topics(timeout=timeout)
    except KafkaException:
        return 0
    return len(metadata.brokers)


def _accepts(server: str) -> bool:
    host, _, port = server.strip().rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=1.0):
            return True
    except (OSError, ValueError):
        return False
