"""Everything the driver settles before Spark starts: the compiled catalog, the producer and
consumer settings, the topics, the run id, and the plan of what each task reads.

A configuration error found here costs no JVM. A batch run id that already has commit
markers resumes: the plan keeps only what its markers do not cover
(:mod:`yangkey.spark.delivery.resume`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyspark.sql import SparkSession

from yangkey.catalog import Catalog
from yangkey.errors import ConfigError
from yangkey.kafka.config import (
    connection_settings,
    consumer_config,
    producer_config,
    reconcile_timeouts,
)
from yangkey.registry.client import process_ids, register_topic_schemas
from yangkey.spark.config import (
    SPARK_PRODUCER_DEFAULTS,
    TEST_FAIL_AFTER_CONF,
    TEST_FAIL_AFTER_ENV,
    JobConfig,
)
from yangkey.spark.delivery import direct, native_producer
from yangkey.spark.delivery.checkpoint import (
    HadoopCheckpoint,
    LocalCheckpoint,
    StreamIdentity,
    check_no_foreign_markers,
    stream_identity,
)
from yangkey.spark.delivery.fencing import Heartbeat, fence_stale_runs, heartbeat_for
from yangkey.spark.delivery.markers import Marker, MarkerStore
from yangkey.spark.delivery.resume import resume_plan
from yangkey.spark.delivery.spec import SinkSpec
from yangkey.spark.preflight import check_topics, topic_specs
from yangkey.spark.runtime.executors import is_local_master, local_input_warnings
from yangkey.spark.runtime.session import DEFAULT_MASTER
from yangkey.spark.source.files import is_local, local_path, plan_sized, sized_files
from yangkey.spark.source.kafka_source import parse_kafka_input, plan_kafka
from yangkey.spark.source.units import PlannedRange, PlannedTask
from yangkey.spark.transform import DEFAULT_MAX_MESSAGE_BYTES, BuilderSpec, SharedCatalogSpec


@dataclass
class Prepared:
    """The driver's view of a run before Spark starts."""

    builder_spec: BuilderSpec
    catalog: Catalog
    sink: SinkSpec
    source_config: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    created_topics: tuple[str, ...] = ()
    plan: list[PlannedTask] = field(default_factory=list)
    """Batch: one (task number, range) per Spark partition (file ranges, raw-topic offsets)."""
    committed: list[Marker] = field(default_factory=list)
    """Batch: markers of tasks an earlier attempt of this run committed (not run again)."""
    fenced: int = 0
    """Transactions of an interrupted attempt of this run that were aborted at start."""
    stream: StreamIdentity | None = None
    """Streaming: the checkpoint's identity, once bound."""
    remote: list[str] = field(default_factory=list)
    """Batch: Hadoop URIs read with Spark's binaryFile source instead."""
    py_files: list[str] = field(default_factory=list)
    """Added to the executors' Python path (``--ship-env``: an editable yangkey's code)."""
    spark_conf: dict[str, str] = field(default_factory=dict)
    """Spark settings the command adds over the configuration's (``--ship-env``'s archive)."""
    shipped: bool = False
    """``--ship-env`` packed this virtualenv for the executors (not on a local master)."""
    run_log: str | None = None
    """The run's log file (:mod:`yangkey.spark.runtime.runlog`): where the driver JVM yangkey
    starts writes its log4j log instead of stderr."""
    notes: list[str] = field(default_factory=list)
    """Info lines for the start: other runs under the prefix fenced or left alone."""
    heartbeat: Heartbeat | None = None


def _fail_after(config: JobConfig) -> int | None:
    if config.fail_after is not None:
        return config.fail_after
    text = os.environ.get(TEST_FAIL_AFTER_ENV) or config.spark.conf.get(TEST_FAIL_AFTER_CONF)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{text!r} is not a number", source=TEST_FAIL_AFTER_ENV) from None


_RUN_ID = re.compile(r"^[A-Za-z0-9_.]{1,64}$")


def legacy_stream_run_id(checkpoint: str) -> str:
    """The run id of a checkpoint made before checkpoints carried an identity."""
    absolute = str(Path(checkpoint).expanduser().resolve())
    return "s" + hashlib.sha256(absolute.encode()).hexdigest()[:12]


def default_run_id(config: JobConfig, subscriptions_text: str = "") -> str:
    """``--run-id``, else: batch, derived from what the command reads and writes, so running
    the same command again resumes (and produces only what is new); streaming, a placeholder
    that the checkpoint's identity replaces
    (:func:`yangkey.spark.delivery.checkpoint.stream_identity`)."""
    source, delivery = config.source, config.delivery
    if delivery.run_id:
        if not _RUN_ID.match(delivery.run_id):
            raise ConfigError(
                f"{delivery.run_id!r}: use 1-64 letters, digits, '_' or '.'", source="--run-id"
            )
        return delivery.run_id
    if config.stream.enabled and config.stream.checkpoint:
        return legacy_stream_run_id(config.stream.checkpoint)
    if config.dry_run:
        return uuid.uuid4().hex[:12]
    inputs = [uri if not is_local(uri) else str(local_path(uri).resolve()) for uri in source.inputs]
    what = {
        "subscriptions": hashlib.sha256(subscriptions_text.encode()).hexdigest(),
        "inputs": inputs,
        "from": source.start,
        "until": source.until,
        "bootstrap": config.bootstrap,
        "source": source.source_bootstrap,
        "knobs": [
            config.keys,
            config.single_topic,
            config.learn,
            config.default_node,
            # Only when set: the run ids of earlier runs stay what they were.
            *([config.empty_updates] if config.empty_updates != "count" else []),
        ],
        "schema": config.registry.shown if config.registry else None,
        "layout": source.layout,
        "delivery": delivery.mode,
    }
    return "b" + hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


def prepare(config: JobConfig) -> Prepared:
    """Compile the catalog, build client configs, check or create topics: all on the driver,
    before any JVM starts, so configuration errors cost nothing (the combinations of options
    are the JobConfig's own to check: it cannot hold an illegal one)."""
    producer, timeout = _producer(config)
    builder_spec = _builder_spec(config, timeout)
    catalog = builder_spec.catalog()
    builder_spec.knobs(catalog)  # validates the knob combination early
    schema_ids = _schema_ids(config, catalog)
    sink = SinkSpec(
        producer_config=producer,
        dead_letter_topic=catalog.dead_letter_topic,
        run_id=default_run_id(config, builder_spec.subscriptions_text),
        transactional_prefix=config.delivery.transactional_prefix,
        exactly_once=config.delivery.exactly_once,
        timeout=timeout,
        fail_after=_fail_after(config),
        dry_run=config.dry_run,
        schema_registry=config.registry if schema_ids else None,
        schema_ids=schema_ids,
        native=native_producer.wanted(),
        direct=direct.wanted(),
    )
    source_config: dict[str, object] = {}
    if config.source.reads_kafka:
        source_config = consumer_config(
            config.source.source_bootstrap or config.bootstrap,
            f"{sink.transactional_prefix}-reader-{sink.run_id}",
            {"enable.partition.eof": False, **config.source.consumer_overrides},
        )
    prepared = Prepared(builder_spec, catalog, sink, source_config)
    prepared.warnings.extend(catalog.warnings)
    prepared.warnings.extend(local_input_warnings(config))
    on_broker = not config.dry_run and config.preflight
    if on_broker:
        created, warned, limit = check_topics(
            sink.producer_config,
            topic_specs(catalog, config.single_topic),
            create=config.delivery.create_topics,
            extra_configs=config.delivery.topic_configs,
        )
        prepared.created_topics = created
        prepared.warnings.extend(warned)
        _fit_message_limit(prepared, limit)
    if config.stream.enabled and is_local(str(config.stream.checkpoint)):
        bind_checkpoint(config, prepared)
    if not config.stream.enabled:
        plan, prepared.remote = plan_inputs(config, source_config)
        prepared.plan = [PlannedTask(task, planned) for task, planned in enumerate(plan)]
        if sink.exactly_once and on_broker and plan:
            _resume(config, prepared, plan)
    if sink.exactly_once and on_broker:  # crashed runs (fencing.py)
        prepared.notes.extend(fence_stale_runs(prepared.sink, config.delivery.stale_after))
    return prepared


def _builder_spec(config: JobConfig, timeout: float) -> BuilderSpec:
    """What the executors compile their message builders from (the file read here); the
    shared catalog waits ``timeout`` (a task's delivery wait) and never less than its own
    default."""
    shared = None
    if config.catalog_topic and config.bootstrap and not config.dry_run:
        settings = connection_settings(config.delivery.producer_overrides)
        shared = SharedCatalogSpec(
            config.bootstrap,
            config.catalog_topic,
            tuple((k, str(v)) for k, v in sorted(settings.items())),
            config.delivery.create_topics,
            max(timeout, SharedCatalogSpec._field_defaults["timeout"]),
        )
    return BuilderSpec.from_file(
        config.subscriptions,
        yang_dirs=config.yang_dirs,
        keys=config.keys,
        single_topic=config.single_topic,
        learn=config.learn,
        instances=config.instance_feed,
        empty_updates=config.empty_updates,
        default_node=config.default_node,
        strict=config.strict,
        shared_catalog=shared,
    )


def _producer(config: JobConfig) -> tuple[dict[str, object], float]:
    """The tasks' producer settings, librdkafka's timeout rules kept
    (:func:`yangkey.kafka.config.reconcile_timeouts`), and the seconds a task waits for init,
    flush and commit: the delivery timeout plus a margin."""
    exactly_once = config.delivery.exactly_once
    defaults = dict(SPARK_PRODUCER_DEFAULTS)
    if not exactly_once:
        defaults.pop("transaction.timeout.ms")
    overrides = config.delivery.producer_overrides
    merged = reconcile_timeouts(defaults, overrides, transactional=exactly_once)
    if config.dry_run:
        producer = dict(merged)
        producer.setdefault("bootstrap.servers", config.bootstrap or "dry-run:9092")
    else:
        producer = producer_config(config.bootstrap, merged)
    delivery_seconds = int(str(merged["message.timeout.ms"])) / 1000.0
    return producer, delivery_seconds + max(2.0, min(10.0, delivery_seconds / 4))


def _schema_ids(config: JobConfig, catalog: Catalog) -> dict[str, int]:
    """``{topic: schema id}`` from ``--schema-registry``, registered once per run on the
    driver before any message is sent (a dry run registers nothing)."""
    if config.registry is None or config.dry_run:
        return {}
    registry = process_ids(config.registry)
    return register_topic_schemas(registry, catalog, yang_dirs=config.yang_dirs)


def _fit_message_limit(prepared: Prepared, topic_limit: int | None) -> None:
    """Size-check against the smaller of the producer's and the topics' limits; a producer
    limit above a topic's would let librdkafka build batches the broker refuses."""
    producer = dict(prepared.sink.producer_config)
    limit = int(str(producer.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES)))
    if topic_limit is not None and topic_limit < limit:
        limit = topic_limit
        producer["message.max.bytes"] = limit
    prepared.sink = replace(prepared.sink, producer_config=producer, max_message_bytes=limit)


def _resume(config: JobConfig, prepared: Prepared, plan: list[PlannedRange]) -> None:
    """Fence what an interrupted attempt of this run left open, then plan what its markers
    do not cover under task numbers it never used."""
    sink = prepared.sink
    store = MarkerStore(sink.scope())
    markers, handed_out = store.read()
    open_tasks = [task for task in range(handed_out) if task not in markers]
    if open_tasks:
        prepared.fenced = store.fence(open_tasks)
        markers, handed_out = store.read()  # a commit the fenced attempt had begun completes
    resumed = resume_plan(plan, markers, handed_out, config.source.split_size, sink.run_id)
    prepared.plan = resumed.plan
    prepared.committed = resumed.committed
    if resumed.plan:
        store.record(resumed.plan[-1].task + 1)


def run_heartbeat(config: JobConfig, prepared: Prepared) -> Heartbeat:
    """The run record's heartbeat, naming every task number the plan uses (fencing.py)."""
    sink = prepared.sink
    enabled = sink.exactly_once and not sink.dry_run and config.preflight
    tasks = max((planned.task + 1 for planned in prepared.plan), default=0)
    stale_after = config.delivery.stale_after
    return heartbeat_for(sink, stale_after, config.stream.enabled, tasks, enabled)


def task_slots(master: str | None) -> int | None:
    """Tasks a local master runs at once; None for a cluster's (unknown on the driver)."""
    if not is_local_master(master):
        return None
    match = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", (master or DEFAULT_MASTER).strip())
    if match is None:
        return None
    given = match.group(1)
    if given == "*":
        return os.cpu_count() or 1
    return int(given or 1)


def balanced_split(total: int, split_size: int, slots: int | None) -> int:
    """``split_size``, changed so the tasks fill whole waves of ``slots``: 85 MB cut at
    32 MB makes 3 tasks, and on 2 cores the third one ran alone with half the machine idle.
    Fewer tasks where each grows by at most half (2 of 42.5 MB: one wave, and every task
    pays a fixed start, transaction and commit of 0.2-0.8 s; a 200k-record job ran 0.5x the
    plain loop in 4 tasks, 0.74x in 2: docs/design.md), else more (4 of 21 MB). An input of
    one task stays one task."""
    if not slots or slots < 2 or total <= split_size:
        return split_size
    tasks = -(-total // split_size)
    fewer = tasks // slots * slots
    if fewer and -(-total // fewer) <= split_size + split_size // 2:
        return -(-total // fewer)
    tasks = -(-tasks // slots) * slots
    return max(1, -(-total // tasks))


def plan_inputs(
    config: JobConfig, source_config: Mapping[str, object]
) -> tuple[list[PlannedRange], list[str]]:
    """Batch inputs -> (planned ranges, Hadoop URIs for Spark's binaryFile source).

    Runs on the driver before Spark starts: a missing file or raw topic costs no JVM.
    """
    source = config.source
    plan: list[PlannedRange] = []
    remote: list[str] = []
    # Listed once: the sizes choose the split, then the same files are planned.
    local = {
        uri: sized_files(uri)
        for uri in source.inputs
        if not uri.startswith("kafka://") and is_local(uri)
    }
    total = sum(size for uri in source.inputs if uri in local for _, size in local[uri])
    split_size = balanced_split(total, source.split_size, task_slots(config.spark.master))
    for uri in source.inputs:
        if uri.startswith("kafka://"):
            plan.extend(
                plan_kafka(
                    parse_kafka_input(uri),
                    source_config,
                    source.start,
                    source.until,
                    source.max_records_per_task,
                    source.outage_budget,
                )
            )
        elif is_local(uri):
            plan.extend(plan_sized(local[uri], split_size, source.layout))
        else:
            remote.append(uri)
    return plan, remote


def bind_checkpoint(
    config: JobConfig, prepared: Prepared, session: SparkSession | None = None
) -> StreamIdentity:
    """Tie the stream's run id to the checkpoint's identity; refuse foreign markers ahead."""
    checkpoint = str(config.stream.checkpoint)
    files: LocalCheckpoint | HadoopCheckpoint
    if is_local(checkpoint):
        files = LocalCheckpoint(checkpoint)
    else:
        files = HadoopCheckpoint(checkpoint, session)
    try:
        run_id = config.delivery.run_id
        identity = stream_identity(files, run_id, legacy_stream_run_id(checkpoint))
    except OSError as exc:
        raise ConfigError(f"cannot use the checkpoint: {exc}", source=checkpoint) from None
    sink = replace(prepared.sink, run_id=identity.run_id, identity=identity.identity)
    prepared.sink = sink
    prepared.stream = identity
    if sink.exactly_once and not sink.dry_run and config.preflight:
        store = MarkerStore(sink.scope())
        check_no_foreign_markers(store.read()[0], identity, checkpoint)
    return identity
