"""librdkafka client configs: the pipeline's defaults plus whatever the operator passes.

Configs stay plain ``dict``\\ s handed to ``confluent_kafka`` verbatim, so every librdkafka
property (SASL, TLS, tuning) works without yangkey knowing it. They are layered, later wins:

1. the defaults here (:data:`PRODUCER_DEFAULTS`, :data:`CONSUMER_DEFAULTS`);
2. a properties file (``key=value`` lines, the format ``kcat -F`` reads);
3. environment variables ``YANGKEY_KAFKA_<KEY>``: ``YANGKEY_KAFKA_SASL_USERNAME`` →
   ``sasl.username`` (librdkafka property names contain no ``_``, so the mapping is exact);
4. ``-X key=value`` style command-line pairs (:func:`parse_kv`).

:func:`ensure_topics` creates the topics the key/topic derivation names, with the
compaction and retention each subscription asks for.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

# confluent_kafka.admin re-exports these without __all__, which mypy --strict refuses.
from confluent_kafka.cimpl import NewTopic

from yangkey.errors import BrokerError, ConfigError, Position, TopicError
from yangkey.kafka.logs import StderrHandler, logged
from yangkey.topics import TopicSpec as TopicSpec  # noqa: PLC0414 - re-exported for Kafka callers

if TYPE_CHECKING:
    from confluent_kafka.admin._metadata import ClusterMetadata

ENV_PREFIX = "YANGKEY_KAFKA_"

PRODUCER_DEFAULTS: Mapping[str, object] = {
    # murmur2 like the Java client, so a key lands on the same partition whoever produces it
    # (docs/design.md#producer-contract); "_random" spreads keyless messages instead of pinning
    # them to one partition.
    "partitioner": "murmur2_random",
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 20,
    "compression.type": "lz4",
}

CONSUMER_DEFAULTS: Mapping[str, object] = {
    # Offsets are committed after the rows are stored, never before: at-least-once.
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    # Never see messages of aborted transactions (the Spark job produces transactionally).
    "isolation.level": "read_committed",
}


# --------------------------------------------------------------------------- parsing


def kafka_reason(exc: BaseException) -> str:
    """librdkafka's own words for a Kafka error (``KafkaError.str()``), else the exception's."""
    error = exc.args[0] if exc.args else None
    if isinstance(error, KafkaError):
        return str(error.str())
    return str(exc) or type(exc).__name__


def kafka_code(exc: BaseException) -> int | None:
    """The Kafka error code (``KafkaError.code()``) an exception carries, else None."""
    error = exc.args[0] if exc.args else None
    return int(error.code()) if isinstance(error, KafkaError) else None


def parse_kv(items: Iterable[str], *, source: str = "command line") -> dict[str, str]:
    """``["k=v", ...]`` → ``{"k": "v"}``; the value may itself contain ``=``.

    Keys are stripped, values kept verbatim (a password may end in a space).
    """
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"expected key=value, got {item!r}", source=source)
        result[key] = value
    return result


def parse_properties(text: str, *, source: str = "properties") -> dict[str, str]:
    """``key=value`` lines; blank lines and lines starting with ``#`` or ``!`` are skipped.

    Both sides are stripped: in a file, surrounding whitespace is layout, not data.
    """
    result: dict[str, str] = {}
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "!")):
            key, sep, value = stripped.partition("=")
            if not sep or not key.strip():
                raise ConfigError(
                    f"expected key=value, got {stripped!r}",
                    source=source,
                    position=Position.in_text(text, offset),
                    text=text,
                )
            result[key.strip()] = value.strip()
        offset += len(line)
    return result


def load_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file (see :func:`parse_properties`); errors name file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", source=str(path)) from exc
    return parse_properties(text, source=str(path))


def env_overlay(
    environ: Mapping[str, str] | None = None, prefix: str = ENV_PREFIX
) -> dict[str, str]:
    """``YANGKEY_KAFKA_SASL_USERNAME=x`` → ``{"sasl.username": "x"}``.

    Lets secrets reach librdkafka without appearing on a command line (``ps`` shows those).
    """
    env = os.environ if environ is None else environ
    result: dict[str, str] = {}
    for name, value in env.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            result[name[len(prefix) :].lower().replace("_", ".")] = value
    return result


def client_overrides(
    *,
    properties_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    kv: Iterable[str] = (),
) -> dict[str, str]:
    """The operator's settings in precedence order: file < environment < ``key=value`` args."""
    merged: dict[str, str] = {}
    if properties_file is not None:
        merged.update(load_properties(properties_file))
    merged.update(env_overlay(environ))
    merged.update(parse_kv(kv))
    return merged


# --------------------------------------------------------------------------- client configs

CONNECTION_PREFIXES = (
    "bootstrap.",
    "security.",
    "sasl.",
    "ssl.",
    "ssl_",
    "socket.",
    "broker.",
    "client.",
    "metadata.",
    "api.version",
    "log_level",
    "log.",
    "debug",
    "reconnect.",
    "oauthbearer_",
    "enable.ssl",
    "allow.auto",
)
"""Client settings that say how to reach and authenticate to the cluster, not how to tune."""


def connection_settings(config: Mapping[str, object]) -> dict[str, object]:
    """The part of a client config another client of the same cluster shares (TLS, SASL…)."""
    return {key: value for key, value in config.items() if key.startswith(CONNECTION_PREFIXES)}


def _with_bootstrap(
    config: dict[str, object], bootstrap: str | None, overrides: Mapping[str, object] | None
) -> dict[str, object]:
    config.update(overrides or {})
    if bootstrap:
        # An explicit argument beats an ambient file or variable: it is the more specific.
        config["bootstrap.servers"] = bootstrap
    if not config.get("bootstrap.servers"):
        raise ConfigError(
            "no bootstrap servers: pass --bootstrap or set bootstrap.servers",
            source="kafka config",
        )
    return config


def producer_config(
    bootstrap: str | None, overrides: Mapping[str, object] | None = None
) -> dict[str, object]:
    """A ``confluent_kafka.Producer`` config: :data:`PRODUCER_DEFAULTS` under ``overrides``.

    Idempotence needs ``acks=all``; when the operator lowers ``acks`` without mentioning
    idempotence, idempotence is turned off rather than letting librdkafka refuse to start.
    """
    config = _with_bootstrap(dict(PRODUCER_DEFAULTS), bootstrap, overrides)
    given = overrides or {}
    lowered_acks = "acks" in given and str(given["acks"]).strip().lower() not in ("all", "-1")
    if lowered_acks and "enable.idempotence" not in given:
        config["enable.idempotence"] = False
    return config


def consumer_config(
    bootstrap: str | None, group: str, overrides: Mapping[str, object] | None = None
) -> dict[str, object]:
    """A ``confluent_kafka.Consumer`` config for ``group``: :data:`CONSUMER_DEFAULTS`."""
    config = _with_bootstrap({**CONSUMER_DEFAULTS, "group.id": group}, bootstrap, overrides)
    if not config.get("group.id"):
        raise ConfigError("a consumer needs a group id", source="kafka config")
    return config


def admin_config(
    bootstrap: str | None, overrides: Mapping[str, object] | None = None
) -> dict[str, object]:
    """An ``AdminClient`` config: just the connection (security settings come as overrides)."""
    return _with_bootstrap({}, bootstrap, overrides)


def _milliseconds(config: Mapping[str, object], key: str) -> int:
    try:
        return int(str(config[key]))
    except ValueError:
        raise ConfigError(
            f"{key}={config[key]!r}: expected a number of milliseconds", source="producer config"
        ) from None


def reconcile_timeouts(
    defaults: Mapping[str, object],
    overrides: Mapping[str, object],
    *,
    transactional: bool,
) -> dict[str, object]:
    """``defaults`` under ``overrides``, with librdkafka's timeout rules kept: the value the
    operator set wins and the default of the other one adjusts to it; two values the operator
    set that break a rule are a :class:`ConfigError`.

    librdkafka refuses ``message.timeout.ms`` > ``transaction.timeout.ms`` (a transactional
    producer) and ``linger.ms`` >= ``message.timeout.ms`` (0: no timeout). ``defaults`` must
    hold ``message.timeout.ms`` and ``linger.ms`` (and ``transaction.timeout.ms`` when
    ``transactional``)."""
    merged = {**defaults, **overrides}
    message_ms = _milliseconds(merged, "message.timeout.ms")
    if transactional:
        transaction_ms = _milliseconds(merged, "transaction.timeout.ms")
        if message_ms > transaction_ms:
            if "message.timeout.ms" not in overrides:
                message_ms = transaction_ms
                merged["message.timeout.ms"] = message_ms
            elif "transaction.timeout.ms" not in overrides:
                merged["transaction.timeout.ms"] = message_ms
            else:
                raise ConfigError(
                    f"message.timeout.ms ({message_ms}) must not exceed transaction.timeout.ms"
                    f" ({transaction_ms})",
                    source="producer config",
                )
    try:
        linger_ms = float(str(merged["linger.ms"]))  # librdkafka takes fractions here
    except ValueError:
        raise ConfigError(
            f"linger.ms={merged['linger.ms']!r}: expected a number of milliseconds",
            source="producer config",
        ) from None
    if message_ms and linger_ms >= message_ms:
        if "linger.ms" in overrides:
            raise ConfigError(
                f"linger.ms ({linger_ms:g}) must be less than message.timeout.ms ({message_ms})",
                source="producer config",
            )
        merged["linger.ms"] = message_ms // 2
    return merged


# --------------------------------------------------------------------------- topics


@dataclass(frozen=True)
class EnsureResult:
    """Which topics :func:`ensure_topics` created and which were there already."""

    created: tuple[str, ...] = ()
    existing: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """Existing topics that differ from their spec (partition count): not changed, reported."""


def topic_configs(spec: TopicSpec, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The topic-level configs a spec implies, as strings (the admin API wants strings)."""
    configs = {"cleanup.policy": "compact" if spec.compaction else "delete"}
    if spec.min_insync_replicas is not None:
        configs["min.insync.replicas"] = str(spec.min_insync_replicas)
    retention = spec.retention_seconds
    if retention:
        # Negative means "keep forever" (Kafka's -1); a compacted topic ignores it anyway.
        configs["retention.ms"] = "-1" if retention < 0 else str(retention * 1000)
    configs.update({str(k): str(v) for k, v in spec.configs.items()})
    configs.update(extra or {})
    return configs


def _admin(admin_or_bootstrap: AdminClient | str) -> AdminClient:
    if isinstance(admin_or_bootstrap, str):
        return AdminClient(logged({"bootstrap.servers": admin_or_bootstrap}))
    return admin_or_bootstrap


def ensure_topics(
    admin_or_bootstrap: AdminClient | str,
    specs: Sequence[TopicSpec] | Iterable[TopicSpec],
    *,
    timeout: float = 30.0,
    extra_configs: Mapping[str, str] | None = None,
    warn: bool = True,
) -> EnsureResult:
    """Create the topics that do not exist yet; existing ones are left as they are.

    ``admin_or_bootstrap`` is a ``confluent_kafka.admin.AdminClient`` or a bootstrap string.
    Returns once every created partition has a leader, so a producer can write at once.
    Raises :class:`TopicError` naming each topic Kafka refused and why. With ``warn``, topics
    with too few replicas for the cluster are one warning line (:func:`warn_under_replicated`).
    """
    wanted: dict[str, TopicSpec] = {}
    for spec in specs:
        previous = wanted.get(spec.name)
        if previous is not None and _shape(previous) != _shape(spec):
            raise TopicError("listed twice with different settings", source=f"topic {spec.name}")
        wanted[spec.name] = spec
    if not wanted:
        return EnsureResult()
    admin = _admin(admin_or_bootstrap)
    metadata = _metadata(admin, timeout)
    existing = {name for name in wanted if name in metadata.topics}
    warnings = [
        f"topic {name} exists with {len(metadata.topics[name].partitions)} partitions,"
        f" spec asks for {wanted[name].partitions}; left unchanged"
        for name in sorted(existing)
        if len(metadata.topics[name].partitions) != wanted[name].partitions
    ]
    missing = [wanted[name] for name in wanted if name not in existing]
    created: list[str] = []
    if missing:
        new_topics = [
            NewTopic(
                spec.name,
                num_partitions=spec.partitions,
                replication_factor=spec.replication_factor,
                config=topic_configs(spec, extra_configs),
            )
            for spec in missing
        ]
        futures = admin.create_topics(
            new_topics, operation_timeout=timeout, request_timeout=timeout
        )
        failures: list[str] = []
        for name, future in futures.items():
            try:
                future.result(timeout=timeout + 5)
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                code = error.code() if isinstance(error, KafkaError) else None
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    existing.add(name)  # someone else created it meanwhile: that is fine
                    continue
                reason = error.str() if isinstance(error, KafkaError) else str(exc)
                failures.append(f"{name}: {reason}")
            except Exception as exc:  # timeouts and the like: report, do not traceback
                failures.append(f"{name}: {exc!r}")
            else:
                created.append(name)
        if failures:
            where = admin_or_bootstrap if isinstance(admin_or_bootstrap, str) else "kafka"
            raise TopicError("could not create " + "; ".join(failures), source=where)
        _wait_for_leaders(admin, created, timeout)
        if warn:
            metadata = _metadata(admin, timeout)
    if warn:
        warn_under_replicated(metadata, list(wanted))
    return EnsureResult(
        created=tuple(created),
        existing=tuple(sorted(existing)),
        warnings=tuple(warnings),
    )


def under_replicated(metadata: ClusterMetadata, names: Iterable[str]) -> dict[str, int]:
    """``{topic: replicas}`` of the topics among ``names`` with fewer replicas than
    ``min(3, brokers)`` (the fewest of any partition); nothing on a one-broker cluster."""
    wanted = min(3, len(metadata.brokers))
    found: dict[str, int] = {}
    for name in names:
        topic = metadata.topics.get(name)
        if wanted < 2 or topic is None or not topic.partitions:
            continue
        fewest = min(len(partition.replicas) for partition in topic.partitions.values())
        if fewest < wanted:
            found[name] = fewest
    return found


def warn_under_replicated(metadata: ClusterMetadata, names: Iterable[str]) -> None:
    """One warning line through yangkey's logger naming the topics among ``names`` that a
    multi-broker cluster replicates less than ``min(3, brokers)`` times: a broker restart
    stalls their partitions, a lost disk loses their messages, and Kafka accepts ``acks=all``
    writes to them all the same."""
    short = under_replicated(metadata, names)
    if not short:
        return
    brokers = len(metadata.brokers)
    listed = ", ".join(f"{name} ({count})" for name, count in sorted(short.items()))
    topic_logger().warning(
        "%d topic(s) with fewer than %d replicas on this %d-broker cluster: %s; a failed"
        " broker stalls them and a lost disk loses their messages (set replication_factor in"
        " the subscriptions file or the broker's default.replication.factor; existing topics:"
        " kafka-reassign-partitions)",
        len(short),
        min(3, brokers),
        brokers,
        listed,
    )


@functools.cache
def topic_logger() -> logging.Logger:
    """``yangkey.kafka.topics``: what yangkey has to say about the topics it creates or finds,
    on stderr as ``warning: …`` lines."""
    logger = logging.getLogger("yangkey.kafka.topics")
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter("%(levelname_lower)s: %(message)s"))
    handler.addFilter(_lower_level)
    logger.addHandler(handler)
    logger.propagate = False
    return logger


def _lower_level(record: logging.LogRecord) -> bool:
    record.levelname_lower = record.levelname.lower()
    return True


def _shape(spec: TopicSpec) -> tuple[object, ...]:
    return (
        spec.partitions,
        spec.replication_factor,
        spec.min_insync_replicas,
        spec.compaction,
        spec.retention_seconds,
        dict(spec.configs),
    )


def _metadata(admin: AdminClient, timeout: float) -> ClusterMetadata:
    try:
        return admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise BrokerError(f"cannot list topics: {exc}", source="kafka") from exc


def _wait_for_leaders(admin: AdminClient, names: Sequence[str], timeout: float) -> None:
    """Creation is acknowledged before every partition has a leader; wait for that too."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending:
        metadata = _metadata(admin, timeout)
        for name in list(pending):
            topic = metadata.topics.get(name)
            if (
                topic is not None
                and topic.error is None
                and topic.partitions
                and all(p.leader >= 0 for p in topic.partitions.values())
            ):
                pending.discard(name)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TopicError(
                f"created but without partition leaders after {timeout:.0f}s",
                source=f"topic {sorted(pending)[0]}",
            )
        time.sleep(0.1)
