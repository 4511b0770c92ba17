"""The producer knobs of draft-ietf-nmop-yang-message-broker-message-key (its three: message
keys on/off, a topic per subscription branch on/off, and the subscription-type topic level
(which is part of the catalog's topic names); and this producer's own: learning, the instance
feed, what an empty update does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yangkey.catalog import Catalog
from yangkey.errors import ConfigError
from yangkey.messages import EmptyUpdates
from yangkey.topics import topic_name_problem

__all__ = ["ProducerKnobs"]


@dataclass(frozen=True)
class ProducerKnobs:
    keys: bool = True
    """Off: no key, the producer spreads messages round robin."""
    per_branch: bool = True
    """Off: every message goes to ``single_topic``."""
    single_topic: str = "yang-push"
    learn: bool = True
    """Off: never learn, even when the subscriptions file says ``learn: true`` (the file
    decides whether learning is allowed at all)."""
    instances: bool = False
    """The ``yangkey-instances`` header: the typed instance rows of each message for the
    ClickHouse instance tables (docs/design.md#instance-feed); per-branch topics only. Off by
    default: it costs the producer 2.5-3x on the Python path (benchmarks/bench_typed.py; the
    native pass writes JSON push-updates' headers itself, benchmarks/bench_native.py) and
    ``yangkey ingest`` computes the same rows itself; a server's Kafka engine tables need it
    on."""
    empty_updates: EmptyUpdates = "count"
    """An update without data (a heartbeat) is no error: ``count`` it in the run summary, or
    also send it to the dead-letter topic (``dead-letter``, kind ``empty-update``)."""

    def __post_init__(self) -> None:
        problem = topic_name_problem(self.single_topic)
        if problem is not None:
            raise ConfigError(
                f"{self.single_topic!r} is not a valid Kafka topic name: {problem}",
                source="single topic",
            )

    @classmethod
    def from_catalog(cls, catalog: Catalog, **overrides: Any) -> ProducerKnobs:
        policy = catalog.file.topic_policy
        values: dict[str, Any] = {
            "keys": policy.keys,
            "per_branch": policy.per_branch,
            "single_topic": policy.single_topic,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
