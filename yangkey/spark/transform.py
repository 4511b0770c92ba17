"""The Spark job's per-partition logic, without Spark.

Everything here takes iterators and returns iterators, so it runs (and is unit tested) in a
plain Python process; :mod:`yangkey.spark.tasks` wires it into the function every partition
runs. Its only I/O: :meth:`BuilderSpec.from_file` reads the subscriptions file on the driver,
and a builder with a shared catalog talks to that catalog's Kafka topic.

* :class:`BuilderSpec` is what the driver ships to executors: the subscriptions file **text**
  and the producer knobs, never compiled objects (yangson models do not pickle well and would
  be shipped per task). :func:`builder_for` compiles it once per executor Python process and
  caches the :class:`~yangkey.producer.MessageBuilder` in a module-level dict.
* :func:`outgoing` is the per-record step: ``(raw bytes, source position)`` -> the records to
  produce (its keyed messages, or a dead-letter record saying why it was rejected; a record
  that yields no message at all is rejected too, as ``no-match``: nothing accepted may
  vanish), counting into a :class:`Tally`.

Input bytes become records in :mod:`yangkey.spark.source.splitting`.
"""

from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from yangkey.catalog import Catalog, build_catalog
from yangkey.config import parse_subscriptions, read_subscriptions_text
from yangkey.errors import YangkeyError
from yangkey.messages import (
    EmptyUpdates,
    KeyedMessage,
    Rejection,
    header_bytes,
    truncated_headers,
)
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.spark.source.splitting import RawRecord

# --------------------------------------------------------------------------- builder spec


class SharedCatalogSpec(NamedTuple):
    """The shared catalog a builder's catalog writes its subscriptions through, learned ones
    included (:mod:`yangkey.kafka.catalog_topic`)."""

    bootstrap: str
    topic: str
    settings: tuple[tuple[str, str], ...]
    """The producer's connection settings (TLS, SASL), sorted."""
    create_topics: bool
    """Create a learned subscription's topics before its first message."""
    timeout: float = 15.0
    """Seconds a read or write of the topic may wait: as long as a task waits for its own
    deliveries, so that a partition leader lost mid-run stalls the catalog no sooner than the
    produce it serves."""


@dataclass(frozen=True)
class BuilderSpec:
    """Everything an executor needs to build a :class:`MessageBuilder`, as plain values.

    Hashable, so it is also the key of the per-process builder cache: two jobs in one
    executor with different files or knobs never share a builder.
    """

    subscriptions_text: str
    subscriptions_name: str
    """The file's path as the operator gave it: names the file in error messages."""
    base_dir: str | None = None
    """Absolute directory relative ``yang_dirs`` of the file are resolved against."""
    yang_dirs: tuple[str, ...] = ()
    keys: bool | None = None
    """None: the file's ``topic_policy.keys``."""
    single_topic: str | None = None
    """Set: every message goes to this one topic (the per-branch knob off)."""
    learn: bool = True
    instances: bool = False
    """The ``yangkey-instances`` header on every per-branch message (``--instance-feed``)."""
    empty_updates: EmptyUpdates = "count"
    """``--empty-updates``: count updates without data, or dead-letter them too."""
    default_node: str | None = None
    strict: bool = False
    """Raise for a subscription that does not compile instead of skipping it."""
    shared_catalog: SharedCatalogSpec | None = None

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        yang_dirs: Iterable[str] = (),
        keys: bool | None = None,
        single_topic: str | None = None,
        learn: bool = True,
        instances: bool = False,
        empty_updates: EmptyUpdates = "count",
        default_node: str | None = None,
        strict: bool = False,
        shared_catalog: SharedCatalogSpec | None = None,
    ) -> BuilderSpec:
        """Read the subscriptions file on the driver; directories become absolute."""
        file = Path(path)
        return cls(
            subscriptions_text=read_subscriptions_text(path),
            subscriptions_name=str(path),
            base_dir=str(file.parent.resolve()),
            yang_dirs=tuple(str(Path(d).resolve()) for d in yang_dirs),
            keys=keys,
            single_topic=single_topic,
            learn=learn,
            instances=instances,
            empty_updates=empty_updates,
            default_node=default_node,
            strict=strict,
            shared_catalog=shared_catalog,
        )

    def catalog(self, *, driver: bool = True) -> Catalog:
        """Compile the subscriptions (Phases 1 and 2); raises a YangkeyError naming the file.
        A subscription that does not compile is skipped (the driver reports it) unless
        ``strict``: its notifications are dead-lettered naming it. ``driver``: warn about a
        shared catalog topic with too few replicas (executors find the topic the driver has
        already reported)."""
        parsed = parse_subscriptions(self.subscriptions_text, source=self.subscriptions_name)
        base = Path(self.base_dir) if self.base_dir is not None else None
        try:
            catalog = build_catalog(
                parsed, yang_dirs=self.yang_dirs, base_dir=base, strict=self.strict
            )
        except YangkeyError as exc:
            raise exc.within(self.subscriptions_name) from None
        if self.shared_catalog is not None:
            from yangkey.kafka.catalog_topic import CatalogTopic  # noqa: PLC0415

            spec = self.shared_catalog
            shared = CatalogTopic(
                spec.bootstrap,
                spec.topic,
                overrides=dict(spec.settings),
                create_topics=spec.create_topics,
                timeout=spec.timeout,
                replication=parsed.internal("catalog"),
                warn=driver,
            )
            catalog.attach(shared)
        return catalog

    def knobs(self, catalog: Catalog) -> ProducerKnobs:
        overrides: dict[str, object] = {
            "keys": self.keys,
            "learn": self.learn,
            "instances": self.instances,
            "empty_updates": self.empty_updates,
        }
        if self.single_topic is not None:
            overrides["per_branch"] = False
            overrides["single_topic"] = self.single_topic
        return ProducerKnobs.from_catalog(catalog, **overrides)

    def builder(self) -> MessageBuilder:
        catalog = self.catalog(driver=False)
        return MessageBuilder(
            catalog,
            self.knobs(catalog),
            default_node=self.default_node,
            yang_dirs=self.yang_dirs,
        )


_BUILDERS: dict[BuilderSpec, MessageBuilder] = {}


def builder_for(spec: BuilderSpec) -> MessageBuilder:
    """The compiled builder for ``spec``, compiled at most once per Python process.

    What is alive once it is compiled (the builder, its schemas, the modules the worker
    daemon imported before forking) lives as long as the worker: it is moved out of the
    garbage collector's way (``gc.freeze``). A partition's messages in flight set off full
    collections, which walked all of it each time (0.1-0.2 s of a 75,000-record task), and
    each walk wrote to pages the worker otherwise shares with the daemon it forked from.
    """
    builder = _BUILDERS.get(spec)
    if builder is None:
        builder = spec.builder()
        _BUILDERS[spec] = builder
        gc.collect()  # garbage of the compile is not kept for good
        gc.freeze()
    return builder


# --------------------------------------------------------------------------- counting


@dataclass
class Tally:
    """What one partition (or the whole job) did: records read, messages per topic, rejects.

    Plain counters, merged on the driver from the results of *successful* task attempts only,
    which keeps them exact under retries (Spark accumulators are not).
    """

    records: int = 0
    produced: Counter[str] = field(default_factory=Counter)
    """Keyed messages per derived topic (dead-letter records not included)."""
    rejected: Counter[str] = field(default_factory=Counter)
    """Rejected records per error kind; each went to the dead-letter topic once."""
    empty: int = 0
    """Updates without data (heartbeats) counted, not dead-lettered (``--empty-updates``)."""
    native: int = 0
    """Records keyed by the native key pass (:func:`yangkey.native.keys`) on the executors."""
    native_sink: int = field(default=0, compare=False)
    """Records of tasks that produced through the native producer
    (:mod:`yangkey.spark.delivery.native_producer`): which client ran, not what was produced,
    so two tallies of the same output compare equal whichever did."""

    @property
    def messages(self) -> int:
        return sum(self.produced.values())

    @property
    def rejections(self) -> int:
        return sum(self.rejected.values())

    def merge(self, other: Tally) -> Tally:
        self.records += other.records
        self.empty += other.empty
        self.native += other.native
        self.native_sink += other.native_sink
        self.produced.update(other.produced)
        self.rejected.update(other.rejected)
        return self

    def to_json(self) -> str:
        return json.dumps(
            {
                "r": self.records,
                "p": dict(self.produced),
                "x": dict(self.rejected),
                **({"e": self.empty} if self.empty else {}),
                **({"n": self.native} if self.native else {}),
                **({"s": self.native_sink} if self.native_sink else {}),
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    def to_compact_json(self, limit: int) -> str:
        """:meth:`to_json`, or just the totals when that would exceed ``limit`` characters."""
        text = self.to_json()
        if len(text) <= limit:
            return text
        return json.dumps(
            {
                "r": self.records,
                "p": {"*": self.messages},
                "x": {"*": self.rejections},
                **({"e": self.empty} if self.empty else {}),
                **({"n": self.native} if self.native else {}),
                **({"s": self.native_sink} if self.native_sink else {}),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Tally:
        data = json.loads(text)
        return cls(
            records=int(data.get("r", 0)),
            empty=int(data.get("e", 0)),
            native=int(data.get("n", 0)),
            native_sink=int(data.get("s", 0)),
            produced=Counter({str(k): int(v) for k, v in data.get("p", {}).items()}),
            rejected=Counter({str(k): int(v) for k, v in data.get("x", {}).items()}),
        )


# --------------------------------------------------------------------------- the transform

DEFAULT_MAX_MESSAGE_BYTES = 1_000_000
"""librdkafka's default ``message.max.bytes`` (the broker's default limit is 1 MiB)."""
RECORD_OVERHEAD = 1024
"""Bytes kept free for the record and batch framing around key, value and headers."""


def wire_size(message: KeyedMessage) -> int:
    return (
        len(message.key or b"")
        + len(message.value)
        + RECORD_OVERHEAD
        + header_bytes(message.headers)
    )


def dead_letter(rejection: Rejection, topic: str, max_bytes: int) -> KeyedMessage:
    """The rejection's dead-letter record, its raw value cut to fit ``max_bytes``."""
    message = rejection.dead_letter(topic)
    excess = wire_size(message) - max_bytes
    if excess <= 0:
        return message
    truncated = truncated_headers(len(message.value))
    keep = max(0, len(message.value) - excess - header_bytes(truncated))
    return KeyedMessage(topic, None, message.value[:keep], message.headers + truncated)


def outgoing(
    records: Iterable[RawRecord],
    builder: MessageBuilder,
    dead_letter_topic: str,
    tally: Tally,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Iterator[KeyedMessage]:
    """The records to produce, in input order, counted into ``tally`` as they are yielded.

    A message the broker would refuse for its size (over ``max_bytes``) is not sent: its
    notification goes to the dead-letter topic as kind ``oversized`` (the raw value cut to
    fit, header ``yangkey-truncated-from`` giving the original length) and the run goes on.
    """
    produced = tally.produced
    build = builder.build
    native_before = builder.native_keyed
    # This loop runs once per record of every Spark task: lookups hoisted, nothing wrapped.
    for raw, source in records:
        tally.records += 1
        result = build(raw, source)
        if type(result) is list and result and fits(result, builder.header_bytes, max_bytes):
            for message in result:
                produced[message.topic] += 1
            yield from result
            continue
        yield from settled(result, raw, source, builder, dead_letter_topic, tally, max_bytes)
    tally.native += builder.native_keyed - native_before


def fits(messages: list[KeyedMessage], header_bytes: int, max_bytes: int) -> bool:
    """Whether every one of ``messages`` is within ``max_bytes`` on the wire. The builder's
    bound on header bytes (``header_bytes``) spares the loop over each message's headers
    unless a message comes within that bound of the limit; then sizes are exact."""
    room = max_bytes - RECORD_OVERHEAD - header_bytes
    for message in messages:
        if len(message.key or b"") + len(message.value) > room and wire_size(message) > max_bytes:
            return False
    return True


def settled(
    result: list[KeyedMessage] | Rejection,
    raw: bytes,
    source: str,
    builder: MessageBuilder,
    dead_letter_topic: str,
    tally: Tally,
    max_bytes: int,
) -> Iterator[KeyedMessage]:
    """:func:`outgoing`'s records of one build ``result`` that is not simply its messages:
    a rejection (or an empty update counted), no message at all (``no-match``), or a
    message over ``max_bytes`` (``oversized``: the others are sent)."""
    produced = tally.produced
    rejected = tally.rejected
    if isinstance(result, Rejection):
        if builder.counts_only(result):
            tally.empty += 1
            return
        rejected[result.kind] += 1
        yield dead_letter(result, dead_letter_topic, max_bytes)
        return
    if not result:
        rejected["no-match"] += 1
        rejection = Rejection(source, "no-match", "no subscription branch matched", raw)
        yield dead_letter(rejection, dead_letter_topic, max_bytes)
        return
    too_big = [m for m in result if wire_size(m) > max_bytes]
    for message in result:
        if wire_size(message) <= max_bytes:
            produced[message.topic] += 1
            yield message
    if not too_big:
        return
    rejected["oversized"] += 1
    sizes = ", ".join(f"{m.topic} ({wire_size(m):,} bytes)" for m in too_big)
    reason = (
        f"{len(too_big)} keyed message(s) over the {max_bytes:,}-byte message limit"
        f" (message.max.bytes / max.message.bytes): {sizes}"
    )
    rejection = Rejection(source, "oversized", reason, raw)
    yield dead_letter(rejection, dead_letter_topic, max_bytes)
