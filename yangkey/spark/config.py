"""What a producer run is asked to do: :class:`JobConfig`, frozen, and the defaults it starts
from.

One model, validated once: its sub-models say where each setting acts (:class:`Source`,
:class:`Delivery`, :class:`Stream`, :class:`SparkRuntime`; the schema registry is a
:class:`~yangkey.registry.client.RegistrySettings`), and one validator
(:meth:`JobConfig.legal`) refuses the combinations that make no run, before anything starts:
``produce`` reports them as usage errors (exit status 2). Nothing changes a JobConfig once it
is made; what the driver learns while preparing a run is :class:`yangkey.spark.planning.
Prepared`'s.

``produce``'s options are flat (one destination per option, :mod:`yangkey.spark.options`);
:meth:`JobConfig.of` takes them by those names (:data:`FLAT`) and puts each where it acts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from yangkey.errors import ConfigError
from yangkey.messages import EmptyUpdates
from yangkey.registry.client import RegistrySettings
from yangkey.spark.delivery.fencing import DEFAULT_STALE_AFTER
from yangkey.spark.source.files import is_local
from yangkey.spark.source.kafka_source import DEFAULT_OUTAGE_BUDGET
from yangkey.spark.source.splitting import LayoutChoice

DeliveryMode = Literal["exactly-once", "at-least-once"]

DEFAULT_SPLIT_SIZE = 64 * 1024 * 1024
DEFAULT_MAX_RECORDS_PER_TASK = 250_000
SPARK_PRODUCER_DEFAULTS: Mapping[str, object] = {
    # A broker outage longer than this fails the task (and, after retries, the job).
    "message.timeout.ms": 120_000,
    # Spark batches are big: 10 min per task transaction (the broker's default max is 15).
    "transaction.timeout.ms": 600_000,
    "queue.buffering.max.messages": 200_000,
    "batch.num.messages": 10_000,
    # The broker's CPU goes per produce request, not per record: a task writes to every
    # partition of every topic it derives (42 on the mixed load), each filling slowly, so a
    # short linger sent many small batches. Mixed load, 200k records, local[2]: broker CPU
    # 17-20 us/record at 500 ms, 6-8 at 5 s (20 ms: 4x worse than 500). Full partitions still
    # go out at once (batch.size / batch.num.messages), a task's flush sends the rest, and
    # read_committed consumers see nothing before the commit anyway: no latency is added.
    # docs/design.md#spark-task-throughput
    "linger.ms": 5_000,
}
TEST_FAIL_AFTER_ENV = "YANGKEY_TEST_FAIL_AFTER"
TEST_FAIL_AFTER_CONF = "spark.yangkey.test.fail_after"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class Source(_Frozen):
    """Where the records come from (:mod:`yangkey.spark.source`)."""

    inputs: tuple[str, ...] = ()
    """Files, directories, Hadoop URIs or ``kafka://TOPIC`` (``--input``)."""
    source_bootstrap: str | None = None
    """The raw topic's cluster, when it is not the one produced to."""
    consumer_overrides: Mapping[str, object] = Field(default_factory=dict)
    start: str = "earliest"
    until: str = "latest"
    layout: LayoutChoice = "auto"
    split_size: int = DEFAULT_SPLIT_SIZE
    max_records_per_task: int = DEFAULT_MAX_RECORDS_PER_TASK
    outage_budget: float = DEFAULT_OUTAGE_BUDGET
    """Seconds metadata and offset look-ups of kafka:// inputs retry while the broker is down."""

    @property
    def reads_kafka(self) -> bool:
        return any(uri.startswith("kafka://") for uri in self.inputs)


class Delivery(_Frozen):
    """How the messages reach Kafka (:mod:`yangkey.spark.delivery`)."""

    mode: DeliveryMode = "exactly-once"
    producer_overrides: Mapping[str, object] = Field(default_factory=dict)
    transactional_prefix: str = "yangkey"
    run_id: str | None = None
    create_topics: bool = False
    topic_configs: Mapping[str, str] = Field(default_factory=dict)
    stale_after: float = DEFAULT_STALE_AFTER
    """Seconds without a heartbeat after which another run under the prefix is fenced."""

    @property
    def exactly_once(self) -> bool:
        return self.mode == "exactly-once"


class Stream(_Frozen):
    """``--stream``: Structured Streaming instead of one batch."""

    enabled: bool = False
    checkpoint: str | None = None
    trigger_interval: str | None = None
    available_now: bool = False
    max_per_trigger: int | None = None
    restart_on_failure: int = 0
    """Restart the query this many times after a failure (from its checkpoint)."""


class SparkRuntime(_Frozen):
    """The Spark the run starts (:mod:`yangkey.spark.runtime`)."""

    master: str | None = None
    conf: Mapping[str, str] = Field(default_factory=dict)
    log_level: str = "ERROR"
    app_name: str = "yangkey-produce"
    ship_env: bool = False
    """Executors run ``./environment/bin/python`` from ``spark.archives`` (``--ship-env``)."""


class JobConfig(_Frozen):
    """Everything ``yangkey produce`` and ``yangkey/cli/spark_submit.py`` (spark-submit) accept."""

    subscriptions: str
    bootstrap: str | None = None
    source: Source = Source()
    delivery: Delivery = Delivery()
    stream: Stream = Stream()
    spark: SparkRuntime = SparkRuntime()
    registry: RegistrySettings | None = None
    """Register each derived topic's value schema there and set the ``schema-id`` header."""
    # the producer knobs and the catalog
    keys: bool | None = None
    single_topic: str | None = None
    learn: bool = True
    instance_feed: bool = False
    """Add the ``yangkey-instances`` header (docs/design.md#instance-feed) for a server's
    Kafka engine instance tables; ``yangkey ingest`` computes it when it is missing."""
    empty_updates: EmptyUpdates = "count"
    """Updates without data (heartbeats): counted only, or dead-lettered too."""
    default_node: str | None = None
    yang_dirs: tuple[str, ...] = ()
    strict: bool = False
    """Fail on the first subscription that does not compile instead of skipping it."""
    catalog_topic: str | None = None
    """Set: share the catalog through this compacted topic (learned subscriptions too)."""
    dry_run: bool = False
    preflight: bool = True
    """Check the broker and the topics on the driver before starting (tests turn it off)."""
    fail_after: int | None = None
    """Test hook (``yangkey.test.fail_after``): attempt 0 of each task crashes after N."""

    @model_validator(mode="after")
    def legal(self) -> JobConfig:
        """The combinations of settings that make a run; any other is one :class:`ConfigError`
        naming the options (``produce``: a usage error)."""
        problem = _problem(self)
        if problem is not None:
            raise ConfigError(problem, source="produce")
        return self

    @classmethod
    def of(cls, **fields: Any) -> JobConfig:
        """A JobConfig from flat names (``produce``'s option destinations, :data:`FLAT`)."""
        nested: dict[str, Any] = {}
        for name, value in fields.items():
            part, field = FLAT.get(name, (None, name))
            if part is None:
                nested[field] = value
            else:
                nested.setdefault(part, {})[field] = value
        return cls.model_validate(nested)

    def but(self, **fields: Any) -> JobConfig:
        """A copy with some settings changed (flat names, as :meth:`of` takes them)."""
        flat = {
            **{name: getattr(self, name) for name in type(self).model_fields if name not in _PARTS},
            **{
                name: getattr(getattr(self, part), field)
                for name, (part, field) in FLAT.items()
                if part is not None
            },
        }
        return JobConfig.of(**{**flat, **fields})


_PARTS: Mapping[str, type[BaseModel]] = {
    "source": Source,
    "delivery": Delivery,
    "stream": Stream,
    "spark": SparkRuntime,
}
_RENAMED = {
    "delivery": ("delivery", "mode"),
    "stream": ("stream", "enabled"),
    "master": ("spark", "master"),
    "spark_conf": ("spark", "conf"),
    "spark_log_level": ("spark", "log_level"),
    "app_name": ("spark", "app_name"),
    "ship_env": ("spark", "ship_env"),
    "schema_registry": (None, "registry"),
}
FLAT: Mapping[str, tuple[str | None, str]] = {
    **{
        field: (part, field)
        for part, model in _PARTS.items()
        for field in model.model_fields
        if (part, field) not in _RENAMED.values()
    },
    **_RENAMED,
}
"""Flat name -> (sub-model, or None for the top level; its field): a sub-model's field under
its own name, or under the name ``produce``'s option gives it (``_RENAMED``)."""


def _problem(config: JobConfig) -> str | None:
    source, stream = config.source, config.stream
    if not config.bootstrap and not config.dry_run:
        return "--bootstrap is required (or use --dry-run)"
    if not source.inputs:
        return "give at least one --input (a file, a directory or kafka://TOPIC)"
    if stream.enabled and not stream.checkpoint:
        return "--stream needs --checkpoint DIR (where Spark records progress)"
    if stream.enabled and len(source.inputs) != 1:
        return "--stream reads exactly one --input"
    remote = [uri for uri in source.inputs if not uri.startswith("kafka://") and not is_local(uri)]
    if remote and len(remote) < len(source.inputs):
        return "--input: mix local inputs and Hadoop URIs in separate runs"
    if not stream.enabled:
        for given, option in (
            (stream.trigger_interval, "--trigger-interval"),
            (stream.restart_on_failure, "--restart-on-failure"),
        ):
            if given:
                return f"{option} needs --stream"
    if config.spark.ship_env and stream.enabled and source.reads_kafka:
        # Tried on a standalone cluster: Spark plans Python streaming sources in a Python
        # process the *driver* starts with the same interpreter as the executors' readers.
        return (
            "--ship-env cannot serve --stream from kafka://: Spark runs the Python streaming"
            " source on the driver too, with the executors' shipped interpreter; install"
            " yangkey at the same interpreter path on every node and set PYSPARK_PYTHON instead"
        )
    if config.registry is not None and config.single_topic is not None and not config.dry_run:
        return (
            "--single-topic mixes every subscription branch in one topic, which has no one"
            " value schema; drop --schema-registry or --single-topic"
        )
    return _delivery_problem(config.delivery)


def _delivery_problem(delivery: Delivery) -> str | None:
    overrides = delivery.producer_overrides
    if "transactional.id" in overrides:
        return (
            "transactional.id is derived per task (prefix, run id, partition); set"
            " --transactional-id-prefix or --run-id instead"
        )
    idempotence = str(overrides.get("enable.idempotence", "true")).strip().lower()
    acks = str(overrides.get("acks", "all")).strip().lower()
    if delivery.exactly_once and (idempotence == "false" or acks not in ("all", "-1")):
        return (
            "exactly-once delivery needs acks=all and idempotence; drop those settings or pass"
            " --delivery at-least-once"
        )
    return None
