"""A task's lines produced straight from the native key pass into the native producer.

With the native key pass (:meth:`MessageBuilder.native_pass`) and the native producer
(:mod:`~yangkey.spark.delivery.native_producer`) both running, a line whose answer is one
message goes from ``Decoder.keys`` to librdkafka without a ``KeyedMessage`` tuple or any Python
code of its own: ``yangkey_native.Outbox.run`` keys a chunk's lines and keeps each such
message (the line, its key, its route's headers), and ``RdProducer.produce_outbox`` produces
them. Every other line (blank, over a size limit, answered None, several topics, a message near
the message size limit, an error) stops the run and is taken by
:class:`yangkey.spark.lines.Leftovers`, as :func:`~yangkey.spark.lines.outgoing_lines` takes
it; its messages (dead letters included) join
the outbox in input order. So a task produces the same messages, in the same order, with the
same counts as ``outgoing_lines`` and the sink's ``send_all`` (tests/unit/test_direct_sink.py
compares them).

``YANGKEY_DIRECT_SINK=0`` (or ``YANGKEY_LINE_LOOP=0``) turns it off, read on the driver
(:attr:`SinkSpec.direct <yangkey.spark.delivery.spec.SinkSpec.direct>`) and in the task: the
escape hatch and the baseline of the A/B benchmarks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from yangkey.messages import HEADER_EVENT_TIME, HEADER_SEQUENCE_NUMBER
from yangkey.producer import MessageBuilder
from yangkey.spark.lines import LIMITS, LINE_LOOP_ENV, Leftovers
from yangkey.spark.source.splitting import LineRecords
from yangkey.spark.transform import DEFAULT_MAX_MESSAGE_BYTES, RECORD_OVERHEAD, Tally

DIRECT_ENV = "YANGKEY_DIRECT_SINK"
"""Set to 0 to hand the native producer ``KeyedMessage`` tuples (:func:`outgoing_lines`)."""


def wanted() -> bool:
    """Whether this run lets the native pass produce straight into the native producer (read
    on the driver, shipped in ``SinkSpec.direct``; tasks read the switches again)."""
    return all(os.environ.get(name, "").strip() != "0" for name in (DIRECT_ENV, LINE_LOOP_ENV))


def make_outbox(module: Any, builder: MessageBuilder, max_bytes: int) -> Any | None:
    """An ``Outbox`` of ``module`` (``yangkey_native``) for ``builder``'s native pass, or
    None: the pass is off (or takes the instance feed), ``module`` has no ``Outbox``, or the
    switches say no."""
    if not wanted():
        return None
    native = builder.native_pass()
    outbox_type = getattr(module, "Outbox", None)
    decoder = getattr(native.json, "__self__", None) if native is not None else None
    if native is None or outbox_type is None or decoder is None:
        return None
    knobs = builder.knobs
    return outbox_type(
        decoder,
        native.ns_modules,
        native.route,
        native.routes,
        native.route_xml,
        native.routes_xml,
        None if knobs.per_branch else knobs.single_topic,
        bool(knobs.keys),
        builder.max_bytes,
        max_bytes - RECORD_OVERHEAD,
        HEADER_SEQUENCE_NUMBER,
        HEADER_EVENT_TIME,
    )


def fill(
    lines: LineRecords,
    builder: MessageBuilder,
    outbox: Any,
    dead_letter_topic: str,
    tally: Tally,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Iterator[int]:
    """Put ``lines``' messages into ``outbox`` a chunk at a time, counted into ``tally`` as
    :func:`~yangkey.spark.lines.outgoing_lines` counts them; yields after each chunk how many
    messages the outbox holds (the caller produces them: ``KafkaSink.send_outbox``)."""
    take = Leftovers(lines, builder, dead_letter_topic, tally, max_bytes).take
    progress = lines.progress
    path = lines.path
    produced = tally.produced
    run, add = outbox.run, outbox.add
    native_before = builder.native_keyed
    keyed = 0
    try:
        for first, chunk in lines.chunks():
            split = chunk.split(b"\n")
            end = len(split)
            blank = 0
            built = 0
            weight = len(chunk) + 1  # the chunk's lines and their line feeds, blank ones out
            crlf = b"\r" in chunk
            at = 0
            while at < end:
                found: Any = None
                if crlf:
                    why = LIMITS
                else:
                    at, why, found, builder.header_bytes = run(
                        split, at, path, builder.header_bytes
                    )
                    if at >= end:
                        break
                taken, lighter = take(split[at], first + at, why, found)
                at += 1
                weight -= lighter
                if taken is None:
                    blank += 1
                    continue
                if found is None:
                    built += 1
                add(taken)
            for topic, many in outbox.counts().items():
                produced[topic] += many
            count = end - blank
            keyed += count - built
            tally.records += count
            if progress is not None:
                progress(count, weight)
            yield len(outbox)
    finally:
        if progress is not None:
            progress(0, -1)
    builder.native_keyed += keyed
    tally.native += builder.native_keyed - native_before
