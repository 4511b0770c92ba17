"""A schema registry instance serving on a background thread, its store a compacted Kafka
topic (:mod:`yangkey.kafka.log`): what ``yangkey registry serve`` and ``yangkey demo`` run."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from yangkey.errors import ConfigError, YangkeyError

if TYPE_CHECKING:
    from yangkey.registry.httpd import TLS, RegistryHTTPServer


@contextlib.contextmanager
def running_registry(
    bootstrap: str,
    topic: str = "_schemas",
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    node_id: str | None = None,
    replication: tuple[int | None, int | None] = (None, None),
    overrides: Mapping[str, object] | None = None,
    verbose: bool = False,
    users: Path | None = None,
    tls: TLS | None = None,
    max_body: int = 2 * 1024 * 1024,
    client_timeout: float = 10.0,
    max_connections: int = 1000,
) -> Iterator[RegistryHTTPServer]:
    """A registry instance serving on a background thread (``serve``, the demo), its store
    read from ``topic`` first and followed every second; stopped on exit. ``replication``: the
    store topic's replication factor and min.insync.replicas if it is created (None: the
    broker's)."""
    from yangkey.kafka.log import KafkaLog, ensure_log_topic  # noqa: PLC0415
    from yangkey.registry.auth import Users  # noqa: PLC0415
    from yangkey.registry.registry import Registry  # noqa: PLC0415
    from yangkey.topics import replicas  # noqa: PLC0415

    if ":" not in bootstrap:
        raise ConfigError("expected HOST:PORT", source=f"--bootstrap {bootstrap}")
    checked_users = Users(users) if users is not None else None
    try:
        ensure_log_topic(
            bootstrap,
            topic,
            replication_factor=replicas(replication[0]),
            min_insync_replicas=replication[1],
            overrides=overrides,
        )
    except YangkeyError as exc:
        raise exc.within(f"--bootstrap {bootstrap}") from None
    log = KafkaLog(bootstrap, topic, overrides=overrides)
    try:
        service = Registry(log, node_id or uuid.uuid4().hex[:8])
        # The replay mostly waits for Kafka: meanwhile this thread imports the HTTP stack.
        replay = Background(lambda: service.sync(verify=True))
        from yangkey.registry.httpd import RegistryHTTPServer  # noqa: PLC0415

        replay.join()
        if service.store.foreign:
            # Confluent's registry also defaults to _schemas; each would corrupt the other.
            raise ConfigError(
                f"holds {service.store.foreign} records that are not this registry's "
                "(another schema registry's store?); choose another --store-topic",
                source=f"topic {topic}",
            )
        server = RegistryHTTPServer(
            service,
            host,
            port,
            verbose=verbose,
            users=checked_users,
            tls=tls,
            max_body=max_body,
            client_timeout=client_timeout,
            max_connections=max_connections,
        )
        server.start()
        stop_watching = service.watch()
        try:
            yield server
        finally:
            stop_watching()
            server.stop()
    finally:
        log.close()


class Background(threading.Thread):
    """Run ``work`` on a thread; :meth:`join` raises what it raised."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.work()
        except BaseException as exc:  # handed to the joining thread
            self.error = exc

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            raise self.error
