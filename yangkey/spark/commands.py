"""``yangkey produce``: the Spark producer job from the command line.

The same command is the entry point of ``spark_jobs/produce_keyed.py`` under spark-submit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console
from rich.markup import escape

from yangkey.cli.options import REPORT, resolve_format
from yangkey.cli.options import quiet as quiet_globally
from yangkey.cli.reporting import fail
from yangkey.errors import YangkeyError
from yangkey.kafka.logs import log_to_file, quiet_librdkafka
from yangkey.spark.config import JobConfig
from yangkey.spark.job import run
from yangkey.spark.options import SUMMARY_FORMATS, job_config, produce_options
from yangkey.spark.planning import Prepared, prepare
from yangkey.spark.progress import Summary, every
from yangkey.spark.report import log_line, print_summary, resume_hint, start_line
from yangkey.spark.runtime import runlog
from yangkey.spark.runtime.stopping import Stopper

PIPED_PROGRESS_EVERY = 5.0
"""Seconds between progress lines when stderr is not a terminal."""


EPILOG = """\b
Examples:
  # JSON-lines files -> derived topics, creating missing topics first
  yangkey produce --subscriptions examples/subscriptions.yaml \\
      --input dumps/ --bootstrap 127.0.0.1:9092 --create-topics

\b
  # the raw topic a YANG-Push receiver fills, from a point in time up to now
  yangkey produce --subscriptions subs.yaml --input kafka://yang-push-raw \\
      --bootstrap kafka:9092 --from 2026-11-20T10:00:00Z --until latest

\b
  # continuously, on a cluster, with checkpoints
  yangkey produce --subscriptions subs.yaml --input kafka://yang-push-raw \\
      --bootstrap kafka:9092 --stream --checkpoint hdfs:///yangkey/ckpt \\
      --master spark://master:7077 --trigger-interval 10s

\b
  # on a standalone cluster, shipping this virtualenv to the executors (spark.archives);
  # without --ship-env a preflight task checks that they can import yangkey
  yangkey produce --subscriptions subs.yaml --input hdfs:///raw/ --bootstrap kafka:9092 \\
      --master spark://master:7077 --ship-env

\b
  # spark-submit takes the same options
  spark-submit --master yarn spark_jobs/produce_keyed.py --subscriptions subs.yaml ...

\b
  # what would be produced, without Kafka
  yangkey produce --subscriptions subs.yaml --input dumps/ --dry-run

\b
Delivery: by default every Spark task writes in one Kafka transaction (transactional.id
= PREFIX-RUNID-PARTITION) and records a commit marker with it, so a retried, speculative
or re-run task never makes duplicates visible to read_committed consumers. A broker outage
longer than message.timeout.ms (default 120 s) fails the task, and after Spark's retries
the job, with an error: nothing is dropped silently. Rejected notifications go to the
catalog's dead-letter topic with headers yangkey-error, yangkey-error-kind, yangkey-source.

\b
Kafka settings come from, later wins: yangkey's defaults (murmur2_random partitioner,
idempotence, acks=all), --producer-config-file, YANGKEY_KAFKA_<KEY> environment variables
(YANGKEY_KAFKA_SASL_PASSWORD -> sasl.password), --producer-config KEY=VALUE.
"""


@click.command(epilog=EPILOG, context_settings={"max_content_width": 100})
@produce_options
@REPORT
def produce(fmt: str | None, report: Path | None, **options: Any) -> None:
    """Read raw YANG-Push notifications, derive message keys and topics, produce to Kafka.

    Runs on Spark: local[*] by default, any cluster with --master (or under spark-submit).
    Each input notification becomes one keyed message per matching subscription branch, on
    the topic derived from the branch's schema path; rejected input goes to the dead-letter
    topic with its raw bytes, the reason and its position (file:line or
    kafka://topic@partition:offset). Prints the counts per topic at the end.
    """
    with Stopper().installed() as stopper, contextlib.ExitStack() as logs:
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        # progress and notes; `yangkey -q produce` keeps only warnings, errors, the summary
        info = Console(stderr=True, highlight=False, soft_wrap=True, quiet=quiet_globally())
        prepared: Prepared | None = None
        log: Path | None = None
        # librdkafka's lines of the driver's clients: summarised on stderr (yangkey.kafka.logs)
        logs.enter_context(quiet_librdkafka(lambda line: err.print(line, markup=False)))
        try:
            config = job_config(options)
            prepared = prepare(config)
            if config.spark.ship_env:
                _ship_env(config, prepared, err)
            if not config.dry_run:
                log = _run_log(prepared, logs)
                info.print(start_line(prepared), markup=False, highlight=False)
                if log is not None:
                    info.print(log_line(log), markup=False, highlight=False)
            if prepared.sink.schema_registry is not None:
                info.print(
                    f"schema registry {prepared.sink.schema_registry.shown}:"
                    f" {len(prepared.sink.schema_ids)} subject(s) <topic>-value registered or"
                    " found",
                    markup=False,
                    highlight=False,
                )
            for note in prepared.notes:
                info.print(note, markup=False, highlight=False)
            for warning in prepared.warnings:
                err.print(f"[yellow]warning:[/yellow] {escape(warning)}")
            if prepared.created_topics:
                info.print(
                    f"created {len(prepared.created_topics)} topic(s): "
                    + ", ".join(prepared.created_topics)
                )

            def on_restart(error: YangkeyError, attempt: int) -> None:
                err.print(
                    f"warning: the stream failed ({error.message()}); restart {attempt} of"
                    f" {config.stream.restart_on_failure} from the checkpoint",
                    markup=False,
                    highlight=False,
                )

            def on_batch(batch_id: int, part: Summary) -> None:
                info.print(
                    f"batch {batch_id}: {part.tally.records:,} records ->"
                    f" {part.tally.messages:,} messages, {part.tally.rejections:,} rejected"
                )

            if err.is_terminal and not quiet_globally():
                with err.status("starting Spark…") as status:
                    summary = run(
                        config,
                        prepared=prepared,
                        on_batch=on_batch,
                        on_restart=on_restart,
                        update=status.update,
                        stopper=stopper,
                    )
            else:
                # A pipe or a log gets a progress line every few seconds (a stream has its
                # batch lines instead).
                def line(text: str) -> None:
                    info.print(text, markup=False, highlight=False)

                if not config.stream.enabled:
                    line("starting Spark…")
                summary = run(
                    config,
                    prepared=prepared,
                    on_batch=on_batch,
                    on_restart=on_restart,
                    update=None if config.stream.enabled else every(PIPED_PROGRESS_EVERY, line),
                    stopper=stopper,
                )
        except YangkeyError as error:
            if stopper.signum is None:
                logs.close()  # the summary of librdkafka's warnings before the error line
                fail(error, resume_hint(prepared) + runlog.where(log))
        except KeyboardInterrupt:
            stopper.signum = stopper.signum or signal.SIGINT
        if stopper.signum is not None:
            err.print(f"interrupted{resume_hint(prepared)}", markup=False, highlight=False)
            sys.exit(stopper.exit_code)
        if resolve_format(fmt, SUMMARY_FORMATS) == "json":
            click.echo(orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2).decode())
        else:
            print_summary(summary, Console())
        if report is not None:
            _write_report(report, summary, config, err)


def _write_report(path: Path, summary: Summary, config: JobConfig, err: Console) -> None:
    """``--report``: what the run's summary says."""
    from yangkey.report.runs import produce_report, write  # noqa: PLC0415

    try:
        data = produce_report(summary.to_dict(), bootstrap=config.bootstrap or None)
        err.print(f"report: {write(data, path)}", markup=False, highlight=False)
    except YangkeyError as error:
        fail(error)


def _run_log(prepared: Prepared, logs: contextlib.ExitStack) -> Path | None:
    """The run's log file (:mod:`yangkey.spark.runtime.runlog`), when yangkey starts the driver JVM
    (spark-submit's has its own log4j config): the JVM's log and the local workers'
    librdkafka lines go there."""
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return None
    log = runlog.new_run_log(prepared.sink.run_id)
    if log is not None:
        prepared.run_log = str(log)
        logs.enter_context(log_to_file(log))
    return log


def _ship_env(config: JobConfig, prepared: Prepared, err: Console) -> None:
    """``--ship-env``: the archive into ``spark.archives`` (executors' Python is switched to it
    once the session exists, see :func:`yangkey.spark.runtime.executors.prepare_executors`)."""
    from yangkey.spark.runtime.executors import is_local_master  # noqa: PLC0415
    from yangkey.spark.runtime.ship_env import ship_running_env  # noqa: PLC0415

    if is_local_master(config.spark.master):
        prepared.warnings.append(
            "--ship-env: a local master runs this interpreter; nothing shipped"
        )
        return
    if err.is_terminal:
        with err.status("packing this virtualenv for the executors…"):
            shipped = ship_running_env()
    else:
        shipped = ship_running_env()
    err.print(shipped.describe(), markup=False, highlight=False, soft_wrap=True)
    if shipped.code is not None:
        prepared.py_files.append(str(shipped.code))
    prepared.shipped = True
    prepared.spark_conf.update(shipped.spark_conf(config.spark.conf.get("spark.archives")))


def main(argv: Sequence[str] | None = None) -> int:
    """``spark-submit spark_jobs/produce_keyed.py --subscriptions … --input … --bootstrap …``:
    the same options as ``yangkey produce``."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # Standalone: click reports usage errors itself and always ends with SystemExit.
        produce.main(args=args, prog_name="produce_keyed.py")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0
