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
from typing import Any

from yangkey.messages import KeyedMessage, Rejection
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


# Why the native pass left a line to :class:`Leftovers` (``Outbox.run``'s codes too,
# native/src/direct.rs)
LIMITS = 0
"""Empty, cut at a carriage return or over the notification size limit: ``build``'s checks."""
RAISED = 1
"""The pass raised: ``build`` asks it again and words the error with the line's position."""
UNANSWERED = 2
"""The pass answered None (or answered what needs a look: several topics, near the size
limit): ``build`` takes the Python path."""


_UNMADE: Any = object()
"""``Leftovers.take``'s ``message`` when ``NativePass.message`` was not asked yet."""


class Leftovers:
    """A line the native pass did not simply answer with one message that fits, taken as
    :func:`outgoing` takes its record: the one place both line loops (:func:`outgoing_lines`
    and :func:`yangkey.spark.delivery.direct.fill`) settle such lines."""

    def __init__(
        self,
        lines: LineRecords,
        builder: MessageBuilder,
        dead_letter_topic: str,
        tally: Tally,
        max_bytes: int,
    ) -> None:
        native = builder.native_pass()
        assert native is not None  # both loops take lines only where the pass runs
        self._message_of, self._messages_of = native.message, native.messages
        self._path = lines.path
        self._builder = builder
        self._dead_letter_topic = dead_letter_topic
        self._tally = tally
        self._max_bytes = max_bytes
        self._room = max_bytes - RECORD_OVERHEAD

    def take(
        self, line: bytes, number: int, why: int, found: Any = None, message: Any = _UNMADE
    ) -> tuple[list[KeyedMessage] | None, int]:
        """(``line``'s messages, dead letters included; None for a blank line, not a record)
        and how many bytes the chunk's weight loses. ``found`` is the pass's answer, if any;
        ``message`` its single message where already made (``NativePass.message``)."""
        builder = self._builder
        source = f"{self._path}:{number}"
        if why == LIMITS:
            # split_records' cut (\r, blank lines) and build's own size check
            record = line[:-1] if line.endswith(b"\r") else line
            if not record.strip():
                return None, len(line) + 1
            lighter = len(line) - len(record)
            return self._settled(builder.build(record, source), record, source), lighter
        if found is None:
            if not line.strip():
                return None, len(line) + 1
            return self._settled(builder.build(line, source, why == RAISED), line, source), 0
        produced = self._tally.produced
        if message is _UNMADE:
            message = self._message_of(line, found)
        if message is not None:
            # the builder's bound on header bytes: fits' test of one message
            if len(message[1] or b"") + len(line) <= self._room - builder.header_bytes:
                produced[message[0]] += 1
                return [message], 0
            result = [message]
        else:
            result = self._messages_of(line, found)
            if result and fits(result, builder.header_bytes, self._max_bytes):
                for each in result:
                    produced[each.topic] += 1
                return result, 0
        return self._settled(result, line, source), 0

    def _settled(
        self, result: list[KeyedMessage] | Rejection, raw: bytes, source: str
    ) -> list[KeyedMessage]:
        return list(
            settled(
                result,
                raw,
                source,
                self._builder,
                self._dead_letter_topic,
                self._tally,
                self._max_bytes,
            )
        )


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
    keys, keys_xml, ns_modules, route, routes, route_xml, routes_xml, message_of, _ = native
    take = Leftovers(lines, builder, dead_letter_topic, tally, max_bytes).take
    path = lines.path
    limit = builder.max_bytes
    room = max_bytes - RECORD_OVERHEAD
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
                found = message = None
                if crlf or not line or len(line) > limit:
                    taken, lighter = take(line, number, LIMITS)
                else:
                    try:
                        if line[0] == 60:  # b"<": line.startswith's call cost more
                            found = keys_xml(line, path, ns_modules, route_xml, False, routes_xml)
                        else:
                            found = keys(line, path, ns_modules, route, False, routes, False, True)
                    except Exception:
                        # an error the pass raised names the position it was given: the
                        # record goes through build again, which words it with the line's own
                        taken, lighter = take(line, number, RAISED)
                    else:
                        if found is not None:
                            message = message_of(line, found)
                            if (
                                message is not None
                                and len(message[1] or b"") + len(line)
                                <= room - builder.header_bytes
                            ):
                                topic = message[0]
                                sent[topic] = seen(topic, 0) + 1
                                yield message
                                continue
                        taken, lighter = take(line, number, UNANSWERED, found, message)
                weight -= lighter
                if taken is None:
                    blank += 1
                    continue
                if found is None:
                    built += 1
                yield from taken
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
