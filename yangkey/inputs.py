"""Reading input files without trusting them: regular files (or stdin) only, and bounded.

A FIFO with no writer blocks ``open()`` forever and ``/dev/zero`` never ends, so a path that
is not a regular file is refused before it is opened; ``-`` still means stdin, whatever it is.
Every read has a size limit, so one huge notification or line costs an error, not the memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from yangkey.errors import InputError

MAX_NOTIFICATION_BYTES = 16 * 1024 * 1024
"""Default cap on one notification (and one line of a batch file)."""

_DRAIN_CHUNK = 1 << 16

_DECLARATION = re.compile(rb"(?:\xef\xbb\xbf)?[ \t]*<\?xml[ \t\r\n][^>]*\?>[ \t\r]*")
DECLARATION_MAX = 256
"""Bytes an XML declaration line has at most (``<?xml version="1.0" encoding="UTF-8"?>``)."""


def source_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def open_input(path: str, what: str = "file") -> contextlib.AbstractContextManager[BinaryIO]:
    """``path`` opened for binary reading; ``-`` is stdin (left open on exit)."""
    if path == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
            raise InputError(
                f"{what} is {kind}, not a regular file (use - to read a pipe on stdin)",
                source=path,
            )
        return open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=path) from None


def read_bounded(path: str, limit: int, what: str = "file") -> bytes:
    """The whole content of ``path`` (or stdin), refused when longer than ``limit`` bytes."""
    with open_input(path, what) as stream:
        try:
            data = stream.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=path) from None
    if len(data) > limit:
        raise InputError(
            f"{what} is larger than the limit of {limit} bytes", source=source_name(path)
        )
    return data


def bounded_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` for each line; ``None`` for a line over ``limit`` bytes, whose
    rest is read and dropped so that the next line is still found."""
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                rest = stream.readline(_DRAIN_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, line


def is_declaration(line: bytes) -> bool:
    """Whether ``line`` is an XML declaration and nothing else (``<?xml version="1.0"?>``)."""
    return len(line) <= DECLARATION_MAX and _DECLARATION.fullmatch(line) is not None


def join_declarations(
    lines: Iterable[tuple[int, bytes | None]],
) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` with an XML declaration line joined to the line after it.

    ncclient and IOS-XE print each notification as an ``<?xml ...?>`` line followed by the
    document on one line: one record, numbered by its first line, not a declaration record (a
    bogus dead letter) and a notification. A declaration followed by nothing (or by another)
    stays a record of its own, and is refused as such.
    """
    pending: tuple[int, bytes] | None = None
    for number, line in lines:
        if line is not None and is_declaration(line.rstrip(b"\n")):
            if pending is not None:
                yield pending
            pending = (number, line)
            continue
        if pending is None:
            yield number, line
            continue
        if line is not None and not line.strip():
            continue  # a blank line between a declaration and its document
        start, declaration = pending
        pending = None
        if line is None:  # over the size limit: reported on its own
            yield start, declaration
            yield number, line
            continue
        yield start, declaration.rstrip(b"\r\n") + b"\n" + line
    if pending is not None:
        yield pending
