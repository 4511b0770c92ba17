"""What a producer run is asked to do: :class:`JobConfig` and the defaults it starts from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from yangkey.messages import EmptyUpdates
from yangkey.registry.client import RegistrySettings
from yangkey.spark.delivery.fencing import DEFAULT_STALE_AFTER
from yangkey.spark.source.kafka_source import DEFAULT_OUTAGE_BUDGET
from yangkey.spark.source.splitting import LayoutChoice

Delivery = Literal["exactly-once", "at-least-once"]

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


@dataclass
class JobConfig:
    """Everything ``yangkey produce`` and ``spark_jobs/produce_keyed.py`` accept."""

    subscriptions: str
    inputs: tuple[str, ...]
    bootstrap: str | None = None
    master: str | None = None
    stream: bool = False
    checkpoint: str | None = None
    producer_overrides: Mapping[str, object] = field(default_factory=dict)
    consumer_overrides: Mapping[str, object] = field(default_factory=dict)
    source_bootstrap: str | None = None
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
    schema_registry: RegistrySettings | None = None
    """Register each derived topic's value schema there and set the ``schema-id`` header."""
    catalog_topic: str | None = None
    """Set: share the catalog through this compacted topic (learned subscriptions too)."""
    create_topics: bool = False
    topic_configs: Mapping[str, str] = field(default_factory=dict)
    delivery: Delivery = "exactly-once"
    transactional_prefix: str = "yangkey"
    run_id: str | None = None
    start: str = "earliest"
    until: str = "latest"
    layout: LayoutChoice = "auto"
    split_size: int = DEFAULT_SPLIT_SIZE
    max_records_per_task: int = DEFAULT_MAX_RECORDS_PER_TASK
    dry_run: bool = False
    trigger_interval: str | None = None
    available_now: bool = False
    max_per_trigger: int | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    spark_log_level: str = "ERROR"
    app_name: str = "yangkey-produce"
    run_log: str | None = None
    """The run's log file (:mod:`yangkey.spark.runtime.runlog`): where the driver JVM yangkey starts
    writes its log4j log instead of stderr."""
    preflight: bool = True
    """Check the broker and the topics on the driver before starting (tests turn it off)."""
    ship_env: bool = False
    """Executors run ``./environment/bin/python`` from ``spark.archives`` (``--ship-env``)."""
    fail_after: int | None = None
    """Test hook (``yangkey.test.fail_after``): attempt 0 of each task crashes after N."""
    outage_budget: float = DEFAULT_OUTAGE_BUDGET
    """Seconds metadata and offset look-ups of kafka:// inputs retry while the broker is down."""
    restart_on_failure: int = 0
    """--stream: restart the query this many times after a failure (from its checkpoint)."""
    stale_after: float = DEFAULT_STALE_AFTER
    """Seconds without a heartbeat after which another run under the prefix is fenced."""
