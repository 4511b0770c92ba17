"""Raw input bytes -> records with exact positions: the file layouts and line-aligned ranges.

Functions over bytes and open binary streams (no Spark, no Kafka), shared by the driver,
which plans files into ranges (:mod:`yangkey.spark.source.files`), and the tasks, which read
them back (:meth:`FileRange.read`, the one place here that opens a file).

* :func:`detect_layout` and :func:`split_records` turn file bytes into records with exact
  ``path:line`` positions (JSON lines, XML one per line, or one document per file);
* :func:`plan_ranges` and :func:`cut_ranges` cut a file into :class:`FileRange` pieces at line
  starts; a range reads itself back with the key its commit marker records
  (:func:`file_range_key`: which bytes, by hash).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, ClassVar, Literal

import orjson

from yangkey.errors import InputError
from yangkey.inputs import DECLARATION_MAX, is_declaration, join_declarations
from yangkey.xmlsafe import parse_xml

RawRecord = tuple[bytes, str]
"""One raw notification and where it came from (``file:line``, ``kafka://topic@p:offset``)."""

Layout = Literal["lines", "document"]
LayoutChoice = Literal["auto", "lines", "document"]


def _first_line(data: bytes) -> bytes:
    """The first non-blank line, without an XML declaration line."""
    for line in data.splitlines():
        stripped = line.strip()
        if stripped.startswith(b"\xef\xbb\xbf"):
            stripped = stripped[3:]
        if not stripped:
            continue
        if stripped.startswith(b"<?xml"):
            end = stripped.find(b"?>")
            rest = stripped[end + 2 :].strip() if end >= 0 else b""
            if not rest:
                continue
            return rest
        return stripped
    return b""


_NOTIFICATION_ROOTS = frozenset(
    {"notification", "envelope", "message", "push-update", "push-change-update"}
)


def _xml_root(line: bytes) -> str | None:
    """The local name of the root if ``line`` is a whole XML document, else None."""
    try:
        root = parse_xml(line, "layout probe")
    except InputError:
        return None
    return str(root.tag).rpartition("}")[2]


def detect_layout(head: bytes) -> Layout:
    """``lines`` (JSON lines, XML one per line) or ``document`` (the file is one notification).

    Looks at the first bytes of a file only: the first non-blank line is a whole JSON value
    or a whole XML document -> one record per line; otherwise (pretty-printed JSON or XML)
    the file is one record. A file whose first line is broken still counts as lines when
    another line is a record on its own (``{`` in the first column, a whole XML document).
    """
    first = _first_line(head)
    if first.startswith(b"<"):
        if _xml_root(first) is not None:
            return "lines"
        # A bad first record must not turn an XML-lines file into one document: look for
        # another line that is a whole notification on its own.
        others = head.split(b"\n")[1:50]
        if any(
            line.startswith(b"<") and _xml_root(line.strip()) in _NOTIFICATION_ROOTS
            for line in others
        ):
            return "lines"
        return "document"
    if first.startswith((b"{", b"[")):
        try:
            orjson.loads(first)
        except orjson.JSONDecodeError:
            others = head.split(b"\n")[1:]
            if any(line.startswith(b"{") for line in others):
                return "lines"
            return "document"
        return "lines"
    return "lines"


def split_records(
    data: bytes, path: str, layout: LayoutChoice = "auto", first_line: int = 1
) -> Iterator[RawRecord]:
    """The records of a file's bytes (or of a line-aligned range of it).

    ``lines``: one record per non-blank line, position ``path:N`` with N counted from
    ``first_line``; a trailing ``\\r`` is dropped. ``document``: the whole text, position
    ``path``.
    """
    chosen = detect_layout(data[:65536]) if layout == "auto" else layout
    if chosen == "document":
        if data.strip():
            yield data, path
        return
    if b"<?xml" in data:
        # An XML declaration line belongs to the document on the line after it (how ncclient
        # and IOS-XE print notifications): one record.
        lines = (
            (number, line[:-1] if line.endswith(b"\r") else line)
            for number, line in enumerate(data.split(b"\n"), first_line)
        )
        for number, joined in join_declarations(lines):
            if joined is not None and joined.strip():
                yield joined, f"{path}:{number}"
        return
    number = first_line
    for chunk in _line_chunks(data):
        for line in chunk.split(b"\n"):
            record = line[:-1] if line.endswith(b"\r") else line
            if record.strip():
                yield record, f"{path}:{number}"
            number += 1


CHUNK_BYTES = 1 << 20
"""Bytes of a range :func:`split_records` cuts into lines at a time."""


class LineRecords:
    """:func:`split_records`' records of a range in the ``lines`` layout without a line that
    is an XML declaration alone (:func:`line_records` checks): iterated, the same ``(line,
    position)`` pairs; read by :func:`yangkey.spark.lines.outgoing_lines` a chunk of lines at
    a time, which builds a line's position only when something needs it (a rejection, the
    Python path)."""

    __slots__ = ("data", "first_line", "path", "progress")

    def __init__(
        self,
        data: bytes,
        path: str,
        first_line: int = 1,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.first_line = first_line
        self.progress = progress
        """Told (records, bytes) as chunks are read (:func:`yangkey.spark.progress.reporting`)."""

    def __iter__(self) -> Iterator[RawRecord]:
        return split_records(self.data, self.path, "lines", self.first_line)

    def chunks(self) -> Iterator[tuple[int, bytes]]:
        """(number of the chunk's first line, the chunk): ``split_records``' chunks."""
        number = self.first_line
        for chunk in _line_chunks(self.data):
            yield number, chunk
            number += chunk.count(b"\n") + 1


def told(
    records: Iterable[RawRecord],
    progress: Callable[[int, int], None],
    weigh: Callable[[RawRecord], int],
) -> Iterator[RawRecord]:
    """``records`` passed through, each told to ``progress`` as ``(1, weigh(record))`` as it is
    read, and ``(0, -1)`` once the reading ends (:attr:`LineRecords.progress`'s protocol)."""
    try:
        for record in records:
            progress(1, weigh(record))
            yield record
    finally:
        progress(0, -1)


def line_records(
    data: bytes, path: str, layout: LayoutChoice = "auto", first_line: int = 1
) -> Iterable[RawRecord]:
    """:func:`split_records`, as :class:`LineRecords` where it can be."""
    chosen = detect_layout(data[:65536]) if layout == "auto" else layout
    if chosen == "lines" and not _declaration_lines(data):
        return LineRecords(data, path, first_line)
    return split_records(data, path, chosen, first_line)


def _declaration_lines(data: bytes) -> bool:
    """Whether a line of ``data`` is an XML declaration alone, which ``split_records`` joins
    to the line after it (one before its document on the same line changes nothing)."""
    at = data.find(b"<?xml")
    while at >= 0:
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        if is_declaration(data[data.rfind(b"\n", 0, at) + 1 : end]):
            return True
        at = data.find(b"<?xml", end)
    return False


def _line_chunks(data: bytes) -> Iterator[bytes]:
    """``data`` in pieces of about :data:`CHUNK_BYTES`, cut at line feeds (which are left
    out), whose lines are ``data.split(b"\n")``'s. A task's lines then exist a chunk at a
    time, not all at once next to its range's bytes (30 MB of a 32 MB range)."""
    if len(data) <= CHUNK_BYTES:
        yield data
        return
    start = 0
    while True:
        end = data.find(b"\n", start + CHUNK_BYTES)
        if end < 0:
            yield data[start:]
            return
        yield data[start:end]
        start = end + 1


def path_key(path: str) -> str:
    """A file's absolute path as a short hash (range keys name files by it)."""
    return hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]


def file_range_key(path: str, start: int, end: int, data: bytes) -> str:
    """``file:<path hash>:<start>:<end>:<sha-256 of those bytes>``."""
    digest = hashlib.sha256(data).hexdigest()[:32]
    return f"file:{path_key(path)}:{start}:{end}:{digest}"


@dataclass(frozen=True)
class FileRange:
    """A line-aligned byte range of one file and the number of its first line: one task of a
    batch run (:mod:`yangkey.spark.source.units`)."""

    path: str
    start: int
    end: int
    first_line: int
    layout: Layout

    counts_records: ClassVar[bool] = False
    """Its work is bytes (``end - start``), not records."""

    def bytes_of(self, stream: IO[bytes]) -> bytes:
        """The range's bytes from an open ``stream`` of its file (raises if it shrank)."""
        stream.seek(self.start)
        data = stream.read(self.end - self.start)
        if len(data) != self.end - self.start:
            raise InputError(
                f"the file shrank while the job ran (bytes {self.start}-{self.end} planned)",
                source=self.path,
            )
        return data

    def read(self, _source_config: object = None) -> tuple[str, Iterable[RawRecord]]:
        """(range key, records): the bytes read and hashed whole first, so that the key
        proves which bytes a commit marker covers."""
        try:
            with open(self.path, "rb") as stream:
                data = self.bytes_of(stream)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=self.path) from None
        key = file_range_key(self.path, self.start, self.end, data)
        return key, line_records(data, self.path, self.layout, self.first_line)


def plan_ranges(
    stream: IO[bytes], path: str, size: int, split_size: int, layout: LayoutChoice = "auto"
) -> list[FileRange]:
    """Cut a file into ranges of about ``split_size`` bytes at line starts.

    Line numbers are counted here, on the driver, in one sequential pass (``bytes.count`` runs
    at memory speed), so every record of every range gets an exact ``path:line`` position.
    A file in the ``document`` layout is never cut.
    """
    head = stream.read(65536)
    chosen: Layout = detect_layout(head) if layout == "auto" else layout
    return cut_ranges(stream, path, 0, size, 1, split_size, chosen)


def cut_ranges(
    stream: IO[bytes],
    path: str,
    start: int,
    size: int,
    first_line: int,
    split_size: int,
    layout: Layout,
) -> list[FileRange]:
    """``[start, size)`` (``start`` at a line start, line ``first_line``) cut at line starts."""
    if layout == "document" or size - start <= split_size:
        return [FileRange(path, start, size, first_line, layout)]
    ranges: list[FileRange] = []
    line = first_line
    while start < size:
        end = _line_start_after(stream, start + split_size, size)
        while end < size and _ends_in_declaration(stream, start, end):
            end = _line_start_after(stream, end, size)  # keep it with its document
        ranges.append(FileRange(path, start, end, line, layout))
        line += count_newlines(stream, start, end)
        start = end
    return ranges


def _line_start_after(stream: IO[bytes], target: int, size: int) -> int:
    """The offset just past the first LF at or after ``target`` (``size`` if none)."""
    if target >= size:
        return size
    stream.seek(target)
    offset = target
    while True:
        block = stream.read(65536)
        if not block:
            return size
        cut = block.find(b"\n")
        if cut >= 0:
            return offset + cut + 1
        offset += len(block)


def _ends_in_declaration(stream: IO[bytes], start: int, end: int) -> bool:
    """Whether the line ending at ``end`` (a line start after ``start``) is an XML
    declaration alone."""
    back = min(end - start, DECLARATION_MAX + 2)
    stream.seek(end - back)
    tail = stream.read(back).rstrip(b"\n")
    cut = tail.rfind(b"\n")
    if cut < 0 and end - back > start:
        return False  # a line longer than any declaration
    return is_declaration(tail[cut + 1 :].rstrip(b"\r"))


def count_newlines(stream: IO[bytes], start: int, end: int) -> int:
    stream.seek(start)
    remaining = end - start
    count = 0
    while remaining > 0:
        block = stream.read(min(1 << 22, remaining))
        if not block:
            break
        count += block.count(b"\n")
        remaining -= len(block)
    return count


def read_range(stream: IO[bytes], file_range: FileRange) -> Iterator[RawRecord]:
    """The records of one planned range of an open file (:meth:`FileRange.read`, without the
    key)."""
    data = file_range.bytes_of(stream)
    yield from split_records(data, file_range.path, file_range.layout, file_range.first_line)
