"""The options that several commands take, declared once so that every command names them the
same way: the same long name, the same short form, the same environment variable (shown in
``--help``) and the same profile field.

Where a value comes from, first wins: the command line, the environment, the profile
(``yangkey.yaml``, see :mod:`yangkey.profile`, fed to click as the context's ``default_map``),
the option's default. For the ClickHouse target this order also settles ``--clickhouse``
against ``--embedded``: an explicit ``--embedded PATH`` wins over ``YANGKEY_CLICKHOUSE_URL``
(:func:`resolve_target`).

Imports nothing heavy: every command's ``--help`` goes through here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

F = TypeVar("F", bound=Callable[..., Any])

ENV_SUBSCRIPTIONS = "YANGKEY_SUBSCRIPTIONS"
ENV_BOOTSTRAP = "YANGKEY_BOOTSTRAP"
ENV_CLICKHOUSE = "YANGKEY_CLICKHOUSE_URL"
ENV_EMBEDDED = "YANGKEY_EMBEDDED"
ENV_DATABASE = "YANGKEY_DATABASE"
ENV_PROFILE = "YANGKEY_PROFILE"
ENV_SCHEMA_REGISTRY = "YANGKEY_SCHEMA_REGISTRY"
ENV_CATALOG_TOPIC = "YANGKEY_CATALOG_TOPIC"

#: Output formats of the commands that print rows.
FORMATS = ("table", "tsv", "csv", "json")
_FORMAT_META = "yangkey.format"


def _apply(function: F, *decorators: Callable[[F], F]) -> F:
    # Listed top to bottom as in --help; decorators apply bottom-up.
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _load_profile(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    from yangkey.errors import YangkeyError  # noqa: PLC0415
    from yangkey.profile import profile_defaults  # noqa: PLC0415
    from yangkey.reporting import fail  # noqa: PLC0415

    # The group's --profile (yangkey --profile NAME state …) reaches leaf commands via meta.
    name = value
    if ctx.get_parameter_source("profile") is not ParameterSource.COMMANDLINE:
        name = ctx.meta.get(PROFILE_META) or value
    try:
        options = {
            flag: param.name
            for param in ctx.command.params
            if isinstance(param, click.Option) and param.name
            for flag in param.opts
            if flag.startswith("--")
        }
        defaults = profile_defaults(name, options)
    except YangkeyError as error:
        fail(error)
    if defaults:
        ctx.default_map = {**defaults, **(ctx.default_map or {})}


PROFILE_META = "yangkey.profile"


def profile_option(function: F) -> F:
    """``--profile NAME``: eager, so the profile's values are the defaults of the options
    processed after it. Once per command, however many shared options bring it."""
    params = getattr(function, "__click_params__", [])
    if any(param.name == "profile" for param in params):
        return function
    return click.option(
        "--profile",
        metavar="NAME",
        envvar=ENV_PROFILE,
        show_envvar=True,
        is_eager=True,
        expose_value=False,
        callback=_load_profile,
        help="Take defaults from this profile of ./yangkey.yaml (else its default profile).",
    )(function)


def subscriptions_option(function: F) -> F:
    """``--subscriptions/-s FILE`` (must exist: a missing file is a usage error),
    ``--yang-dir`` and ``--strict``."""
    return subscriptions_options()(function)


def subscriptions_options(
    *,
    required: bool = True,
    name: str = "subscriptions",
    help_text: str = "The subscriptions file (YAML).",
) -> Callable[[F], F]:
    """:func:`subscriptions_option`, optional for the commands that can read the shared
    catalog instead."""

    def decorate(function: F) -> F:
        return _apply(
            function,
            profile_option,
            click.option(
                "--subscriptions",
                "-s",
                name,
                required=required,
                default=None,
                envvar=ENV_SUBSCRIPTIONS,
                show_envvar=True,
                type=click.Path(exists=True, dir_okay=False),
                help=help_text,
            ),
            yang_dir_option,
            strict_option,
        )

    return decorate


def subscription_filter_options(what: str, node_help: str = "") -> Callable[[F], F]:
    """``--node/-n NAME`` and ``--subscription-id/-i ID``: a subscription is identified by
    (node, id), ids being per device (RFC 8639)."""

    def decorate(function: F) -> F:
        return _apply(
            function,
            click.option(
                "--node",
                "-n",
                default=None,
                metavar="NAME",
                help=node_help or f"Only {what} of this node.",
            ),
            click.option(
                "--subscription-id",
                "-i",
                type=click.IntRange(0, 2**32 - 1),
                default=None,
                metavar="ID",
                help=f"Only {what} of this subscription id (ids are per device: on every node "
                "unless --node names one).",
            ),
        )

    return decorate


def strict_option(function: F) -> F:
    return click.option(
        "--strict",
        is_flag=True,
        help="Stop at the first subscription of the file that does not compile. Default: "
        "report it (file, line, reason), skip it and run the others; its notifications go "
        "to the dead-letter topic.",
    )(function)


def yang_dir_option(function: F) -> F:
    return click.option(
        "--yang-dir",
        "yang_dirs",
        multiple=True,
        type=click.Path(file_okay=False),
        help="Directory of .yang modules, searched before $YANGKEY_YANG_PATH and the modules "
        "shipped with pyang. Repeatable.",
    )(function)


def bootstrap_option(*, required: bool = True, help_text: str | None = None) -> Callable[[F], F]:
    def decorate(function: F) -> F:
        return _apply(
            function,
            profile_option,
            click.option(
                "--bootstrap",
                "-b",
                "bootstrap",
                required=required,
                envvar=ENV_BOOTSTRAP,
                show_envvar=True,
                metavar="HOST:PORT",
                help=help_text or "Kafka bootstrap servers.",
            ),
        )

    return decorate


def schema_registry_option(
    *,
    required: bool = True,
    name: str = "url",
    help_text: str = "A Confluent-compatible schema registry.",
) -> Callable[[F], F]:
    """``--schema-registry URL`` (``--url``, its older spelling, still works)."""

    def decorate(function: F) -> F:
        return _apply(
            function,
            profile_option,
            click.option(
                "--schema-registry",
                "--url",
                name,
                required=required,
                envvar=ENV_SCHEMA_REGISTRY,
                show_envvar=True,
                metavar="URL",
                help=help_text,
            ),
        )

    return decorate


EXAMPLE_SETTING = {"producer": "compression.type=zstd", "consumer": "security.protocol=SSL"}


def kafka_config_options(
    what: str, *, short: bool = True, name: str = "kafka_config", aliases: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """``-X KEY=VALUE`` (repeatable, like kcat's) and ``--<what>-config-file FILE``
    (``aliases``: older spellings of the file option)."""
    flags = ("-X", f"--{what}-config") if short else (f"--{what}-config",)

    def decorate(function: F) -> F:
        return _apply(
            function,
            click.option(
                *flags,
                name,
                multiple=True,
                metavar="KEY=VALUE",
                help=f"librdkafka {what} setting (repeatable), e.g. {flags[0]} "
                f"{EXAMPLE_SETTING.get(what, 'security.protocol=SSL')}; secrets are better "
                "given as YANGKEY_KAFKA_<KEY> variables.",
            ),
            click.option(
                f"--{what}-config-file",
                *aliases,
                f"{name}_file",
                type=click.Path(exists=True, dir_okay=False),
                default=None,
                help=f"Properties file of librdkafka {what} settings (key=value lines).",
            ),
        )

    return decorate


def target_options(function: F) -> F:
    """``--clickhouse URL`` or ``--embedded PATH`` (see :func:`resolve_target`)."""
    return _apply(
        function,
        profile_option,
        click.option(
            "--clickhouse",
            envvar=ENV_CLICKHOUSE,
            show_envvar=True,
            metavar="URL",
            default=None,
            help="Server URL http[s]://user@host:port[/database]; password in CLICKHOUSE_PASSWORD.",
        ),
        embedded_option(required=False),
    )


def embedded_option(*, required: bool) -> Callable[[F], F]:
    return click.option(
        "--embedded",
        envvar=ENV_EMBEDDED,
        show_envvar=True,
        required=required,
        metavar="PATH",
        type=click.Path(file_okay=False),
        default=None,
        help="Embedded ClickHouse (chdb) data directory.",
    )


def database_option(default: str | None = None) -> Callable[[F], F]:
    return click.option(
        "--database",
        "-d",
        envvar=ENV_DATABASE,
        show_envvar=True,
        default=default,
        show_default=default is not None,
        help="Database" + ("" if default else " [default: the URL's path, else yangkey]") + ".",
    )


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


def _json_alias(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_FORMAT_META] = "json"


def _piped(choices: tuple[str, ...], piped: str | None) -> str:
    return piped or ("tsv" if "tsv" in choices else choices[0])


def format_option(
    choices: tuple[str, ...] = FORMATS, *, piped: str | None = None
) -> Callable[[F], F]:
    """``--format``; without it, the first choice on a terminal and ``piped`` (default:
    ``tsv`` if it is a choice) when stdout is not one. ``--json`` stays as a hidden alias of
    ``--format json``."""
    when_piped = _piped(choices, piped)

    def decorate(function: F) -> F:
        return _apply(
            function,
            click.option(
                "--format",
                "fmt",
                type=click.Choice(choices),
                default=None,
                help="Output format [default: "
                + (
                    choices[0]
                    if when_piped == choices[0]
                    else f"{choices[0]} on a terminal, {when_piped} when piped"
                )
                + "].",
            ),
            click.option(
                "--json",
                is_flag=True,
                hidden=True,
                expose_value=False,
                callback=_json_alias,
                help="Deprecated: --format json.",
            ),
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


#: ``--catalog-topic``: the shared catalog's topic (yangkey.kafka.catalog_topic.CATALOG_TOPIC,
#: spelled out here because importing that module loads the Kafka client for every --help).
catalog_topic_option = click.option(
    "--catalog-topic",
    default="_yangkey_catalog",
    show_default=True,
    envvar=ENV_CATALOG_TOPIC,
    help="The shared catalog's compacted topic.",
)


def report_option(*, default_help: str | None = None) -> Callable[[F], F]:
    """``--report PATH``: also write the run's HTML report (:mod:`yangkey.report`) there."""
    where = f" [default: {default_help}]" if default_help else ""
    return click.option(
        "--report",
        "report",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="PATH",
        help="Write the run's HTML report here: partitions, keys, nodes, dead letters, "
        f"throughput, latency; charts inlined, opens offline{where}.",
    )
