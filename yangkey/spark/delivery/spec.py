"""What a Spark run's tasks are told about producing (:class:`SinkSpec`, shipped to the
executors in the closure) and what each successful task attempt reports back
(:class:`PartitionResult`); :mod:`yangkey.spark.delivery.sink` does the producing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from yangkey.kafka.config import connection_settings
from yangkey.registry.client import RegistrySettings
from yangkey.spark.delivery.markers import RunScope
from yangkey.spark.transform import DEFAULT_MAX_MESSAGE_BYTES, Tally


@dataclass(frozen=True)
class SinkSpec:
    """How tasks produce: shipped to executors in the closure (plain values only)."""

    producer_config: Mapping[str, object]
    """Complete librdkafka config (bootstrap included, no ``transactional.id``)."""
    dead_letter_topic: str
    run_id: str
    transactional_prefix: str = "yangkey"
    exactly_once: bool = True
    timeout: float = 130.0
    """Seconds to wait for init, flush and commit: the delivery timeout plus a margin."""
    fail_after: int | None = None
    """Test hook: attempt 0 of every partition crashes after this many messages."""
    dry_run: bool = False
    identity: str = ""
    """The streaming checkpoint's identity (empty in batch runs), recorded in every marker."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Messages bigger than this go to the dead-letter topic (truncated) instead of failing."""
    schema_registry: RegistrySettings | None = None
    schema_ids: Mapping[str, int] = field(default_factory=dict)
    """The driver's ``{topic: schema id}`` for every topic of the catalog."""
    native: bool = True
    """Produce through the native producer where the executor has it
    (:mod:`~yangkey.spark.delivery.native_producer`); False: confluent-kafka's."""
    direct: bool = True
    """With the native producer, let the native key pass produce into it straight
    (:mod:`~yangkey.spark.delivery.direct`); False: ``KeyedMessage`` tuples, as before."""

    @property
    def bootstrap(self) -> str:
        return str(self.producer_config.get("bootstrap.servers", "?"))

    def scope(self) -> RunScope:
        """Where this run's markers, run record and transactional ids live."""
        return RunScope.of(
            self.producer_config, self.transactional_prefix, self.run_id, self.dead_letter_topic
        )

    def transactional_id(self, partition: int) -> str:
        return f"{self.transactional_prefix}-{self.run_id}-{partition}"

    def marker_consumer_config(self, partition: int) -> dict[str, object]:
        config = connection_settings(self.producer_config)
        config.update(
            {
                "group.id": self.transactional_id(partition),
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
        return config


@dataclass
class PartitionResult:
    """What one successful task attempt reports to the driver."""

    partition: int
    attempt: int
    batch_id: int
    tally: Tally = field(default_factory=Tally)
    skipped: bool = False
    """True when an earlier attempt had committed this partition (counts from its marker)."""
    seconds: float = 0.0
