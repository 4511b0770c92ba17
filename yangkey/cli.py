"""The ``yangkey`` command line.

Core commands (normalize, compile, key, keys, topic, catalog) live here; the edges (Kafka,
ClickHouse, Spark, demo) are imported only when their command runs, so ``yangkey key`` never
pays for a JVM or a ClickHouse engine.

Exit status: 0 on success, 1 on bad input (one ``error: …`` line on stderr naming the input and
the reason), 2 on usage errors.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from yangkey.errors import EmptyUpdate, InputError, YangkeyError
from yangkey.options import (
    ENV_PROFILE,
    PROFILE_META,
    catalog_topic_option,
    format_option,
    resolve_format,
    subscription_filter_options,
    subscriptions_options,
)
from yangkey.reporting import fail, reports_errors

F = TypeVar("F", bound=Callable[..., Any])

EPILOG_EXAMPLES = """\b
Examples:
  yangkey compile --xpath /ietf-interfaces:interfaces/interface --json
  yangkey key --xpath /ietf-interfaces:interfaces/interface notification.json
  yangkey topic --xpath /ietf-system:system/clock --prefix netops
"""


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

    def invoke(self, ctx: click.Context) -> Any:
        # Edges import their optional libraries when they load or run: a missing one is the
        # user's install, not a bug, so it gets the error line naming the extra to install.
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            from yangkey.extras import missing_extra  # noqa: PLC0415

            error = missing_extra(exc, ctx.meta.get("yangkey.lazy_command"))
            if error is None:
                raise
            fail(error)


def read_input(path: str, limit: int | None = None) -> bytes:
    """A file (or ``-``, stdin) of at most ``limit`` bytes (default: the notification cap)."""
    from yangkey.inputs import MAX_NOTIFICATION_BYTES, read_bounded  # noqa: PLC0415

    return read_bounded(path, MAX_NOTIFICATION_BYTES if limit is None else limit)


def _store_features(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    from yangkey.library import parse_feature_options  # noqa: PLC0415 - keeps --help fast

    try:
        ctx.meta[FEATURES_META] = parse_feature_options(value)
    except YangkeyError as error:
        raise click.BadParameter(error.reason) from None


FEATURES_META = "yangkey.features"


def schema_options(function: F) -> F:
    # --features reaches compile_from_options through the click context, so that commands
    # need no extra parameter.
    function = click.option(
        "--features",
        multiple=True,
        metavar="MODULE:F1,F2",
        expose_value=False,
        callback=_store_features,
        help="Enable only these features of MODULE (MODULE: for none); modules not named have "
        "every feature on. Repeatable.",
    )(function)
    function = click.option(
        "--yang-library",
        type=click.Path(dir_okay=False),
        help="An explicit YANG library file, JSON or XML, RFC 8525 (yang-library) or RFC 7895 "
        "(modules-state), used as given instead of the module set computed from the "
        "subscription.",
    )(function)
    function = click.option(
        "--yang-dir",
        "yang_dirs",
        multiple=True,
        type=click.Path(file_okay=False),
        help="Directory of .yang modules, searched before $YANGKEY_YANG_PATH and the IETF/IANA "
        "modules shipped with pyang. Repeatable.",
    )(function)
    return function


def filter_options(function: F) -> F:
    function = click.option(
        "--keyless",
        type=click.Choice(["reject", "position"]),
        default="reject",
        show_default=True,
        help="What to do with a keyless list on the path: reject the subscription, or identify "
        "entries by their position in the notification.",
    )(function)
    function = click.option(
        "--namespace",
        "namespaces",
        multiple=True,
        metavar="PREFIX=URI",
        help="XML prefix of the subscription XPath and the namespace it stands for (for "
        "XML-prefix qualified paths such as /if:interfaces/if:interface). Repeatable.",
    )(function)
    function = click.option(
        "--subtree",
        type=click.Path(dir_okay=False),
        help="File holding a subtree filter (RFC 6241 section 6), with or without <filter>.",
    )(function)
    function = click.option(
        "--xpath", help="The subscription XPath, e.g. /ietf-interfaces:interfaces/interface."
    )(function)
    return schema_options(function)


def topic_options(function: F) -> F:
    function = click.option(
        "--max-length",
        type=click.IntRange(20, 249),
        default=249,
        show_default=True,
        help="Topic name limit (Kafka: 249); longer names are cut and get an FNV-1a suffix.",
    )(function)
    function = click.option(
        "--prefix", help="Organisation topic prefix, e.g. netops -> netops-if-interfaces-interface."
    )(function)
    return function


def compile_from_options(
    xpath: str | None,
    subtree: str | None,
    yang_dirs: tuple[str, ...],
    yang_library: str | None,
    namespaces: tuple[str, ...],
    keyless: str,
) -> Any:
    from yangkey.schema import SchemaContext  # noqa: PLC0415 - keeps --help fast
    from yangkey.schema_cache import cached_compilation  # noqa: PLC0415
    from yangkey.templates import compile_subscription  # noqa: PLC0415

    if (xpath is None) == (subtree is None):
        raise click.UsageError("give exactly one of --xpath or --subtree")
    ns_map: dict[str, str] = {}
    for item in namespaces:
        prefix, equals, uri = item.partition("=")
        if not equals or not prefix or not uri:
            raise click.UsageError(f"--namespace {item!r}: expected PREFIX=URI")
        ns_map[prefix] = uri
    context = click.get_current_context(silent=True)
    features = context.meta.get(FEATURES_META, {}) if context is not None else {}
    schema = SchemaContext.cached(yang_dirs, features)
    text = xpath if subtree is None else read_input(subtree).decode("utf-8", "replace")
    assert text is not None
    library_bytes: bytes | None = None
    if yang_library:
        try:
            library_bytes = Path(yang_library).read_bytes()
        except OSError:
            library_bytes = None  # with_library below reports it

    def build() -> tuple[Any, SchemaContext]:
        used = schema
        if yang_library:
            used = SchemaContext(schema.search_path, features).with_library(yang_library)
        compiled = compile_subscription(
            text,
            used,
            subtree=subtree is not None,
            namespaces=ns_map,
            keyless=keyless,  # type: ignore[arg-type]
            source=subtree if subtree is not None else text,
        )
        return compiled, used

    if yang_library and library_bytes is None:
        return build()[0]
    request = (text, subtree is not None, subtree, sorted(ns_map.items()), keyless, library_bytes)
    return cached_compilation(schema, request, build)


@click.group(
    cls=LazyGroup,
    lazy={
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
            "yangkey.demo",
            "demo",
            "The whole pipeline on the embedded stack, with generated data.",
        ),
        "init": (
            "yangkey.demo",
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
        "sample": (
            "yangkey.sample",
            "sample",
            "Write example notifications (JSON lines) and their expected outcome.",
        ),
    },
    epilog=EPILOG_EXAMPLES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _print_version(ctx, value),
    help="Show the version and which decode path runs (native or python), then exit.",
)
@click.option(
    "--profile",
    metavar="NAME",
    envvar=ENV_PROFILE,
    show_envvar=True,
    help="The profile of ./yangkey.yaml whose values are the defaults of every command's "
    "options (below the command line and the environment).",
)
@click.pass_context
def main(ctx: click.Context, profile: str | None) -> None:
    """yangkey: YANG Message Keys for Message Broker Integration.

    Derives a deterministic Kafka message key (node, subscription id, concrete XPaths) and a
    topic name from the YANG schema path for every YANG-Push notification, following
    draft-ietf-nmop-yang-message-broker-message-key. Also generates ClickHouse DDL, runs the
    Spark producer job and ingests into ClickHouse.
    """
    # Read by each command's own --profile option (yangkey.options), which loads the file.
    ctx.meta[PROFILE_META] = profile


def _print_version(ctx: click.Context, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version  # noqa: PLC0415

    from yangkey.native import status  # noqa: PLC0415 (imports the notification model)

    click.echo(f"yangkey, version {version('yangkey')}\ndecode path: {status()}")
    ctx.exit()


@main.command()
@click.argument("filter_file")
@schema_options
@reports_errors
def normalize(filter_file: str, yang_dirs: tuple[str, ...], yang_library: str | None) -> None:
    """Phase 1: print the XPath union of a subtree filter (FILTER_FILE, or - for stdin).

    \b
    Examples:
      yangkey normalize filter.xml
      echo '<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><clock/></system>' \\
        | yangkey normalize -
    """
    from yangkey.schema import SchemaContext  # noqa: PLC0415
    from yangkey.subtree import normalize_subtree  # noqa: PLC0415

    source = "<stdin>" if filter_file == "-" else filter_file
    schema = SchemaContext.cached(yang_dirs)
    click.echo(normalize_subtree(read_input(filter_file), schema.index, source))


def _topics(compiled: Any, prefix: str | None, max_length: int) -> list[str]:
    from yangkey.topics import TopicNamer  # noqa: PLC0415

    namer = TopicNamer(prefix=prefix, max_length=max_length)
    return [namer.name(branch) for branch in compiled.branches]


@main.command(name="compile")
@filter_options
@topic_options
@format_option(piped="table")
@click.option(
    "--show-walker",
    is_flag=True,
    help="Also print the Python source of each branch's generated Phase 3 walker (with --json: "
    "a 'walker' member per branch).",
)
@reports_errors
def compile_command(
    xpath: str | None,
    subtree: str | None,
    yang_dirs: tuple[str, ...],
    yang_library: str | None,
    namespaces: tuple[str, ...],
    keyless: str,
    prefix: str | None,
    max_length: int,
    fmt: str | None,
    show_walker: bool,
) -> None:
    """Phase 2: key templates, extraction specs, target kinds and topics of a subscription.

    \b
    Example:
      yangkey compile --json --xpath \\
        "/ietf-interfaces:interfaces/interface[name='eth0']/ietf-ip:ipv4/address"
    """
    compiled = compile_from_options(xpath, subtree, yang_dirs, yang_library, namespaces, keyless)
    topics = _topics(compiled, prefix, max_length)
    branches = [
        {
            "xpath": branch.xpath,
            "template": branch.template,
            "extractions": list(branch.extractions),
            "target": branch.target,
            "topic": topic,
        }
        for branch, topic in zip(compiled.branches, topics, strict=True)
    ]
    if show_walker:
        from yangkey.keys import walker_source  # noqa: PLC0415

        for item, branch in zip(branches, compiled.branches, strict=True):
            item["walker"] = walker_source(branch)
    # A document for people (the walkers' source follows the table): a table even piped.
    used = resolve_format(fmt, piped="table")
    if used == "json":
        document = {"branches": branches, "warnings": list(compiled.warnings)}
        click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        return
    if used != "table":
        from yangkey.output import emit_rows  # noqa: PLC0415

        emit_rows(branches, used)
        for warning in compiled.warnings:
            click.echo(f"warning: {warning}", err=True)
        return
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    # XPaths are full of [...] that rich would take for markup: cells are Text, not markup.
    table = Table("template", "extractions", "target", "topic", title=Text(compiled.xpath))
    for item in branches:
        table.add_row(
            Text(str(item["template"])),
            Text("\n".join(item["extractions"])),
            str(item["target"]),
            str(item["topic"]),
        )
    console = Console()
    console.print(table)
    for warning in compiled.warnings:
        console.print(Text("warning: ", style="yellow") + Text(warning))
    for item in branches if show_walker else ():
        # Plain text: generated code is full of [...] that rich would take for markup.
        click.echo(f"\n{item['walker']}", nl=False)


@main.command()
@filter_options
@topic_options
@reports_errors
def topic(
    xpath: str | None,
    subtree: str | None,
    yang_dirs: tuple[str, ...],
    yang_library: str | None,
    namespaces: tuple[str, ...],
    keyless: str,
    prefix: str | None,
    max_length: int,
) -> None:
    """Print the topic name of each subscription branch, one per line.

    \b
    Example:
      yangkey topic --xpath /ietf-interfaces:interfaces/interface --prefix netops
      -> netops-if-interfaces-interface
    """
    compiled = compile_from_options(xpath, subtree, yang_dirs, yang_library, namespaces, keyless)
    for name in _topics(compiled, prefix, max_length):
        click.echo(name)


def _key_document(derived: Any, topics: list[str]) -> dict[str, Any]:
    return {
        "key": derived.key.decode("utf-8"),
        "node": derived.node,
        "subscription_id": derived.subscription_id,
        "xpaths": list(derived.xpaths),
        "topics": [t for t, found in zip(topics, derived.branch_xpaths, strict=True) if found],
    }


def key_options(function: F) -> F:
    function = click.option(
        "--max-bytes",
        type=click.IntRange(1, 2**31 - 1),
        default=16 * 1024 * 1024,
        show_default=True,
        help="Refuse a notification (or a line) longer than this.",
    )(function)
    function = click.option(
        "--subscription-id",
        type=click.IntRange(0, 0xFFFFFFFF),
        help="Override the notification's id (a uint32).",
    )(function)
    function = click.option(
        "--node", help="Node name; overrides the notification's hostname / manifest name."
    )(function)
    return function


KEY_FORMATS = ("key", "json")


@main.command()
@filter_options
@topic_options
@key_options
@format_option(KEY_FORMATS)
@click.argument("notification", default="-")
@reports_errors
def key(
    xpath: str | None,
    subtree: str | None,
    yang_dirs: tuple[str, ...],
    yang_library: str | None,
    namespaces: tuple[str, ...],
    keyless: str,
    prefix: str | None,
    max_length: int,
    node: str | None,
    subscription_id: int | None,
    max_bytes: int,
    fmt: str | None,
    notification: str,
) -> None:
    """Phase 3: print the message key of one notification (file, or - for stdin).

    The key is written exactly: node, subscription id and the concrete XPaths on three lines
    separated by LF, with no trailing newline. JSON (RFC 7951) and XML notifications are
    accepted, bare or wrapped in an envelope, NETCONF <notification>, ietf-restconf
    notification or telemetry message. --format json prints {key, node, subscription_id,
    xpaths, topics}.

    \b
    Examples:
      yangkey key --xpath /ietf-interfaces:interfaces/interface notification.json
      yangkey sample | head -n 1 | yangkey key --xpath /ietf-interfaces:interfaces/interface \
          --format json
      yangkey key --subtree filter.xml --node pe1.nyc --subscription-id 7 notification.xml
    """
    from yangkey.keys import KeyDeriver  # noqa: PLC0415
    from yangkey.notifications import decode  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415

    compiled = compile_from_options(xpath, subtree, yang_dirs, yang_library, namespaces, keyless)
    source = "<stdin>" if notification == "-" else notification
    ns_modules = SchemaContext.cached(yang_dirs).index.by_namespace
    note = decode(read_input(notification, max_bytes), source, ns_modules)
    try:
        derived = KeyDeriver(compiled).derive(note, node=node, subscription_id=subscription_id)
    except EmptyUpdate as empty:
        # No error (a heartbeat), and no key either: nothing on stdout in the key format.
        if resolve_format(fmt, KEY_FORMATS) == "json":
            click.echo(orjson.dumps({"skipped": empty.kind, "reason": empty.message()}).decode())
        click.echo(f"note: {empty.message()}; no key", err=True)
        return
    if resolve_format(fmt, KEY_FORMATS) == "json":
        document = _key_document(derived, _topics(compiled, prefix, max_length))
        click.echo(orjson.dumps(document).decode())
    else:
        sys.stdout.buffer.write(derived.key)
        sys.stdout.buffer.flush()


@main.command()
@filter_options
@topic_options
@key_options
@click.argument("jsonl", default="-")
def keys(
    xpath: str | None,
    subtree: str | None,
    yang_dirs: tuple[str, ...],
    yang_library: str | None,
    namespaces: tuple[str, ...],
    keyless: str,
    prefix: str | None,
    max_length: int,
    node: str | None,
    subscription_id: int | None,
    max_bytes: int,
    jsonl: str,
) -> None:
    """Batch Phase 3: one notification per line in, one JSON object per line out.

    A rejected line prints {"error": ..., "kind": ..., "line": N} and the batch goes on; the
    exit status is 1 if any line was rejected, and stderr counts them per kind (README, "Real
    devices"). An update without data (a heartbeat) is no error: it prints {"skipped":
    "empty-update", ...}. An <?xml ...?> line and the document on the next line are one
    notification (how ncclient and IOS-XE print them).

    \b
    Examples:
      yangkey keys --xpath /ietf-interfaces:interfaces/interface notifications.jsonl
      yangkey sample | yangkey keys --xpath /ietf-interfaces:interfaces/interface --prefix netops
    """
    from yangkey.inputs import (  # noqa: PLC0415
        bounded_lines,
        join_declarations,
        open_input,
        source_name,
    )
    from yangkey.keys import KeyDeriver  # noqa: PLC0415
    from yangkey.notifications import decode  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415

    try:
        compiled = compile_from_options(
            xpath, subtree, yang_dirs, yang_library, namespaces, keyless
        )
        topics = _topics(compiled, prefix, max_length)
        ns_modules = SchemaContext.cached(yang_dirs).index.by_namespace
        opened = open_input(jsonl)
    except YangkeyError as error:
        fail(error)
    deriver = KeyDeriver(compiled)
    name = source_name(jsonl)
    rejected: Counter[str] = Counter()
    skipped = 0
    out = sys.stdout
    with opened as stream:
        # Every line ends keyed or reported: one bad line never costs the lines after it.
        for number, line in join_declarations(bounded_lines(stream, max_bytes)):
            source = f"{name}:{number}"
            try:
                if line is None:
                    raise InputError(
                        f"line is longer than the limit of {max_bytes} bytes", source=source
                    )
                if not line.strip():
                    continue
                note = decode(line, source, ns_modules)
                derived = deriver.derive(note, node=node, subscription_id=subscription_id)
                document: dict[str, Any] = _key_document(derived, topics)
            except EmptyUpdate as empty:
                skipped += 1
                document = {"skipped": empty.kind, "reason": empty.message(), "line": number}
            except YangkeyError as error:
                rejected[error.kind] += 1
                document = {"error": error.message(), "kind": error.kind, "line": number}
            out.write(orjson.dumps(document).decode() + "\n")
    out.flush()
    if skipped:
        click.echo(f"note: {skipped} empty update(s) in {name}: nothing to key", err=True)
    if rejected:
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(rejected.items()))
        total = sum(rejected.values())
        click.echo(f"error: {total} line(s) of {name} rejected ({kinds})", err=True)
        sys.exit(1)


@main.group()
def catalog() -> None:
    """The compiled subscriptions catalog (subscription -> branches -> topics -> tables)."""


@catalog.command("show")
@subscriptions_options(
    required=False,
    name="subscriptions_file",
    help_text="The subscriptions file (YAML); without it, --bootstrap shows the shared catalog.",
)
@click.option(
    "--bootstrap",
    "-b",
    default=None,
    help="Kafka bootstrap servers: show the shared catalog (learned subscriptions too).",
)
@catalog_topic_option
@subscription_filter_options(
    "subscriptions",
    node_help="Only the subscriptions this node uses: per id, the entry for exactly this node, "
    "else the first matching node pattern, else the fleet-wide one.",
)
@format_option()
@reports_errors
def catalog_show(
    subscriptions_file: str | None,
    bootstrap: str | None,
    catalog_topic: str,
    yang_dirs: tuple[str, ...],
    strict: bool,
    node: str | None,
    subscription_id: int | None,
    fmt: str | None,
) -> None:
    """Compile a subscriptions file, or read the shared catalog, and show every branch with
    its template and topic. With --node, only the subscriptions that node uses: for each
    id, the entry for exactly that node, else the first whose node pattern matches, else
    the fleet-wide one.

    \b
    Examples:
      yangkey catalog show --subscriptions subscriptions.yaml
      yangkey catalog show --subscriptions fleet.yaml --node xr-1.lab
      yangkey catalog show --subscriptions subscriptions.yaml --format json | jq '.topics[].name'
      yangkey catalog show --bootstrap "$(yangkey kafka status --bootstrap)"
    """
    from yangkey.fleet import describe, used_by  # noqa: PLC0415
    from yangkey.reporting import load_catalog, skipped_summary  # noqa: PLC0415
    from yangkey.topics import TopicSpec  # noqa: PLC0415

    rows: list[dict[str, Any]]
    topics: list[TopicSpec]
    skipped: list[dict[str, Any]] = []
    summary = ""
    if bootstrap is not None:
        from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415
        from yangkey.shared_catalog import topic_specs  # noqa: PLC0415

        with CatalogTopic(bootstrap, catalog_topic, create=False) as shared:
            records = shared.records()
        selected = used_by([(r.node_pattern, r.id) for r in records], node, subscription_id)
        records = [r for r in records if (r.node_pattern, r.id) in selected]
        title = f"kafka://{bootstrap}/{catalog_topic}"
        rows = [
            {
                "subscription_id": record.id,
                "origin": record.origin,
                "generation": record.generation,
                "yang_library_content_id": record.content_id,
                "type": record.subscription_type,
                "compaction": record.compaction,
                "node": record.node_pattern,
                "template": branch.template,
                "extractions": list(branch.extractions),
                "target": branch.target,
                "topic": branch.topic,
            }
            for record in records
            for branch in record.branches
        ]
        warnings = [f"{describe(r.id, r.node_pattern)}: {w}" for r in records for w in r.warnings]
        topics = topic_specs(records)
    elif subscriptions_file is not None:
        # its subscriptions' own warnings are part of what it shows
        compiled = load_catalog(
            subscriptions_file, yang_dirs, strict=strict, compile_warnings=False
        )
        title = subscriptions_file
        summary = skipped_summary(compiled)
        every = [*(e.identity for e in compiled.entries), *(s.identity for s in compiled.skipped)]
        selected = used_by(every, node, subscription_id)
        entries = [e for e in compiled.entries if e.identity in selected]
        skipped = [
            {
                "subscription_id": s.id,
                "node": s.node_pattern,
                "line": s.line,
                "reason": s.reason,
            }
            for s in compiled.skipped
            if s.identity in selected
        ]
        rows = [
            {
                "subscription_id": entry.id,
                "type": entry.subscription_type,
                "compaction": entry.compaction,
                "node": entry.node_pattern,
                "template": branch.template,
                "extractions": list(branch.extractions),
                "target": branch.target,
                "topic": topic_name,
            }
            for entry in entries
            for branch, topic_name in zip(entry.compiled.branches, entry.topics, strict=True)
        ]
        warnings = [f"{e.label}: {w}" for e in entries for w in e.compiled.warnings]
        named = {t for entry in entries for t in entry.topics}
        topics = [t for t in compiled.topics if t.name in named]
    else:
        raise click.UsageError("give --subscriptions or --bootstrap (the shared catalog)")
    used = resolve_format(fmt)
    if used not in ("json", "table"):
        from yangkey.output import emit_rows  # noqa: PLC0415

        emit_rows(rows, used)
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
        if summary:
            click.echo(summary, err=True)
        return
    if used == "json":
        document = {
            "subscriptions": rows,
            "topics": [
                {
                    "name": spec.name,
                    "subscription_ids": list(spec.subscription_ids),
                    "partitions": spec.partitions,
                    "compaction": spec.compaction,
                    "retention_seconds": spec.retention_seconds,
                }
                for spec in topics
            ],
            "warnings": warnings,
            "skipped": skipped,
        }
        click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        if summary:
            click.echo(summary, err=True)
        return
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    table = Table("id", "node", "type", "template", "target", "topic", title=title)
    for row in rows:
        kind = str(row["type"]) + (" (compacted)" if row["compaction"] else "")
        if "origin" in row:
            kind += f", {row['origin']}, generation {row['generation']}"
        table.add_row(
            str(row["subscription_id"]),
            Text(row["node"] or "(all)"),
            kind,
            Text(str(row["template"])),
            str(row["target"]),
            str(row["topic"]),
        )
    console = Console()
    console.print(table)
    for warning in warnings:
        console.print(Text("warning: ", style="yellow") + Text(warning))
    if summary:
        console.print(Text(summary))


if __name__ == "__main__":
    main()
