"""The ``yangkey`` group: the core commands, and the edges' commands in a lazy table.

The edges (Kafka, ClickHouse, Spark, the registry, dashboards, reports, the demo) are imported
only when their command runs, so ``yangkey key`` never pays for a JVM or a ClickHouse engine and
``yangkey --help`` imports no edge.

Exit status: 0 on success, 1 on bad input (one ``error: …`` line on stderr naming the input and
the reason), 2 on usage errors.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import click

from yangkey.cli.catalog import catalog
from yangkey.cli.core import compile_command, key, keys, normalize, topic
from yangkey.cli.declaration import PROFILE
from yangkey.cli.options import QUIET, QUIET_META, VERBOSE
from yangkey.cli.reporting import fail
from yangkey.cli.version import VERSION

EPILOG_EXAMPLES = """\b
Examples:
  yangkey compile --xpath /ietf-interfaces:interfaces/interface --json
  yangkey key --xpath /ietf-interfaces:interfaces/interface notification.json
  yangkey topic --xpath /ietf-system:system/clock --prefix netops
"""

#: Command name -> (module, attribute, short help): imported on first use.
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "kafka": (
        "yangkey.kafka.commands",
        "kafka",
        "Install, start and stop the embedded Apache Kafka broker (KRaft, loopback).",
    ),
    "ddl": (
        "yangkey.clickhouse.commands",
        "ddl",
        "Generate and apply ClickHouse DDL for a subscriptions file.",
    ),
    "ingest": (
        "yangkey.clickhouse.commands",
        "ingest",
        "Consume derived topics into embedded ClickHouse (chdb).",
    ),
    "state": ("yangkey.clickhouse.commands", "state", "Current state per message key."),
    "history": (
        "yangkey.clickhouse.commands",
        "history",
        "Page through history by key, node or time.",
    ),
    "produce": (
        "yangkey.spark.commands",
        "produce",
        "Run the Spark producer job: raw notifications -> keyed messages.",
    ),
    "sql": (
        "yangkey.clickhouse.commands",
        "sql_command",
        "Run an ad-hoc ClickHouse query and print its rows.",
    ),
    "registry": ("yangkey.registry.commands", "registry", "Confluent-API schema registry."),
    "demo": (
        "yangkey.demo.commands",
        "demo",
        "The whole pipeline on the embedded stack, with generated data.",
    ),
    "init": (
        "yangkey.demo.commands",
        "init",
        "Write a starter subscriptions.yaml and print the next commands.",
    ),
    "dashboards": (
        "yangkey.dashboards.commands",
        "dashboards",
        "Write Grafana dashboards over the typed tables of a subscriptions file.",
    ),
    "report": (
        "yangkey.report.commands",
        "report",
        "Write an HTML report of the data in ClickHouse (partitions, keys, nodes, latency).",
    ),
    "doctor": (
        "yangkey.inspection.commands",
        "doctor",
        "Check the installation and what it is pointed at (Java, extras, Kafka, ClickHouse).",
    ),
    "tail": (
        "yangkey.inspection.commands",
        "tail",
        "Print a topic's messages: key, headers and decoded value (like kcat).",
    ),
    "sample": (
        "yangkey.demo.commands",
        "sample",
        "Write example notifications (JSON lines) and their expected outcome.",
    ),
}


def show_click_error(exc: click.ClickException) -> None:
    """What click's ``show()`` prints, with our ``error:`` prefix."""
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        hint = ""
        if exc.ctx.command.get_help_option(exc.ctx) is not None:
            help_name = exc.ctx.help_option_names[0]
            hint = f"Try '{exc.ctx.command_path} {help_name}' for help.\n"
        click.echo(f"{exc.ctx.get_usage()}\n{hint}", err=True, color=exc.ctx.color)
    click.echo(f"error: {exc.format_message()}", err=True)


class LazyGroup(click.Group):
    """A group whose edge commands are imported on first use ("module:attribute")."""

    def __init__(
        self, *args: Any, lazy: dict[str, tuple[str, str, str]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help of lazy commands comes from the table, so --help imports no edge.
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy[name][2]))
            else:
                command = super().get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit=formatter.width - 20)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            module_name, attribute, _ = self.lazy[cmd_name]
            ctx.meta["yangkey.lazy_command"] = cmd_name
            command: click.Command = getattr(importlib.import_module(module_name), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's own errors (usage, a bad option value) end as ours do: ``error: …`` (after
        the usage line and the hint), not click's capitalised ``Error: …``."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            show_click_error(exc)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        # standalone_mode=False returns ctx.exit()'s code; a command itself returns None
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        # Edges import their optional libraries when they load or run: a missing one is the
        # user's install, not a bug, so it gets the error line naming the extra to install.
        try:
            return super().invoke(ctx)
        except ImportError as exc:
            from yangkey.cli.extras import missing_extra  # noqa: PLC0415

            error = missing_extra(exc, ctx.meta.get("yangkey.lazy_command"))
            if error is None:
                raise
            fail(error)


@click.group(
    cls=LazyGroup,
    lazy=LAZY_COMMANDS,
    commands=[normalize, compile_command, topic, key, keys, catalog],
    epilog=EPILOG_EXAMPLES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@VERSION
@PROFILE.but(note="The command that follows takes its defaults from it.")
@VERBOSE.but(
    what="-v: yangkey's log at INFO on stderr; -vv: at DEBUG, with every Kafka client line."
)
@QUIET.but(note="Also `yangkey -q COMMAND`'s.")
def main(verbose: int, quiet: bool) -> None:
    """yangkey: YANG Message Keys for Message Broker Integration.

    Derives a deterministic Kafka message key (node, subscription id, concrete XPaths) and a
    topic name from the YANG schema path for every YANG-Push notification, following
    draft-ietf-nmop-yang-message-broker-message-key. Also generates ClickHouse DDL, runs the
    Spark producer job and ingests into ClickHouse.
    """
    if verbose and quiet:
        raise click.UsageError("give -v or -q, not both")
    ctx = click.get_current_context()
    ctx.meta[QUIET_META] = quiet
    if verbose:
        import logging  # noqa: PLC0415
        import os  # noqa: PLC0415

        logger = logging.getLogger("yangkey")
        if not any(handler.get_name() == "yangkey-verbose" for handler in logger.handlers):
            handler = logging.StreamHandler()
            handler.set_name("yangkey-verbose")
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
        if verbose > 1:
            os.environ["YANGKEY_KAFKA_LOG"] = "1"  # librdkafka's lines, unsummarised
