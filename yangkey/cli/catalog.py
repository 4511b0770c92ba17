"""``yangkey catalog show``: what a subscriptions file (or the shared catalog) compiles to."""

from __future__ import annotations

from typing import Any

import click
import orjson

from yangkey.cli.options import (
    BOOTSTRAP,
    CATALOG_TOPIC,
    SHARED_CATALOG,
    SHARED_CATALOG_IMPLIED,
    format_option,
    resolve_format,
    shared_catalog_servers,
    subscription_filter_options,
    subscriptions_options,
)
from yangkey.cli.reporting import reports_errors


@click.group()
def catalog() -> None:
    """The compiled subscriptions catalog (subscription -> branches -> topics -> tables)."""


@catalog.command("show")
@subscriptions_options(required=False, note="Without it: --shared-catalog.")
@SHARED_CATALOG.but(
    note=f"show it (learned subscriptions too) instead of a file. {SHARED_CATALOG_IMPLIED}"
)
@BOOTSTRAP.but(required=False)
@CATALOG_TOPIC
@subscription_filter_options(
    "subscriptions",
    node_note="Per id: the entry for exactly this node, else the first matching node pattern, "
    "else the fleet-wide one.",
)
@format_option()
@reports_errors
def catalog_show(
    subscriptions: str | None,
    yang_dirs: tuple[str, ...],
    strict: bool,
    shared_catalog: bool,
    bootstrap: str | None,
    catalog_topic: str,
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
      yangkey catalog show --shared-catalog --bootstrap "$(yangkey kafka status --address)"
    """
    from yangkey.cli.reporting import load_catalog, skipped_summary  # noqa: PLC0415
    from yangkey.fleet import describe, used_by  # noqa: PLC0415
    from yangkey.topics import TopicSpec  # noqa: PLC0415

    rows: list[dict[str, Any]]
    topics: list[TopicSpec]
    skipped: list[dict[str, Any]] = []
    summary = ""
    servers = shared_catalog_servers(shared_catalog, bootstrap)
    if servers is not None:
        from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415
        from yangkey.kafka.logs import quiet_librdkafka  # noqa: PLC0415
        from yangkey.shared_catalog import topic_specs  # noqa: PLC0415

        with quiet_librdkafka(), CatalogTopic(servers, catalog_topic, create=False) as shared:
            records = shared.records()
        selected = used_by([(r.node_pattern, r.id) for r in records], node, subscription_id)
        records = [r for r in records if (r.node_pattern, r.id) in selected]
        title = f"kafka://{servers}/{catalog_topic}"
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
    elif subscriptions is not None:
        # its subscriptions' own warnings are part of what it shows
        compiled = load_catalog(subscriptions, yang_dirs, strict=strict, compile_warnings=False)
        title = subscriptions
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
        raise click.UsageError("give --subscriptions or --shared-catalog")
    used = resolve_format(fmt)
    if used not in ("json", "table"):
        from yangkey.cli.output import emit_rows  # noqa: PLC0415

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
