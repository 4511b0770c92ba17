"""``yangkey registry …``: serve the schema registry, print or register topic schemas."""

from __future__ import annotations

import ipaddress
import logging
import signal
import socket
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click
import orjson

from yangkey.cli.declaration import Declaration
from yangkey.cli.options import (
    BOOTSTRAP,
    PORT,
    SCHEMA_REGISTRY,
    TOPIC,
    VERBOSE,
    kafka_config_options,
    subscriptions_option,
    subscriptions_options,
)
from yangkey.cli.reporting import load_catalog, reports_errors
from yangkey.errors import ConfigError
from yangkey.kafka.config import client_overrides
from yangkey.registry.running import running_registry

if TYPE_CHECKING:
    pass

EXAMPLES = """\b
Examples:
  yangkey registry serve --bootstrap 127.0.0.1:9092 --port 8081
  yangkey registry passwd --users users.txt alice --role admin
  yangkey registry serve --bootstrap 127.0.0.1:9092 --host 0.0.0.0 --users users.txt \\
      --tls-cert server.pem --tls-key server.key
  yangkey registry schemas --subscriptions subscriptions.yaml
  yangkey registry register --subscriptions subscriptions.yaml \\
      --schema-registry http://127.0.0.1:8081
"""

STORE_TOPIC = Declaration(
    ("--store-topic",),
    "store_topic",
    "The registry's store: a compacted topic of one partition.",
    metavar="NAME",
    aliases=("--topic",),
    attrs={"default": "_schemas", "show_default": True},
)
USERS = Declaration(
    ("--users",),
    "users",
    "The registry's users file (`registry passwd` writes it):",
    metavar="FILE",
    attrs={"type": click.Path(dir_okay=False, path_type=Path), "default": None},
)


@click.group(name="registry", epilog=EXAMPLES)
def registry() -> None:
    """A Confluent-compatible schema registry whose only store is a compacted Kafka topic, and
    the JSON Schemas of derived topics (subject ``<topic>-value``)."""


@registry.command(name="serve", epilog=EXAMPLES)
@BOOTSTRAP
@PORT.but(default=8081, note="The URL is printed.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Any other than loopback wants --users (and TLS).",
)
@STORE_TOPIC
@click.option(
    "--node-id",
    default=None,
    help="A label for this instance in record keys (default: random); a random part is "
    "always added, so instances never share one.",
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
    note="Only the replication of internal_topics.schema_store (and defaults) is read from it.",
)
@USERS.but(
    note="every request then needs HTTP basic auth, and a role: read, write (register, soft "
    "delete) or admin (permanent deletes, /config, /mode). Re-read when it changes."
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Serve HTTPS with this certificate (PEM, chain included); needs --tls-key.",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The private key of --tls-cert (PEM).",
)
@click.option(
    "--tls-client-ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Require client certificates signed by this CA (PEM): mutual TLS.",
)
@click.option(
    "--max-body",
    type=click.IntRange(1024),
    default=2 * 1024 * 1024,
    show_default=True,
    metavar="BYTES",
    help="Largest request body; a larger one is answered 413 (error_code 42209) unread.",
)
@click.option(
    "--client-timeout",
    type=click.FloatRange(0.1),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Time a client has to send a request's headers, and then its body (408 after).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Open connections served at once; more are answered 503.",
)
@kafka_config_options("kafka")
@VERBOSE.but(what="Log every request on stderr.")
@reports_errors
def serve(
    bootstrap: str,
    port: int,
    host: str,
    store_topic: str,
    node_id: str | None,
    replication_factor: int | None,
    min_insync_replicas: int | None,
    subscriptions: str | None,
    yang_dirs: tuple[str, ...],
    strict: bool,
    users: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    tls_client_ca: Path | None,
    max_body: int,
    client_timeout: float,
    max_connections: int,
    kafka_config: tuple[str, ...],
    kafka_config_file: str | None,
    verbose: int,
) -> None:
    """Serve the registry API until SIGINT or SIGTERM.

    Every instance keeps all schemas in memory, rebuilt from its store topic (one partition,
    compacted)
    at start; any instance serves reads and writes, and instances on one broker agree. The
    URL is printed on stdout once the store has been read. If the store topic is deleted and
    created again (or the broker comes back empty), instances notice and replay it; while the
    store is unreachable they answer reads from memory and refuse writes (503, 50003).
    """
    del strict  # the file's replication is all serve reads: nothing of it is compiled
    from yangkey.registry.httpd import TLS  # noqa: PLC0415

    if (tls_cert is None) != (tls_key is None) or (tls_client_ca and not tls_cert):
        raise ConfigError("--tls-cert and --tls-key go together (and --tls-client-ca needs them)")
    tls = TLS(tls_cert, tls_key, tls_client_ca) if tls_cert and tls_key else None
    _log_to_stderr(verbose > 0)
    for warning in exposure_warnings(host, users is not None, tls is not None):
        click.echo(f"warning: {warning}", err=True)
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
        store_topic,
        host=host,
        port=port,
        node_id=node_id,
        replication=(replication_factor, min_insync_replicas),
        overrides=client_overrides(properties_file=kafka_config_file, kv=kafka_config),
        verbose=verbose > 0,
        users=users,
        tls=tls,
        max_body=max_body,
        client_timeout=client_timeout,
        max_connections=max_connections,
    ) as server:
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        click.echo(server.url)
        sys.stdout.flush()
        service = server.registry
        click.echo(
            f"registry node {service.node}: {len(service.store.schemas)} schemas, "
            f"{len(service.store.subject_names())} subjects from {store_topic} "
            f"(end offset {service.store.end})",
            err=True,
        )
        stop.wait()


def exposure_warnings(host: str, auth: bool, tls: bool) -> list[str]:
    """What an operator should hear about listening on ``host`` this way."""
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        addresses = {host}
    if all(_loopback(address) for address in addresses):
        return []
    warnings = []
    if not auth:
        warnings.append(
            f"listening on {host} without --users: anyone who reaches it can register, "
            "permanently delete and change the compatibility level"
        )
    elif not tls:
        warnings.append(f"listening on {host} with basic auth but no TLS: passwords cross in clear")
    return warnings


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.partition("%")[0]).is_loopback
    except ValueError:
        return False


def _log_to_stderr(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    for name in ("yangkey.registry", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.propagate = False
    logging.getLogger("yangkey.registry").setLevel(logging.INFO if verbose else logging.WARNING)


@registry.command(name="passwd", epilog=EXAMPLES)
@USERS.but(required=True, note="created if missing, readable by its owner only.")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(["read", "write", "admin"]),
    default=None,
    help="The user's role [default for a new user: read; else unchanged].",
)
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of stdin instead of prompting.",
)
@click.option("--delete", is_flag=True, help="Remove the user.")
@reports_errors
def passwd(users: Path, name: str, role: str | None, password_stdin: bool, delete: bool) -> None:
    """Add a user to a registry users file, change its password or role, or remove it.

    The password is stored as an scrypt hash (RFC 7914). A running ``serve --users`` picks the
    change up within a second.
    """
    from yangkey.registry.auth import read_users, write_user  # noqa: PLC0415

    password: str | None = None
    if delete:
        if role is not None or password_stdin:
            raise ConfigError("--delete takes no --role or --password-stdin", source=name)
    elif password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise ConfigError("no password on stdin", source=name)
    elif role is None or name not in read_users(users):  # else: a new role only
        password = click.prompt(f"password for {name}", hide_input=True, confirmation_prompt=True)
    done = write_user(users, name, role, password)  # type: ignore[arg-type]
    click.echo(f"{done} {name} in {users}", err=True)


@registry.command(name="schemas", epilog=EXAMPLES)
@subscriptions_option
@TOPIC.but(what="'s schema")
@reports_errors
def schemas(
    subscriptions: str, yang_dirs: tuple[str, ...], strict: bool, topic: str | None
) -> None:
    """Print the JSON Schema of every derived topic: ``{"<topic>-value": schema, ...}``."""
    from yangkey.registry.client import subject_for, topic_schemas  # noqa: PLC0415

    catalog = load_catalog(subscriptions, yang_dirs, strict=strict)
    found = topic_schemas(catalog, yang_dirs=yang_dirs)
    if topic is not None:
        if topic not in found:
            raise ConfigError(f"no derived topic {topic!r}", source=subscriptions)
        found = {topic: found[topic]}
    out = {subject_for(topic): orjson.loads(schema) for topic, schema in found.items()}
    click.echo(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())


@registry.command(name="register", epilog=EXAMPLES)
@subscriptions_option
@SCHEMA_REGISTRY.but(
    required=True,
    note="Client settings from environment variables YANGKEY_SCHEMA_REGISTRY_<KEY>, e.g."
    " ..._BASIC_AUTH_USER_INFO=user:pass.",
)
@click.option(
    "--modules",
    is_flag=True,
    help="First register the YANG modules used (subject = module name, schema type YANG, "
    "a reference per import).",
)
@reports_errors
def register(
    subscriptions: str,
    yang_dirs: tuple[str, ...],
    strict: bool,
    schema_registry: str,
    modules: bool,
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
    ids = process_ids(RegistrySettings.from_options(schema_registry))
    if modules:
        for module, (schema_id, _) in register_yang_modules(
            ids, catalog, yang_dirs=yang_dirs
        ).items():
            click.echo(f"{module}\t{schema_id}")
    for topic, schema_id in register_topic_schemas(ids, catalog, yang_dirs=yang_dirs).items():
        click.echo(f"{subject_for(topic)}\t{schema_id}")
