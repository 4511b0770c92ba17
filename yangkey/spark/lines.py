"""A task's transform over the lines of its file range, a chunk of lines at a time.

:func:`outgoing_lines` yields what :func:`yangkey.spark.transform.outgoing` yields for
:func:`~yangkey.spark.source.splitting.split_records`' records of the same range, message for
message and count for count, with less Python per record: no generator per layer (lines,
progress, transform), no ``path:line`` string unless a record needs one (a rejection, the
Python path), the native key pass (:func:`yangkey.native.keys`) called from the loop itself.
A line the pass does not answer goes through :meth:`MessageBuilder.build` as before, with
its position. Where a periodic record's time went, and what this saves, is measured in
docs/design.md ("A task's loop over its lines").

``YANGKEY_LINE_LOOP=0`` turns it off (every record through ``outgoing``): the escape hatch
and the baseline of ``benchmarks/bench_spark_produce.py``'s A/B runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from yangkey.messages import KeyedMessage
from yangkey.producer import MessageBuilder
from yangkey.spark.source.splitting import LineRecords, RawRecord, told
from yangkey.spark.source.units import by_bytes
from yangkey.spark.transform import (
    DEFAULT_MAX_MESSAGE_BYTES,
    RECORD_OVERHEAD,
    Tally,
    fits,
    outgoing,
    settled,
)

LINE_LOOP_ENV = "YANGKEY_LINE_LOOP"
"""Set to 0 to read line ranges record by record (:func:`outgoing`)."""


def transform(
    records: Iterable[RawRecord],
    builder: MessageBuilder,
    dead_letter_topic: str,
    tally: Tally,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Iterator[KeyedMessage]:
    """:func:`outgoing`, by :func:`outgoing_lines` where the records are a range's lines."""
    if isinstance(records, LineRecords):
        return outgoing_lines(records, builder, dead_letter_topic, tally, max_bytes)
    return outgoing(records, builder, dead_letter_topic, tally, max_bytes)


def outgoing_lines(
    lines: LineRecords,
    builder: MessageBuilder,
    dead_letter_topic: str,
    tally: Tally,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Iterator[KeyedMessage]:
    """:func:`outgoing` of ``lines``' records (see the module doc)."""
    progress = lines.progress
    native = builder.native_pass()
    if native is None or os.environ.get(LINE_LOOP_ENV) == "0":
        records = lines if progress is None else told(lines, progress, by_bytes)
        yield from outgoing(records, builder, dead_letter_topic, tally, max_bytes)
        return
    keys, keys_xml, ns_modules, route, routes, route_xml, routes_xml, message_of, messages_of = (
        native
    )
    path = lines.path
    limit = builder.max_bytes
    room = max_bytes - RECORD_OVERHEAD
    build = builder.build
    produced = tally.produced
    native_before = builder.native_keyed
    keyed = 0
    try:
        for first, chunk in lines.chunks():
            # counted per chunk: its lines less the blank ones are records, those records
            # less the ones build answers (not the pass) are keyed here
            split = chunk.split(b"\n")
            blank = 0
            built = 0
            # a plain dict's get/set: the Counter's += cost 0.33 us per record
            sent: dict[str, int] = {}
            seen = sent.get
            weight = len(chunk) + 1  # the chunk's lines and their line feeds, blank ones out
            crlf = b"\r" in chunk
            for number, line in enumerate(split, first):
                if crlf or not line or len(line) > limit:
                    # split_records' cut (\r, blank lines) and build's own size check
                    record = line[:-1] if line.endswith(b"\r") else line
                    if not record.strip():
                        blank += 1
                        weight -= len(line) + 1
                        continue
                    weight -= len(line) - len(record)
                    built += 1
                    source = f"{path}:{number}"
                    result = build(record, source)
                    yield from settled(
                        result, record, source, builder, dead_letter_topic, tally, max_bytes
                    )
                    continue
                try:
                    if line[0] == 60:  # b"<": line.startswith's call cost more
                        found = keys_xml(line, path, ns_modules, route_xml, False, routes_xml)
                    else:
                        found = keys(line, path, ns_modules, route, False, routes, False, True)
                except Exception:
                    # an error the pass raised names the position it was given: the record
                    # goes through build again, which words it with the line's own
                    found = None
                    asked = False
                else:
                    asked = True
                if found is None:
                    if not line.strip():
                        blank += 1
                        weight -= len(line) + 1
                        continue
                    built += 1
                    source = f"{path}:{number}"
                    result = build(line, source, not asked)
                    yield from settled(
                        result, line, source, builder, dead_letter_topic, tally, max_bytes
                    )
                    continue
                message = message_of(line, found)
                if message is not None:
                    # the builder's bound on header bytes: fits' test of one message
                    if len(message[1] or b"") + len(line) <= room - builder.header_bytes:
                        topic = message[0]
                        sent[topic] = seen(topic, 0) + 1
                        yield message
                        continue
                    result = [message]
                else:
                    result = messages_of(line, found)
                    if result and fits(result, builder.header_bytes, max_bytes):
                        for each in result:
                            produced[each.topic] += 1
                        yield from result
                        continue
                source = f"{path}:{number}"
                yield from settled(
                    result, line, source, builder, dead_letter_topic, tally, max_bytes
                )
            for topic, many in sent.items():
                produced[topic] += many
            count = len(split) - blank
            keyed += count - built
            tally.records += count
            if progress is not None:
                progress(count, weight)
    finally:
        if progress is not None:
            progress(0, -1)
    builder.native_keyed += keyed
    tally.native += builder.native_keyed - native_before
