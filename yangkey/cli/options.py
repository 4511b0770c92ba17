"""Every option that more than one command takes, declared once (a
:class:`~yangkey.cli.declaration.Declaration`): one long name, one short form, one destination,
one environment variable (shown in ``--help``), one metavar, one help text, and the profile
field of the same name. Older spellings stay as hidden aliases, listed in
``tests/unit/test_cli_names.py``, which walks the whole command tree and holds all of this. An
option only one command module takes is declared there, the same way.

One flag, one meaning: where two commands need two meanings they get two names, e.g. the node
of a notification is ``--override-node`` in ``key``/``keys`` (it wins over the data),
``--default-node`` in ``produce`` (the data wins) and ``--node`` in ``catalog show``,
``state`` and ``history`` (a filter).

Where a value comes from, first wins: the command line, the environment, the profile
(``yangkey.yaml``, see :mod:`yangkey.cli.profile`, fed to click as the context's
``default_map``), the option's default. For the ClickHouse target this order also settles
``--clickhouse`` against ``--embedded``: an explicit ``--embedded PATH`` wins over
``YANGKEY_CLICKHOUSE_URL`` (:func:`resolve_target`).

Imports nothing heavy: every command's ``--help`` goes through here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from yangkey.cli.declaration import Declaration, apply_all

F = TypeVar("F", bound=Callable[..., Any])

ENV_SUBSCRIPTIONS = "YANGKEY_SUBSCRIPTIONS"
ENV_BOOTSTRAP = "YANGKEY_BOOTSTRAP"
ENV_CLICKHOUSE = "YANGKEY_CLICKHOUSE_URL"
ENV_EMBEDDED = "YANGKEY_EMBEDDED"
ENV_DATABASE = "YANGKEY_DATABASE"
ENV_SCHEMA_REGISTRY = "YANGKEY_SCHEMA_REGISTRY"
ENV_CATALOG_TOPIC = "YANGKEY_CATALOG_TOPIC"

#: Output formats of the commands that print rows.
FORMATS = ("table", "tsv", "csv", "json")
_FORMAT_META = "yangkey.format"

# ---------------------------------------------------------------------- subscriptions file

SUBSCRIPTIONS = Declaration(
    ("--subscriptions", "-s"),
    "subscriptions",
    "The subscriptions file (YAML).",
    envvar=ENV_SUBSCRIPTIONS,
    metavar="FILE",
    profile=True,
    # A missing file is a usage error (exit 2).
    attrs={"required": True, "type": click.Path(exists=True, dir_okay=False)},
)
YANG_DIR = Declaration(
    ("--yang-dir",),
    "yang_dirs",
    "Directory of .yang modules, searched before $YANGKEY_YANG_PATH and the IETF/IANA modules "
    "shipped with pyang. Repeatable.",
    metavar="DIR",
    profile=True,
    attrs={"multiple": True, "type": click.Path(file_okay=False)},
)
STRICT = Declaration(
    ("--strict",),
    "strict",
    "Stop at the first subscription of the file that does not compile. Default: report it "
    "(file, line, reason), skip it and run the others; its notifications go to the "
    "dead-letter topic.",
    attrs={"is_flag": True},
)


def subscriptions_options(*, required: bool = True, note: str = "") -> Callable[[F], F]:
    """``--subscriptions/-s FILE``, ``--yang-dir`` and ``--strict`` (and ``--profile``);
    optional for the commands that can do without (the shared catalog instead, …)."""

    def decorate(function: F) -> F:
        return apply_all(
            function, SUBSCRIPTIONS.but(required=required, note=note), YANG_DIR, STRICT
        )

    return decorate


subscriptions_option = subscriptions_options()
""":func:`subscriptions_options` as most commands take them: the file is required."""


# ------------------------------------------------------------- a subscription: (node, id)

NODE = Declaration(
    ("--node", "-n"),
    "node",
    "Only {what} of this node.",
    metavar="NAME",
)
SUBSCRIPTION_ID = Declaration(
    ("--subscription-id", "-i"),
    "subscription_id",
    "Only {what} of this subscription id (ids are per device: on every node unless --node "
    "names one).",
    metavar="ID",
    attrs={"type": click.IntRange(0, 2**32 - 1)},
)


def subscription_filter_options(what: str, node_note: str = "") -> Callable[[F], F]:
    """``--node/-n NAME`` and ``--subscription-id/-i ID``, filters: a subscription is
    identified by (node, id), ids being per device (RFC 8639)."""

    def decorate(function: F) -> F:
        return apply_all(
            function, NODE.but(what=what, note=node_note), SUBSCRIPTION_ID.but(what=what)
        )

    return decorate


OVERRIDE_NODE = Declaration(
    ("--override-node",),
    "override_node",
    "Node name for the key, instead of the one the notification carries (hostname, sysName, "
    "manifest name).",
    metavar="NAME",
    aliases=("--node",),
)
OVERRIDE_SUBSCRIPTION_ID = Declaration(
    ("--override-subscription-id",),
    "override_subscription_id",
    "Subscription id for the key (a uint32), instead of the notification's.",
    metavar="ID",
    aliases=("--subscription-id",),
    attrs={"type": click.IntRange(0, 2**32 - 1)},
)
DEFAULT_NODE = Declaration(
    ("--default-node",),
    "default_node",
    "Node name for the notifications that carry none (no hostname, sysName or manifest name: "
    "IOS-XE). The name a notification carries always wins.",
    metavar="NAME",
    aliases=("--node",),
)


# --------------------------------------------------------------------------------- Kafka

BOOTSTRAP = Declaration(
    ("--bootstrap", "-b"),
    "bootstrap",
    "Kafka bootstrap servers.",
    envvar=ENV_BOOTSTRAP,
    metavar="HOST:PORT",
    profile=True,
    attrs={"required": True},
)
CATALOG_TOPIC = Declaration(
    # yangkey.kafka.catalog_topic.CATALOG_TOPIC, spelled out here because importing that
    # module loads the Kafka client for every --help.
    ("--catalog-topic",),
    "catalog_topic",
    "The shared catalog's compacted topic.",
    envvar=ENV_CATALOG_TOPIC,
    metavar="NAME",
    attrs={"default": "_yangkey_catalog", "show_default": True},
)
SHARED_CATALOG = Declaration(
    ("--shared-catalog",),
    "shared_catalog",
    "Use the shared catalog (--catalog-topic on the --bootstrap cluster):",
    attrs={"is_flag": True},
)
SHARED_CATALOG_IMPLIED = "An explicit --bootstrap implies it."
"""The note of ``--shared-catalog`` where ``--bootstrap`` alone used to mean it."""


def shared_catalog_servers(shared_catalog: bool, bootstrap: str | None) -> str | None:
    """The bootstrap servers of the shared catalog to read, or None, for the commands whose
    ``--bootstrap`` alone used to mean it (``catalog show``, ``ddl``): ``--shared-catalog``, or
    ``--bootstrap`` on the command line; from the environment or a profile it is only the
    address (a usage error without one)."""
    ctx = click.get_current_context()
    explicit = ctx.get_parameter_source("bootstrap") is ParameterSource.COMMANDLINE
    if not (shared_catalog or explicit):
        return None
    if bootstrap is None:
        raise click.UsageError(f"--shared-catalog needs --bootstrap (or {ENV_BOOTSTRAP})")
    return bootstrap


CONSUMER_GROUP = Declaration(
    ("--consumer-group",),
    "consumer_group",
    "The Kafka consumer group.",
    metavar="NAME",
    aliases=("--group",),
    attrs={"show_default": True},
)
FOLLOW = Declaration(
    ("--follow", "-f"),
    "follow",
    "Keep going until Ctrl-C or SIGTERM (default: stop when caught up):",
    attrs={"is_flag": True},
)

EXAMPLE_SETTING = {
    "producer": "compression.type=zstd",
    "consumer": "security.protocol=SSL",
    "kafka": "security.protocol=SSL",
}
_CLIENTS = {"producer": "the producer", "consumer": "the consumer", "kafka": "the Kafka clients"}


def _client_config(client: str) -> tuple[Declaration, Declaration]:
    kv = Declaration(
        (f"--{client}-config", "-X"),
        f"{client}_config",
        f"A librdkafka setting for {_CLIENTS[client]} (repeatable), e.g. "
        f"{EXAMPLE_SETTING[client]}; secrets are better given as YANGKEY_KAFKA_<KEY> variables.",
        metavar="KEY=VALUE",
        attrs={"multiple": True},
    )
    properties = Declaration(
        (f"--{client}-config-file",),
        f"{client}_config_file",
        f"Properties file of librdkafka settings for {_CLIENTS[client]} (key=value lines).",
        metavar="FILE",
        aliases=("--kafka-properties",) if client == "consumer" else (),
        attrs={"type": click.Path(exists=True, dir_okay=False), "default": None},
    )
    return kv, properties


#: ``-X, --<client>-config KEY=VALUE`` and ``--<client>-config-file FILE``, per client.
KAFKA_CLIENT_CONFIG: dict[str, tuple[Declaration, Declaration]] = {
    client: _client_config(client) for client in _CLIENTS
}


def kafka_config_options(client: str, *, short: bool = True) -> Callable[[F], F]:
    """``-X KEY=VALUE`` (repeatable, like kcat's; ``short=False``: the long form only, for a
    command's second client) and the properties file, for ``client`` (producer, consumer,
    kafka: a command's clients of both kinds)."""
    kv, properties = KAFKA_CLIENT_CONFIG[client]

    def decorate(function: F) -> F:
        return apply_all(function, kv.but(short=short), properties)

    return decorate


# ----------------------------------------------------------------------------- ClickHouse

CLICKHOUSE = Declaration(
    ("--clickhouse",),
    "clickhouse",
    "Server URL http[s]://user@host:port[/database]; password in CLICKHOUSE_PASSWORD.",
    envvar=ENV_CLICKHOUSE,
    metavar="URL",
    profile=True,
)
EMBEDDED = Declaration(
    ("--embedded",),
    "embedded",
    "Embedded ClickHouse (chdb) data directory.",
    envvar=ENV_EMBEDDED,
    metavar="PATH",
    profile=True,
    attrs={"type": click.Path(file_okay=False)},
)
DATABASE = Declaration(
    ("--database", "-d"),
    "database",
    "The ClickHouse database.",
    envvar=ENV_DATABASE,
    metavar="NAME",
    profile=True,
)
DATABASE_FROM_URL = "[default: the URL's path, else yangkey]"
"""The note of ``--database`` where a server URL can name it."""


def target_options(function: F) -> F:
    """``--clickhouse URL`` or ``--embedded PATH`` (see :func:`resolve_target`)."""
    return apply_all(function, CLICKHOUSE, EMBEDDED)


_RANK = {
    ParameterSource.COMMANDLINE: 3,
    ParameterSource.ENVIRONMENT: 2,
    ParameterSource.DEFAULT_MAP: 1,
}


def _rank(ctx: click.Context, name: str, value: object) -> int:
    if value is None:
        return -1
    source = ctx.get_parameter_source(name)
    return _RANK.get(source, 0) if source is not None else 0


def resolve_target(clickhouse: str | None, embedded: str | None) -> tuple[str | None, str | None]:
    """Exactly one of (server URL, data path): the one from the stronger source (command line
    over environment over profile); both from the same source, or neither, is a usage error."""
    ctx = click.get_current_context()
    server, local = _rank(ctx, "clickhouse", clickhouse), _rank(ctx, "embedded", embedded)
    if server < 0 and local < 0:
        raise click.UsageError(
            f"give --clickhouse URL or --embedded PATH (or set {ENV_CLICKHOUSE} or "
            f"{ENV_EMBEDDED}, or a profile in yangkey.yaml)"
        )
    if server == local:
        raise click.UsageError("give one of --clickhouse URL or --embedded PATH, not both")
    return (clickhouse, None) if server > local else (None, embedded)


# ------------------------------------------------------------------- what a command reads

TOPIC = Declaration(
    ("--topic", "-t"),
    "topic",
    "Only this topic{what}.",
    metavar="NAME",
)
UNTIL = Declaration(
    ("--until",),
    "until",
    "Where reading stops (exclusive):",
    metavar="WHEN",
)
SCHEMA_REGISTRY = Declaration(
    ("--schema-registry",),
    "schema_registry",
    "A Confluent-compatible schema registry.",
    envvar=ENV_SCHEMA_REGISTRY,
    metavar="URL",
    aliases=("--url",),
    profile=True,
)
MASTER = Declaration(
    ("--master",),
    "master",
    "Spark master: local[*], local[4], spark://host:7077, yarn, k8s://…",
    metavar="URL",
)
PORT = Declaration(
    ("--port",),
    "port",
    "Port to listen on; 0 picks a free one.",
    metavar="PORT",
    attrs={"type": click.IntRange(0, 65535), "show_default": True},
)


# ---------------------------------------------------------------- what a command writes

OUTPUT = Declaration(
    ("--output", "-o"),
    "output",
    "The file to write:",
    metavar="FILE",
    attrs={"show_default": True},
)
OUTPUT_DIR = Declaration(
    ("--output-dir", "-o"),
    "output_dir",
    "The directory to write into:",
    metavar="DIR",
    attrs={"type": click.Path(file_okay=False, path_type=Path)},
)
REPORT = Declaration(
    ("--report",),
    "report",
    "Write the run's HTML report here: partitions, keys, nodes, dead letters, throughput, "
    "latency; charts inlined, opens offline.",
    metavar="PATH",
    attrs={"type": click.Path(dir_okay=False, path_type=Path), "default": None},
)


def _json_alias(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_FORMAT_META] = "json"


FORMAT = Declaration(
    ("--format",),
    "fmt",
    "Output format",
    attrs={"default": None},
)
JSON = Declaration(
    ("--json",),
    "json",
    "Deprecated: --format json.",
    alias_of="--format",
    attrs={"is_flag": True, "hidden": True, "expose_value": False, "callback": _json_alias},
)


def _piped(choices: tuple[str, ...], piped: str | None) -> str:
    return piped or ("tsv" if "tsv" in choices else choices[0])


def format_option(
    choices: tuple[str, ...] = FORMATS, *, piped: str | None = None
) -> Callable[[F], F]:
    """``--format``; without it, the first choice on a terminal and ``piped`` (default:
    ``tsv`` if it is a choice) when stdout is not one. ``--json`` stays as a hidden alias of
    ``--format json``."""
    when_piped = _piped(choices, piped)
    default = (
        choices[0]
        if when_piped == choices[0]
        else f"{choices[0]} on a terminal, {when_piped} when piped"
    )

    def decorate(function: F) -> F:
        return apply_all(
            function,
            FORMAT.but(type=click.Choice(choices), note=f"[default: {default}]."),
            JSON,
        )

    return decorate


def resolve_format(
    fmt: str | None, choices: tuple[str, ...] = FORMATS, *, piped: str | None = None
) -> str:
    """The format to print in: the explicit one, else by whether stdout is a terminal (the
    same ``choices`` and ``piped`` as the command's :func:`format_option`)."""
    if fmt is not None:
        return fmt
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(_FORMAT_META):
        return str(ctx.meta[_FORMAT_META])
    return choices[0] if sys.stdout.isatty() else _piped(choices, piped)


# ------------------------------------------------------------------------- verbosity

QUIET_META = "yangkey.quiet"

QUIET = Declaration(
    ("--quiet", "-q"),
    "quiet",
    "No progress lines (warnings and errors still show).",
    attrs={"is_flag": True},
)
VERBOSE = Declaration(
    ("--verbose", "-v"),
    "verbose",
    "{what}",
    attrs={"count": True},
)


def quiet() -> bool:
    """``yangkey -q``: progress and informational lines off (warnings and errors stay)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET_META))
