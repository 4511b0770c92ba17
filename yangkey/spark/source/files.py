"""File inputs: local files planned into line-aligned ranges on the driver (each range reads
itself back in its task: :meth:`~yangkey.spark.source.splitting.FileRange.read`), and the
record sets of Spark's ``binaryFile`` source (Hadoop URIs)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from yangkey.errors import InputError
from yangkey.spark.source.splitting import (
    FileRange,
    LayoutChoice,
    RawRecord,
    plan_ranges,
    split_records,
)


def is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file://")


def local_path(uri: str) -> Path:
    return Path(uri[len("file://") :] if uri.startswith("file://") else uri).expanduser()


def list_local_files(uri: str) -> list[Path]:
    # Absolute on the driver: executors run in other working directories.
    path = Path(os.path.abspath(local_path(uri)))
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(
            p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
        if not files:
            raise InputError("the directory holds no input files", source=uri)
        return files
    raise InputError("no such file or directory", source=uri)


def sized_files(uri: str) -> list[tuple[Path, int]]:
    """The input files of ``uri`` with their sizes; an error names the file."""
    sized: list[tuple[Path, int]] = []
    for path in list_local_files(uri):
        try:
            sized.append((path, path.stat().st_size))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    return sized


def plan_sized(
    sized: list[tuple[Path, int]], split_size: int, layout: LayoutChoice
) -> list[FileRange]:
    """:func:`plan_files` of files already listed (:func:`sized_files`)."""
    ranges: list[FileRange] = []
    for path, size in sized:
        if size == 0:
            continue
        try:
            with path.open("rb") as stream:
                ranges.extend(plan_ranges(stream, str(path), size, split_size, layout))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    return ranges


def plan_files(uri: str, split_size: int, layout: LayoutChoice) -> list[FileRange]:
    return plan_sized(sized_files(uri), split_size, layout)


def binary_files(rows: Iterable[Any], layout: LayoutChoice) -> tuple[str, list[RawRecord]]:
    """binaryFile rows (path, content): range key over their paths and contents, records."""
    files = sorted((str(row[0]), bytes(row[1])) for row in rows)
    digest = hashlib.sha256()
    records: list[RawRecord] = []
    for path, content in files:
        digest.update(path.encode() + b"\0" + hashlib.sha256(content).digest())
        records.extend(split_records(content, path, layout))
    return f"files:{len(files)}:{digest.hexdigest()[:32]}", records
