"""The demo's commands: ``yangkey demo`` (:mod:`yangkey.demo.pipeline`), ``yangkey init``
and ``yangkey sample`` (:mod:`yangkey.demo.sample`)."""

from __future__ import annotations

import contextlib
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console

from yangkey.cli.declaration import Declaration
from yangkey.cli.options import (
    BOOTSTRAP,
    MASTER,
    OUTPUT,
    REPORT,
    SCHEMA_REGISTRY,
    SUBSCRIPTIONS,
)
from yangkey.cli.reporting import reports_errors
from yangkey.demo.pipeline import (
    EXAMPLE,
    example_subscriptions,
    run_demo,
    show,
    show_where,
)
from yangkey.demo.sample import MIN_COUNT, expected_document, generate, generate_count, iter_jsonl
from yangkey.errors import InputError

INTERFACES = Declaration(
    # yangkey sample and yangkey demo build the same data.
    ("--interfaces",),
    "interfaces",
    "Interfaces per node.",
    metavar="N",
    attrs={"type": click.IntRange(2, 10_000), "default": 6, "show_default": True},
)


@click.command()
@SUBSCRIPTIONS.but(
    required=False,
    with_profile=False,
    note="[default: the example that ships with yangkey, the one `yangkey init` writes]",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".yangkey/demo"),
    show_default=True,
    help="Where the generated notifications and the chdb data go.",
)
@BOOTSTRAP.but(
    required=False, with_profile=False, note="Use them instead of starting the embedded broker."
)
@click.option(
    "--nodes",
    type=click.IntRange(1, 10_000),
    default=4,
    show_default=True,
    help="Nodes sending telemetry.",
)
@INTERFACES
@click.option(
    "--rounds",
    type=click.IntRange(0, 10_000),
    default=3,
    show_default=True,
    help="On-change rounds per node.",
)
@MASTER.but(default="local[*]", show_default=True)
@SCHEMA_REGISTRY.but(with_profile=False, note="Use it instead of starting one beside the broker.")
@REPORT.but(note="[default: WORKDIR/report.html]")
@reports_errors
def demo(
    subscriptions: str | None,
    workdir: Path,
    bootstrap: str | None,
    nodes: int,
    interfaces: int,
    rounds: int,
    master: str,
    schema_registry: str | None,
    report: Path | None,
) -> None:
    """Run the whole pipeline on the embedded stack, on generated data.

    Starts Apache Kafka (KRaft, loopback) and the schema registry beside it, applies the
    ClickHouse DDL to chdb, runs the Spark producer job over generated YANG-Push notifications
    (several nodes, interfaces, hardware, on-change yang-patch updates and deletes, a replayed
    older message, a few bad notifications) with each topic's value schema registered, ingests
    into chdb, prints the current state per node, the messages per topic and partition, the
    registry's subjects and ids and the dead letters, and checks them; ends by writing the
    run's HTML report (partitions, keys, nodes, dead letters, throughput, latency). Exit
    status 1 if a check fails.

    \b
    Example:
      yangkey demo --nodes 8 --interfaces 24
    """
    # Wide enough for XPaths when the output goes to a file or a CI log.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    with contextlib.ExitStack() as stack:
        path = (
            Path(subscriptions)
            if subscriptions is not None
            else stack.enter_context(example_subscriptions())
        )
        result = run_demo(
            path,
            workdir,
            bootstrap=bootstrap,
            nodes=nodes,
            interfaces=interfaces,
            rounds=rounds,
            master=master,
            # progress lines stay whole when stderr is a file or a CI log
            console=Console(stderr=True, soft_wrap=not sys.stderr.isatty()),
            schema_registry=schema_registry,
        )
    show(result, console)
    from yangkey.report.runs import write  # noqa: PLC0415

    written = write(result.report, report or workdir / "report.html")
    console.print(f"[green]✓[/green] report: {written} (one HTML file; open it in a browser)")
    show_where(result, workdir, console)
    if result.problems:
        sys.exit(1)


@click.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing subscriptions.yaml.")
@reports_errors
def init(directory: Path, force: bool) -> None:
    """Write a starter subscriptions.yaml into DIRECTORY (default: here).

    The file is commented and uses the IETF modules that ship with yangkey (interfaces,
    counters, IPv4 addresses, hardware, system clock, DNS search list); edit it, then follow
    the commands printed at the end.

    \b
    Example:
      yangkey init telemetry && cd telemetry
    """
    target = directory / EXAMPLE
    if target.exists() and not force:
        raise InputError(
            "already exists; edit it, or pass --force to overwrite", source=str(target)
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with example_subscriptions() as example:
            shutil.copyfile(example, target)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", source=str(target)) from None
    shown = shlex.quote(str(target) if directory != Path(".") else EXAMPLE)
    click.echo(f"wrote {target}")
    click.echo("next:\n" + "\n".join(f"  {line}" for line in next_steps(shown)))


def next_steps(subscriptions: str) -> list[str]:
    """What ``init`` prints: from the file to current state in ClickHouse (the README's
    walkthrough), as shell lines; ``#`` lines say what the next ones do."""
    return [
        "# what each subscription compiles to (branches, key templates, topics)",
        f"yangkey catalog show --subscriptions {subscriptions}",
        "# the whole pipeline on generated data: Kafka, Spark and ClickHouse on this machine",
        f"yangkey demo --subscriptions {subscriptions}",
        "# or step by step: notifications (JSON lines; or your own) keyed onto their topics",
        "yangkey sample -o notifications.jsonl --expected expected.json",
        "BOOTSTRAP=$(yangkey kafka start)     # a broker on 127.0.0.1 (again: the same one)",
        f"yangkey produce --subscriptions {subscriptions} --input notifications.jsonl"
        ' --bootstrap "$BOOTSTRAP" --create-topics',
        "# into embedded ClickHouse (./ch), then current state and history per node",
        f'yangkey ingest --subscriptions {subscriptions} --bootstrap "$BOOTSTRAP" --embedded ch',
        "yangkey state --node pe1.nyc --embedded ch",
        "yangkey history --node pe1.nyc --limit 5 --embedded ch",
        "yangkey kafka stop",
    ]


@click.command("sample")
@OUTPUT.but(
    type=click.File("wb", atomic=True),
    default="-",
    note="the notifications, one per line (JSON or XML); - is stdout.",
)
@click.option(
    "--count",
    type=click.IntRange(MIN_COUNT, 1_000_000),
    default=None,
    help="Exactly this many notifications, spread over as many nodes as it takes"
    " [default: the demo's 4 nodes, 68 notifications]. The data set is built in memory"
    " (about 4 KB per notification): repeat with other --seed values for more.",
)
@INTERFACES
@click.option(
    "--seed",
    type=int,
    default=7,
    show_default=True,
    help="Random seed: same seed, same notifications (event times aside).",
)
@click.option(
    "--expected",
    "expected_file",
    type=click.File("wb", atomic=True),
    default=None,
    help="Also write the expected outcome as JSON: notification and rejected counts, the"
    " newest event time per message key, each interface's last oper-status.",
)
def sample(output: Any, count: int | None, interfaces: int, seed: int, expected_file: Any) -> None:
    """Write example YANG-Push notifications for the example subscriptions (`yangkey init`).

    The demo's data set: several nodes stream interface state (sync-on-start, then on-change
    yang-patch edits and a delete), counters, IPv4 addresses, hardware inventory, the system
    clock and DNS search domains, as JSON and XML, in every envelope yangkey reads. A replayed
    older update and 4 bad notifications (dead-lettered by `produce`) are mixed in. Event times
    start an hour ago (to the minute): the tables expire rows by event time plus retention.

    \b
    Examples:
      yangkey sample -o notifications.jsonl --expected expected.json
      yangkey sample --count 200000 --seed 1 -o big.jsonl
      yangkey sample | head -1 > notification.json
    """
    if count is None:
        data = generate(interfaces=interfaces, seed=seed)
    else:
        data = generate_count(count, interfaces, seed)
    with output:
        output.writelines(iter_jsonl(data.records))
    if expected_file is not None:
        with expected_file:
            expected_file.write(
                orjson.dumps(expected_document(data), option=orjson.OPT_INDENT_2) + b"\n"
            )
    where = "stdout" if output.name == "<stdout>" else output.name
    click.echo(
        f"wrote {len(data.records):,} notifications ({data.expected.bad} bad) to {where};"
        f" {len(data.expected.current):,} message keys expected in current state",
        err=True,
    )
