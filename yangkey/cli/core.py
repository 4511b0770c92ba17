"""The core commands: ``normalize`` (Phase 1), ``compile`` (Phase 2), ``topic``, ``key`` and
``keys`` (Phase 3). They need the core install only and import their libraries when they run,
so that ``--help`` stays fast.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson
from click.core import ParameterSource

from yangkey.cli.declaration import Declaration
from yangkey.cli.options import (
    OVERRIDE_NODE,
    OVERRIDE_SUBSCRIPTION_ID,
    SUBSCRIPTIONS,
    format_option,
    resolve_format,
)
from yangkey.cli.reporting import fail, reports_errors
from yangkey.cli.subscription import (
    Schema,
    Subscription,
    TopicNaming,
    compile_request,
    read_input,
    schema_options,
    subscription_options,
    topic_options,
)
from yangkey.errors import EmptyUpdate, InputError, NotificationError, YangkeyError

if TYPE_CHECKING:
    from yangkey.catalog import Catalog
    from yangkey.compiled import CompiledSubscription
    from yangkey.keys import DerivedKey, KeyDeriver
    from yangkey.native import Route
    from yangkey.notification_model import Notification

MAX_BYTES = Declaration(
    ("--max-bytes",),
    "max_bytes",
    "Refuse a notification (or a line) longer than this.",
    metavar="BYTES",
    attrs={"type": click.IntRange(1, 2**31 - 1), "default": 16 * 1024 * 1024, "show_default": True},
)
KEY_FORMATS = ("key", "json")


@click.command()
@click.argument("filter_file")
@schema_options
@reports_errors
def normalize(filter_file: str, schema: Schema) -> None:
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
    context = SchemaContext.cached(schema.yang_dirs)
    click.echo(normalize_subtree(read_input(filter_file), context.index, source))


@click.command(name="compile")
@subscription_options
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
    subscription: Subscription, naming: TopicNaming, fmt: str | None, show_walker: bool
) -> None:
    """Phase 2: key templates, extraction specs, target kinds and topics of a subscription.

    \b
    Example:
      yangkey compile --json --xpath \\
        "/ietf-interfaces:interfaces/interface[name='eth0']/ietf-ip:ipv4/address"
    """
    compiled = compile_request(subscription)
    topics = naming.names(compiled)
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
        from yangkey.walker import walker_source  # noqa: PLC0415

        for item, branch in zip(branches, compiled.branches, strict=True):
            item["walker"] = walker_source(branch)
    # A document for people (the walkers' source follows the table): a table even piped.
    used = resolve_format(fmt, piped="table")
    if used == "json":
        document = {
            "branches": branches,
            "warnings": list(compiled.warnings),
            "left_out": [asdict(item) for item in compiled.left_out],
        }
        click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        return
    if used != "table":
        from yangkey.cli.output import emit_rows  # noqa: PLC0415

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


@click.command()
@subscription_options
@topic_options
@reports_errors
def topic(subscription: Subscription, naming: TopicNaming) -> None:
    """Print the topic name of each subscription branch, one per line.

    \b
    Example:
      yangkey topic --xpath /ietf-interfaces:interfaces/interface --prefix netops
      -> netops-if-interfaces-interface
    """
    for name in naming.names(compile_request(subscription)):
        click.echo(name)


@dataclass(frozen=True)
class Keying:
    """What ``key`` and ``keys`` derive with: the compiled subscription, the schema's
    namespace -> module map (for XML), the deriver and (on first use) the topics."""

    compiled: CompiledSubscription
    naming: TopicNaming
    modules_by_namespace: dict[str, str]
    deriver: KeyDeriver

    @classmethod
    def of(cls, subscription: Subscription, naming: TopicNaming) -> Keying:
        from yangkey.keys import KeyDeriver  # noqa: PLC0415
        from yangkey.schema import SchemaContext  # noqa: PLC0415

        compiled = compile_request(subscription)
        schema = SchemaContext.cached(subscription.schema.yang_dirs)
        return cls(compiled, naming, schema.index.by_namespace, KeyDeriver(compiled))

    @functools.cached_property
    def topics(self) -> list[str]:
        return self.naming.names(self.compiled)

    def document(self, derived: DerivedKey) -> dict[str, Any]:
        """``--format json``'s object: {key, node, subscription_id, xpaths, topics}."""
        return _document(derived, self.topics)

    def keyed(
        self, note: Notification, _source: str, node: str | None, subscription_id: int | None
    ) -> dict[str, Any]:
        """The document of one notification (``keys``' line out)."""
        return self.document(self.deriver.derive(note, node=node, subscription_id=subscription_id))

    def fast(self, raw: bytes, source: str, node: str | None) -> dict[str, Any] | None:
        """:meth:`keyed`'s document by the native key pass, or None: decode and keyed then."""
        walker = self.deriver.native
        if walker is None:
            return None

        def route(_id: int, carried: str | None) -> tuple[Any, str, Any] | None:
            name = node or carried
            return None if not name else (walker, name, (name, self.topics))

        return _native_document(raw, source, self.modules_by_namespace, route)


def _document(derived: DerivedKey, topics: list[str] | tuple[str, ...]) -> dict[str, Any]:
    found = zip(topics, derived.branch_xpaths, strict=True)
    return {
        "key": derived.key.decode("utf-8"),
        "node": derived.node,
        "subscription_id": derived.subscription_id,
        "xpaths": list(derived.xpaths),
        "topics": [topic for topic, xpaths in found if xpaths],
    }


def _native_document(
    raw: bytes, source: str, ns_modules: dict[str, str], route: Route
) -> dict[str, Any] | None:
    """``_document`` from :func:`yangkey.native.keys` (whose ``route`` answers ``(walker,
    node, (node, topics))``), or None: the Python path keys the line."""
    from yangkey.native import keys, keys_xml  # noqa: PLC0415

    native = keys_xml if raw.startswith(b"<") else keys
    found = native(raw, source, ns_modules, route, with_xpaths=True)
    if found is None:
        return None
    (node, topics), subscription_id, _, _, key, branch_keys, xpaths = found
    assert xpaths is not None
    return {
        "key": key.decode("utf-8"),
        "node": node,
        "subscription_id": subscription_id,
        "xpaths": list(xpaths),
        "topics": [topic for topic, found in zip(topics, branch_keys, strict=True) if found],
    }


@dataclass(frozen=True)
class FileKeying:
    """``keys --subscriptions FILE``: each notification keyed with the file's subscription of
    its id (and node), as ``produce`` keys it, onto that subscription's topics."""

    catalog: Catalog
    modules_by_namespace: dict[str, str]

    @classmethod
    def load(cls, path: Path, yang_dirs: tuple[str, ...]) -> FileKeying:
        from yangkey.catalog import load_catalog  # noqa: PLC0415

        catalog = load_catalog(path, yang_dirs=yang_dirs)
        return cls(catalog, catalog.schema().index.by_namespace)

    def keyed(
        self, note: Notification, source: str, node: str | None, subscription_id: int | None
    ) -> dict[str, Any]:
        from yangkey.entries import SkippedSubscription  # noqa: PLC0415
        from yangkey.fleet import for_node  # noqa: PLC0415

        wanted = note.subscription_id if subscription_id is None else subscription_id
        if wanted is None:
            raise NotificationError("the notification carries no subscription id", source=source)
        who = node or note.node
        found = self.catalog.resolve(wanted, who)
        if isinstance(found, SkippedSubscription):
            raise found.rejection(source)
        if found is None:
            raise NotificationError(
                f"unknown subscription id {wanted}{for_node(who)} ({self.catalog.known(who)})",
                source=source,
            )
        derived = found.deriver.derive(note, node=node, subscription_id=subscription_id)
        return _document(derived, found.topics)

    def fast(self, raw: bytes, source: str, node: str | None) -> dict[str, Any] | None:
        """:meth:`keyed`'s document by the native key pass, or None: decode and keyed then."""
        from yangkey.entries import CatalogEntry  # noqa: PLC0415

        def route(subscription_id: int, carried: str | None) -> tuple[Any, str, Any] | None:
            name = node or carried
            found = self.catalog.resolve(subscription_id, name)
            if not name or not isinstance(found, CatalogEntry) or found.deriver.native is None:
                return None  # the Python path words what is wrong, or keys it
            return found.deriver.native, name, (name, found.topics)

        return _native_document(raw, source, self.modules_by_namespace, route)


def _key_options(function: Any) -> Any:
    for option in (MAX_BYTES, OVERRIDE_SUBSCRIPTION_ID, OVERRIDE_NODE, topic_options):
        function = option(function)
    return subscription_options(function)


@click.command()
@_key_options
@format_option(KEY_FORMATS)
@click.argument("notification", default="-")
@reports_errors
def key(
    subscription: Subscription,
    naming: TopicNaming,
    override_node: str | None,
    override_subscription_id: int | None,
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
      yangkey sample | head -n 1 | yangkey key --xpath /ietf-interfaces:interfaces/interface \\
          --format json
      yangkey key --subtree filter.xml --override-node pe1.nyc --override-subscription-id 7 \\
          notification.xml
    """
    from yangkey.notifications import decode  # noqa: PLC0415

    keying = Keying.of(subscription, naming)
    source = "<stdin>" if notification == "-" else notification
    note = decode(read_input(notification, max_bytes), source, keying.modules_by_namespace)
    as_json = resolve_format(fmt, KEY_FORMATS) == "json"
    try:
        derived = keying.deriver.derive(
            note, node=override_node, subscription_id=override_subscription_id
        )
    except EmptyUpdate as empty:
        # No error (a heartbeat), and no key either: nothing on stdout in the key format.
        if as_json:
            click.echo(orjson.dumps({"skipped": empty.kind, "reason": empty.message()}).decode())
        click.echo(f"note: {empty.message()}; no key", err=True)
        return
    if as_json:
        click.echo(orjson.dumps(keying.document(derived)).decode())
    else:
        sys.stdout.buffer.write(derived.key)
        sys.stdout.buffer.flush()


#: Options that shape the one subscription of --xpath/--subtree: a subscriptions file has its
#: own (namespaces, library, features, topic prefix and length per subscription).
_SINGLE_ONLY = ("namespaces", "keyless", "yang_library", "features", "prefix", "max_length")


@click.command()
@_key_options
@SUBSCRIPTIONS.but(
    required=False,
    with_profile=False,
    note="Key each notification with the file's subscription of its id (and node), as produce"
    " does, instead of one --xpath or --subtree. [default, when neither is given: the example"
    " subscriptions that ship with yangkey, the ones `yangkey init` writes and `yangkey"
    " sample` streams]",
)
@click.argument("jsonl", default="-")
@click.pass_context
def keys(
    ctx: click.Context,
    subscription: Subscription,
    naming: TopicNaming,
    override_node: str | None,
    override_subscription_id: int | None,
    max_bytes: int,
    subscriptions: str | None,
    jsonl: str,
) -> None:
    """Batch Phase 3: one notification per line in, one JSON object per line out.

    With --xpath or --subtree every line is keyed with that one subscription; with
    --subscriptions FILE (or neither: the example subscriptions) each line with the
    subscription of its id. A rejected line prints {"error": ..., "kind": ..., "line": N} and
    the batch goes on; the exit status is 1 if any line was rejected, and stderr counts them
    per kind (README, "Real devices"); `yangkey sample` mixes in 4 bad notifications on
    purpose. An update without data (a heartbeat) is no error: it prints {"skipped":
    "empty-update", ...}. An <?xml ...?> line and the document on the next line are one
    notification (how ncclient and IOS-XE print them).

    \b
    Examples:
      yangkey sample | yangkey keys
      yangkey keys --subscriptions subscriptions.yaml notifications.jsonl
      yangkey keys --xpath /ietf-interfaces:interfaces/interface notifications.jsonl
      yangkey sample | yangkey keys --xpath /ietf-interfaces:interfaces/interface --prefix netops
    """
    from yangkey.inputs import (  # noqa: PLC0415
        bounded_lines,
        join_declarations,
        open_input,
        source_name,
    )
    from yangkey.notifications import decode  # noqa: PLC0415

    single = subscription.xpath is not None or subscription.subtree is not None
    given = ctx.get_parameter_source("subscriptions")
    if single and given is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --xpath/--subtree or --subscriptions, not both")
    if not single:
        for param in ctx.command.params:
            if param.name in _SINGLE_ONLY and (
                ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT
            ):
                raise click.UsageError(
                    f"{param.opts[0]} shapes the subscription of --xpath or --subtree; a"
                    " subscriptions file sets it per subscription"
                )
    try:
        with contextlib.ExitStack() as stack:
            keying: Keying | FileKeying
            if single:
                keying = Keying.of(subscription, naming)
                keying.topics  # noqa: B018 - a bad --prefix is an error before any line is read
            else:
                if subscriptions is None:
                    from yangkey.demo.pipeline import example_subscriptions  # noqa: PLC0415

                    click.echo(
                        "keys: keying with the example subscriptions that ship with yangkey"
                        " (give --subscriptions FILE, --xpath or --subtree for yours)",
                        err=True,
                    )
                    path = stack.enter_context(example_subscriptions())
                else:
                    path = Path(subscriptions)
                keying = FileKeying.load(path, subscription.schema.yang_dirs)
        opened = open_input(jsonl)
    except YangkeyError as error:
        fail(error)
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
                fast = None
                if override_subscription_id is None:
                    fast = keying.fast(line, source, override_node)
                if fast is None:
                    note = decode(line, source, keying.modules_by_namespace)
                    fast = keying.keyed(note, source, override_node, override_subscription_id)
                document: dict[str, Any] = fast
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
