"""``yangkey doctor``, ``yangkey kafka topics`` and ``yangkey tail TOPIC``.

The Kafka address comes from ``--bootstrap``, ``YANGKEY_BOOTSTRAP`` or the profile, else from
the broker ``yangkey kafka start`` recorded for this user (so on a laptop they need no flag).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any

import click
from click.core import ParameterSource

from yangkey.cli.declaration import PROFILE_USED, Declaration
from yangkey.cli.options import (
    BOOTSTRAP,
    ENV_BOOTSTRAP,
    ENV_CLICKHOUSE,
    ENV_EMBEDDED,
    ENV_SCHEMA_REGISTRY,
    SCHEMA_REGISTRY,
    format_option,
    resolve_format,
    target_options,
)
from yangkey.cli.reporting import reports_errors
from yangkey.errors import BrokerError

_ENV = {
    "bootstrap": ENV_BOOTSTRAP,
    "clickhouse": ENV_CLICKHOUSE,
    "embedded": ENV_EMBEDDED,
    "schema_registry": ENV_SCHEMA_REGISTRY,
}


def _source(name: str) -> str:
    """Where an option's value came from, for messages."""
    ctx = click.get_current_context()
    source = ctx.get_parameter_source(name)
    if source is ParameterSource.COMMANDLINE:
        return "--" + name.replace("_", "-")
    if source is ParameterSource.ENVIRONMENT:
        return _ENV.get(name, "environment")
    if source is ParameterSource.DEFAULT_MAP:
        return "profile"
    return "default"


def recorded_bootstrap() -> str | None:
    """The address of a running broker `yangkey kafka start` recorded for this user."""
    from yangkey.kafka.process import BrokerState, recorded_state_dirs  # noqa: PLC0415

    for state_dir in recorded_state_dirs():
        try:
            state = BrokerState.read(state_dir)
        except BrokerError:
            continue
        if state is not None and state.alive():
            return state.bootstrap
    return None


def _bootstrap(bootstrap: str | None) -> tuple[str | None, str]:
    if bootstrap is not None:
        return bootstrap, _source("bootstrap")
    recorded = recorded_bootstrap()
    return recorded, "the broker `yangkey kafka start` recorded"


def _need_bootstrap(bootstrap: str | None) -> str:
    """The address to use; a server that refuses connections is said at once, not after
    librdkafka's retries."""
    from yangkey.kafka.process import require_listening  # noqa: PLC0415

    found, source = _bootstrap(bootstrap)
    if found is None:
        raise click.UsageError(
            f"give --bootstrap HOST:PORT (or set {ENV_BOOTSTRAP}, a profile, or start a "
            "broker with `yangkey kafka start`)"
        )
    require_listening(found, f"start it (`yangkey kafka start`) or fix the address ({source})")
    return found


# -- doctor --------------------------------------------------------------------------------

DOCTOR_FORMATS = ("text", "json")


@click.command("doctor")
@BOOTSTRAP.but(required=False, note="[default: the broker `yangkey kafka start` recorded]")
@target_options
@SCHEMA_REGISTRY
@format_option(DOCTOR_FORMATS)
@reports_errors
def doctor(
    *,
    bootstrap: str | None,
    clickhouse: str | None,
    embedded: str | None,
    schema_registry: str | None,
    fmt: str | None,
) -> None:
    """Check the installation and what it is pointed at, one line per check (ok, warn or
    fail, then the fix after ->); exit status 1 when a check failed.

    Checks: yangkey and Python, Java, the Kafka jar cache, each extra's packages and
    versions, the native decoder, the profile (which file, which profile, chosen how),
    the bootstrap servers (do they answer), ClickHouse (a server: does it answer; an embedded
    directory: does it exist, is it locked and by whom) and the schema registry.

    \b
    Examples:
      yangkey doctor
      yangkey doctor --profile prod
      yangkey doctor --bootstrap kafka-1:9092 --embedded ch --format json | jq .
    """
    from yangkey.inspection import doctor as checks  # noqa: PLC0415

    ctx = click.get_current_context()
    profile, profile_source = ctx.meta.get(PROFILE_USED, (None, ""))
    server_rank = _source("clickhouse") if clickhouse is not None else ""
    embedded_rank = _source("embedded") if embedded is not None else ""
    if clickhouse is not None and embedded is not None:
        # the stronger source wins, as the query commands choose (command line > env > profile)
        order = ["--clickhouse", "--embedded", ENV_CLICKHOUSE, ENV_EMBEDDED, "profile"]
        if order.index(server_rank) < order.index(embedded_rank):
            embedded = None
        else:
            clickhouse = None
    address, address_source = _bootstrap(bootstrap)
    named: list[tuple[str, Callable[[], checks.Check]]] = [
        ("yangkey", checks.check_yangkey),
        ("java", checks.check_java),
        ("kafka jars", checks.check_jars),
        *((f"[{extra}]", _bound(checks.check_extra, extra)) for extra in checks.EXTRAS),
        ("native", checks.check_native),
        ("profile", lambda: checks.check_profile(profile, profile_source)),
        ("bootstrap", lambda: checks.check_bootstrap(address, address_source)),
        (
            "clickhouse",
            lambda: checks.check_clickhouse(
                clickhouse, embedded, server_rank if clickhouse else embedded_rank
            ),
        ),
        (
            "registry",
            lambda: checks.check_registry(
                schema_registry, _source("schema_registry") if schema_registry else ""
            ),
        ),
    ]
    results = checks.run_all(named)
    if resolve_format(fmt, DOCTOR_FORMATS) == "json":
        for result in results:
            click.echo(json.dumps(result.as_dict()))
    else:
        width = max(len(result.name) for result in results)
        for result in results:
            line = result.line(width)
            click.echo(click.style(line, fg=_COLOUR[result.status]) if _tty() else line)
    failed = [result.name for result in results if result.status == "fail"]
    if failed:
        click.echo(f"error: doctor: {len(failed)} check(s) failed: {', '.join(failed)}", err=True)
        ctx.exit(1)


_COLOUR = {"ok": "green", "warn": "yellow", "fail": "red"}


def _tty() -> bool:
    import sys  # noqa: PLC0415

    return sys.stdout.isatty()


def _bound(function: Callable[[str], Any], argument: str) -> Callable[[], Any]:
    return lambda: function(argument)


# -- kafka topics --------------------------------------------------------------------------

TOPIC_COLUMNS = ("name", "partitions", "replication", "cleanup_policy", "messages")


@click.command("topics")
@BOOTSTRAP.but(required=False, note="[default: the broker `yangkey kafka start` recorded]")
@click.option("--internal", is_flag=True, help="Also Kafka's internal topics (__*).")
@format_option()
@reports_errors
def topics(*, bootstrap: str | None, internal: bool, fmt: str | None) -> None:
    """List the topics: partitions, replication factor, cleanup policy (compact or delete)
    and messages (the offsets held: for a transactional or compacted topic an upper bound,
    as each transaction's commit marker takes an offset).

    \b
    Examples:
      yangkey kafka topics
      yangkey kafka topics --bootstrap kafka-1:9092 --format json | jq -r .name
    """
    from yangkey.cli.output import emit_rows  # noqa: PLC0415
    from yangkey.inspection.topics import list_topics  # noqa: PLC0415
    from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415

    address = _need_bootstrap(bootstrap)
    with quiet_librdkafka():
        found = list_topics(address, internal=internal)
    rows = [topic.as_dict() for topic in found]
    emit_rows(rows, resolve_format(fmt), columns=TOPIC_COLUMNS, title=f"topics of {address}")


# -- tail ----------------------------------------------------------------------------------

TAIL_FORMATS = ("text", "json")

MAX_MESSAGES = Declaration(
    ("--max-messages", "-c"),
    "max_messages",
    "Stop after this many messages (kcat's -c; -n is --node in yangkey).",
    metavar="N",
    attrs={"type": click.IntRange(1)},
)


@click.command("tail")
@click.argument("topic")
@BOOTSTRAP.but(required=False, note="[default: the broker `yangkey kafka start` recorded]")
@click.option(
    "--from-beginning", is_flag=True, help="Start at the oldest message [default: new ones only]."
)
@MAX_MESSAGES
@click.option(
    "--exit-at-end", "-e", is_flag=True, help="Stop once every partition is read to its end."
)
@SCHEMA_REGISTRY.but(note="Decodes registry-framed values (Confluent wire format) by schema id.")
@format_option(TAIL_FORMATS)
@reports_errors
def tail(
    *,
    topic: str,
    bootstrap: str | None,
    from_beginning: bool,
    max_messages: int | None,
    exit_at_end: bool,
    schema_registry: str | None,
    fmt: str | None,
) -> None:
    """Print TOPIC's messages as they come, like kcat: partition, offset, time, the key
    (its LFs as \\n), headers and the value decoded (JSON and XML pretty-printed, Avro or JSON
    framed with a schema id decoded through the registry). Reads committed messages, joins no
    consumer group and commits nothing. Ctrl-C stops it.

    \b
    Examples:
      yangkey tail netops-current-state-if-interfaces-interface --from-beginning -c 5
      yangkey tail netops-history-system-clock              # new messages, until Ctrl-C
      yangkey tail TOPIC --from-beginning -e --format json | jq -r .key
      yangkey tail TOPIC --schema-registry http://127.0.0.1:8081 --from-beginning
    """
    from yangkey.inspection.tail import Schemas, read, show  # noqa: PLC0415
    from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415

    address = _need_bootstrap(bootstrap)
    as_json = resolve_format(fmt, TAIL_FORMATS) == "json"
    schemas = Schemas(schema_registry)
    stop = _Stop()
    with quiet_librdkafka(), stop:
        messages = read(
            address,
            topic,
            from_beginning=from_beginning,
            count=max_messages,
            exit_at_end=exit_at_end,
            should_stop=stop,
        )
        first = True
        for message in messages:
            shown = show(message, schemas)
            if as_json:
                click.echo(json.dumps(shown.as_json(), ensure_ascii=False, default=str))
            else:
                click.echo(("" if first else "\n") + shown.as_text())
            first = False


class _Stop:
    """Ctrl-C and SIGTERM end the read between messages (no KeyboardInterrupt trace)."""

    def __init__(self) -> None:
        self.stopped = False
        self._previous: list[Any] = []

    def __call__(self) -> bool:
        return self.stopped

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.stopped = True

    def __enter__(self) -> _Stop:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous.append((signum, signal.signal(signum, self._handle)))
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous:
            signal.signal(signum, previous)


__all__ = ["doctor", "tail", "topics"]
