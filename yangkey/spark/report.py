"""What ``yangkey produce`` tells the operator: the start line, the resume hint, the summary."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from yangkey.spark.planning import Prepared
from yangkey.spark.progress import Summary


def log_line(log: Path) -> str:
    """Where Spark's and the Kafka clients' own lines go (:mod:`yangkey.spark.runtime.runlog`)."""
    return f"log: {log} (Spark, Kafka clients)"


def start_line(prepared: Prepared) -> str:
    sink = prepared.sink
    if prepared.stream is not None:
        state = "new checkpoint" if prepared.stream.created else "resuming from its checkpoint"
        return f"run {sink.run_id} (stream, {state})"
    if not sink.exactly_once:
        return f"run {sink.run_id} (at-least-once: no resume)"
    if prepared.committed or prepared.fenced:
        fenced = (
            f", {prepared.fenced} open transaction(s) of an interrupted attempt aborted"
            if prepared.fenced
            else ""
        )
        return (
            f"run {sink.run_id}: resuming, {len(prepared.committed)} task(s) already"
            f" committed, {len(prepared.plan)} to run{fenced}"
        )
    return f"run {sink.run_id}"


def resume_hint(prepared: Prepared | None) -> str:
    if prepared is None or prepared.sink.dry_run or not prepared.sink.exactly_once:
        return ""
    if prepared.stream is not None:
        return f" (run {prepared.sink.run_id}: start it again on the same checkpoint to resume)"
    return (
        f" (run {prepared.sink.run_id}: committed tasks stay committed; run the same command"
        f" again, or with --run-id {prepared.sink.run_id}, to resume)"
    )


def keyed_natively(native: int, records: int) -> str:
    """Which path keyed the records on the executors: the native key pass
    (:mod:`yangkey.native`) or the Python one, said when the driver has the native module or
    an executor used it (executors without it fall back to Python)."""
    from yangkey.native import active  # noqa: PLC0415

    if native:
        return f"keys: {native:,} of {records:,} records by the native fast path (yangkey-native)"
    if active() and records:
        return (
            "keys: every record by the Python path: no JSON push-update, or executors without"
            " yangkey-native (--ship-env ships the driver's environment)"
        )
    return ""


def produced_natively(native_sink: int, records: int) -> str:
    """Which producer the executors' tasks ran: the native one
    (:mod:`yangkey.spark.delivery.native_producer`) or confluent-kafka's, said when the driver
    has the native producer or a task used it (executors without it fall back)."""
    from yangkey.spark.delivery.native_producer import load, wanted  # noqa: PLC0415

    if native_sink:
        return (
            f"sink: {native_sink:,} of {records:,} records produced by the native producer"
            " (yangkey-native)"
        )
    if records and wanted() and load()[0] is not None:
        return (
            "sink: every record by confluent-kafka's producer: executors without"
            " yangkey-native or with another librdkafka (--ship-env ships the driver's"
            " environment)"
        )
    return ""


def print_summary(summary: Summary, console: Console) -> None:
    tally = summary.tally
    verb = "would produce" if summary.dry_run else "produced"
    table = Table("topic", "messages", title=f"run {summary.run_id}: {verb}")
    for topic, count in sorted(tally.produced.items()):
        table.add_row(topic, f"{count:,}")
    if tally.rejections:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in sorted(tally.rejected.items()))
        table.add_row(
            f"{summary.dead_letter_topic} (dead letter: {kinds})", f"{tally.rejections:,}"
        )
    console.print(table)
    if tally.empty:
        console.print(
            f"{tally.empty:,} empty update(s) (push-updates without data: heartbeats) counted,"
            " not dead-lettered (--empty-updates dead-letter keeps them)",
            highlight=False,
        )
    native_line = keyed_natively(tally.native, tally.records)
    if native_line:
        console.print(native_line, highlight=False)
    sink_line = "" if summary.dry_run else produced_natively(tally.native_sink, tally.records)
    if sink_line:
        console.print(sink_line, highlight=False)
    skipped = f", {summary.skipped} already committed (skipped)" if summary.skipped else ""
    batches = f" in {summary.batches} micro-batches" if summary.batches > 1 else ""
    bad = summary.skipped_subscriptions
    subscriptions = (
        f"; {bad} subscription{'s' if bad != 1 else ''} skipped (not compiled: see the"
        " warnings; --strict stops instead)"
        if bad
        else ""
    )
    console.print(
        f"{tally.records:,} records -> {tally.messages:,} messages,"
        f" {tally.rejections:,} rejected{f', {tally.empty:,} empty' if tally.empty else ''};"
        f" {summary.partitions} Spark"
        f" task{'s' if summary.partitions != 1 else ''}{skipped}{batches};"
        f" {summary.seconds:.1f}s ({summary.rate:,.0f} records/s){subscriptions}",
        highlight=False,
    )
