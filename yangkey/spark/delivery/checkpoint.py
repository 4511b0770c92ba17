"""A stream's checkpoint identity: which checkpoint a streaming run's markers belong to.

The identity is written into the checkpoint directory when the checkpoint is created
(:func:`stream_identity`); every marker of the stream records it (``c``,
:mod:`yangkey.spark.delivery.markers`), so markers written under another checkpoint of the same run
are recognised (:func:`check_no_foreign_markers`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from yangkey.errors import ConfigError
from yangkey.spark.delivery.markers import Marker

IDENTITY_FILE = "yangkey-identity.json"


class CheckpointFiles(Protocol):
    """Reads and writes small files in the checkpoint directory (local or Hadoop)."""

    def read(self, name: str) -> str | None: ...

    def write(self, name: str, text: str) -> None: ...

    def exists(self, name: str) -> bool: ...


class LocalCheckpoint:
    def __init__(self, directory: str) -> None:
        self.directory = Path(
            directory[len("file://") :] if directory.startswith("file://") else directory
        ).expanduser()

    def read(self, name: str) -> str | None:
        try:
            return (self.directory / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write(self, name: str, text: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.directory / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(self.directory / name)

    def exists(self, name: str) -> bool:
        return (self.directory / name).exists()


class HadoopCheckpoint:
    """The same through the JVM's Hadoop FileSystem (hdfs://, s3a://…)."""

    def __init__(self, directory: str, session: Any) -> None:
        jvm = session._jvm
        self._jvm = jvm
        self._root = jvm.org.apache.hadoop.fs.Path(directory)
        conf = session._jsc.hadoopConfiguration()
        self._fs = self._root.getFileSystem(conf)

    def _path(self, name: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self._root, name)

    def read(self, name: str) -> str | None:
        path = self._path(name)
        if not self._fs.exists(path):
            return None
        stream = self._fs.open(path)
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write(self, name: str, text: str) -> None:
        stream = self._fs.create(self._path(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def exists(self, name: str) -> bool:
        return bool(self._fs.exists(self._path(name)))


@dataclass(frozen=True)
class StreamIdentity:
    identity: str
    run_id: str
    created: bool
    """True when this start created the checkpoint (the stream reads from --from)."""


_SPARK_STATE = ("offsets", "commits", "metadata")


def stream_identity(
    files: CheckpointFiles, run_id: str | None, legacy_run_id: str
) -> StreamIdentity:
    """The checkpoint's identity, written into it when it is created.

    A checkpoint of an older version (Spark state, no identity file) keeps the run id it
    had, derived from its path, and the empty identity of the markers it wrote.
    """
    text = files.read(IDENTITY_FILE)
    if text is not None:
        data = json.loads(text)
        recorded = str(data["run_id"])
        if run_id and run_id != recorded:
            raise ConfigError(
                f"the checkpoint belongs to run {recorded}, not {run_id}: drop --run-id or"
                " use another --checkpoint",
                source="--run-id",
            )
        return StreamIdentity(str(data["identity"]), recorded, False)
    if any(files.exists(name) for name in _SPARK_STATE):
        # Markers of older versions carry no identity: an empty one matches them.
        identity, chosen, created = "", run_id or legacy_run_id, False
    else:
        identity = uuid.uuid4().hex
        chosen, created = run_id or f"s{identity[:12]}", True
    files.write(IDENTITY_FILE, json.dumps({"identity": identity, "run_id": chosen}) + "\n")
    return StreamIdentity(identity, chosen, created)


def check_no_foreign_markers(
    markers: Mapping[int, Marker], identity: StreamIdentity, checkpoint: str
) -> None:
    """Refuse a stream whose run has markers ahead written under another checkpoint."""
    foreign = [m for m in markers.values() if m.batches > 0 and m.identity != identity.identity]
    if foreign:
        ahead = max(m.batches for m in foreign) - 1
        raise ConfigError(
            f"run {identity.run_id} has commit markers up to micro-batch {ahead} written under"
            f" another checkpoint, and this checkpoint's batches would start again at 0"
            " (their records would be skipped): restore the original checkpoint, or start"
            " a new run (another --run-id or none)",
            source=checkpoint,
        )
