"""``yangkey registry …``: serve the schema registry, print or register topic schemas."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import TYPE_CHECKING

import click
import orjson

from yangkey.errors import ConfigError, YangkeyError
from yangkey.kafka.config import client_overrides
from yangkey.options import (
    bootstrap_option,
    schema_registry_option,
    subscriptions_option,
    subscriptions_options,
)
from yangkey.reporting import load_catalog, reports_errors

if TYPE_CHECKING:
    from yangkey.registry.server import RegistryHTTPServer

EXAMPLES = """\b
Examples:
  yangkey registry serve --bootstrap 127.0.0.1:9092 --port 8081
  yangkey registry schemas --subscriptions subscriptions.yaml
  yangkey registry register --subscriptions subscriptions.yaml --url http://127.0.0.1:8081
"""


@click.group(name="registry", epilog=EXAMPLES)
def registry() -> None:
    """A Confluent-compatible schema registry whose only store is a compacted Kafka topic, and
    the JSON Schemas of derived topics (subject ``<topic>-value``)."""


@registry.command(name="serve", epilog=EXAMPLES)
@bootstrap_option()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8081,
    show_default=True,
    help="Port to listen on; 0 picks a free one (the URL is printed).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--topic", default="_schemas", show_default=True, help="The store topic.")
@click.option(
    "--node-id",
    default=None,
    help="This instance's id in record keys (default: random). Unique per running instance.",
)
@click.option(
    "--replication-factor",
    type=click.IntRange(1),
    default=None,
    help="Replication factor of the store topic when serve creates it [default: the"
    " subscriptions file's internal_topics.schema_store, else the broker's"
    " default.replication.factor].",
)
@click.option(
    "--min-insync-replicas",
    type=click.IntRange(1),
    default=None,
    help="min.insync.replicas of the store topic when serve creates it [default: as for"
    " --replication-factor, else the broker's].",
)
@subscriptions_options(
    required=False,
    help_text="A subscriptions file: only the replication of internal_topics.schema_store"
    " (and defaults) is read from it.",
)
@click.option(
    "-X",
    "kv",
    multiple=True,
    metavar="KEY=VALUE",
    help="A librdkafka property for the registry's clients (security, timeouts). Repeatable.",
)
@click.option("--verbose", is_flag=True, help="Log every request on stderr.")
@reports_errors
def serve(
    bootstrap: str,
    port: int,
    host: str,
    topic: str,
    node_id: str | None,
    replication_factor: int | None,
    min_insync_replicas: int | None,
    subscriptions: str | None,
    yang_dirs: tuple[str, ...],
    strict: bool,
    kv: tuple[str, ...],
    verbose: bool,
) -> None:
    """Serve the registry API until SIGINT or SIGTERM.

    Every instance keeps all schemas in memory, rebuilt from TOPIC (one partition, compacted)
    at start; any instance serves reads and writes, and instances on one broker agree. The
    URL is printed on stdout once the store has been read.
    """
    del strict  # the file's replication is all serve reads: nothing of it is compiled
    stop = threading.Event()
    if subscriptions is not None:
        from yangkey.config import load_subscriptions_file  # noqa: PLC0415

        factor, in_sync = load_subscriptions_file(subscriptions).internal("schema_store")
        replication_factor = replication_factor or factor
        min_insync_replicas = min_insync_replicas or in_sync

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    with running_registry(
        bootstrap,
        topic,
        host=host,
        port=port,
        node_id=node_id,
        replication=(replication_factor, min_insync_replicas),
        overrides=client_overrides(kv=kv),
        verbose=verbose,
    ) as server:
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        click.echo(server.url)
        sys.stdout.flush()
        service = server.registry
        click.echo(
            f"registry node {service.node}: {len(service.store.schemas)} schemas, "
            f"{len(service.store.subject_names())} subjects from {topic} "
            f"(end offset {service.store.end})",
            err=True,
        )
        stop.wait()


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
) -> Iterator[RegistryHTTPServer]:
    """A registry instance serving on a background thread (``serve``, the demo), its store
    read from ``topic`` first; stopped on exit. ``replication``: the store topic's
    replication factor and min.insync.replicas if it is created (None: the broker's)."""
    from yangkey.registry.kafkalog import KafkaLog, ensure_log_topic  # noqa: PLC0415
    from yangkey.registry.registry import Registry  # noqa: PLC0415
    from yangkey.registry.server import RegistryHTTPServer  # noqa: PLC0415
    from yangkey.topics import replicas  # noqa: PLC0415

    if ":" not in bootstrap:
        raise ConfigError("expected HOST:PORT", source=f"--bootstrap {bootstrap}")
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
        service.sync()
        if service.store.foreign:
            # Confluent's registry also defaults to _schemas; each would corrupt the other.
            raise ConfigError(
                f"holds {service.store.foreign} records that are not this registry's "
                "(another schema registry's store?); choose another --topic",
                source=f"topic {topic}",
            )
        try:
            server = RegistryHTTPServer(service, host, port, verbose=verbose)
        except OSError as exc:
            raise ConfigError(f"cannot listen: {exc.strerror}", source=f"{host}:{port}") from None
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        log.close()


@registry.command(name="schemas", epilog=EXAMPLES)
@subscriptions_option
@click.option("--topic", "only", default=None, help="Print only this topic's schema.")
@reports_errors
def schemas(subscriptions: str, yang_dirs: tuple[str, ...], strict: bool, only: str | None) -> None:
    """Print the JSON Schema of every derived topic: ``{"<topic>-value": schema, ...}``."""
    from yangkey.registry.client import subject_for, topic_schemas  # noqa: PLC0415

    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    found = topic_schemas(catalog, yang_dirs=yang_dirs)
    if only is not None:
        if only not in found:
            raise ConfigError(f"no derived topic {only!r}", source=subscriptions)
        found = {only: found[only]}
    out = {subject_for(topic): orjson.loads(schema) for topic, schema in found.items()}
    click.echo(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())


@registry.command(name="register", epilog=EXAMPLES)
@subscriptions_option
@schema_registry_option(
    help_text="Any Confluent-compatible schema registry (client settings from environment"
    " variables YANGKEY_SCHEMA_REGISTRY_<KEY>, e.g. ..._BASIC_AUTH_USER_INFO=user:pass)."
)
@click.option(
    "--modules",
    is_flag=True,
    help="First register the YANG modules used (subject = module name, schema type YANG, "
    "a reference per import).",
)
@reports_errors
def register(
    subscriptions: str, url: str, yang_dirs: tuple[str, ...], strict: bool, modules: bool
) -> None:
    """Register (or look up) each derived topic's value schema; print ``subject<TAB>id``."""
    from yangkey.registry.client import (  # noqa: PLC0415
        RegistrySettings,
        process_ids,
        register_topic_schemas,
        register_yang_modules,
        subject_for,
    )

    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    ids = process_ids(RegistrySettings.from_options(url))
    if modules:
        for module, (schema_id, _) in register_yang_modules(
            ids, catalog, yang_dirs=yang_dirs
        ).items():
            click.echo(f"{module}\t{schema_id}")
    for topic, schema_id in register_topic_schemas(ids, catalog, yang_dirs=yang_dirs).items():
        click.echo(f"{subject_for(topic)}\t{schema_id}")
