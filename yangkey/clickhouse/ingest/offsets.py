"""Whose offsets these are: the database a consumer group's commits claim, and the group
member a restarted ingest is.

Committed offsets claim "everything before is stored", so they must name where. The embedded
database's UUID is written to an identity file in the data directory when ingest starts, and
every offset commit carries it as commit metadata. Before each commit the file must still hold
that UUID (the directory was not removed or replaced under the running process), and the
offsets a new assignment starts from must have been committed with it (or none): otherwise
ingest stops with one error line and commits nothing, instead of reporting success over an
empty database.

The consumer is a static group member (``group.instance.id`` derived from the group, the data
directory and the database, unless one is given): an ingest restarted after a crash takes its
partitions back at once instead of waiting out the dead member's session timeout (45 s).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.connection import ChdbConnection, Connection

IDENTITY_FILE = "yangkey-ingest-identity.json"
#: Prefix of the offset commit metadata naming the database the rows went to.
_METADATA_PREFIX = "yangkey-database:"


class DatabaseIdentity:
    """The embedded database ingest writes to, as a UUID kept in its data directory."""

    def __init__(self, conn: ChdbConnection, database: str) -> None:
        rows = conn.query(
            "SELECT toString(uuid) AS uuid FROM system.databases WHERE name = {db:String}",
            {"db": database},
        )
        if not rows:
            raise ClickHouseError(f"database {database!r} does not exist", source=conn.description)
        self.uuid = str(rows[0]["uuid"])
        self.database = database
        self.description = conn.description
        self.file = Path(conn.path) / IDENTITY_FILE
        recorded = self._recorded()
        recorded[database] = self.uuid
        try:
            self.file.write_text(json.dumps(recorded, sort_keys=True), encoding="utf-8")
        except OSError as exc:
            raise ClickHouseError(
                f"cannot write the identity file: {exc.strerror}", source=str(self.file)
            ) from None

    def _recorded(self) -> dict[str, str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    @property
    def metadata(self) -> str:
        return _METADATA_PREFIX + self.uuid

    def verify(self) -> None:
        """Raise unless the data directory still holds this database (before a commit)."""
        if self._recorded().get(self.database) != self.uuid:
            raise ClickHouseError(
                "the data directory was removed or replaced while ingest was running: "
                "stopped without committing the last batch (restart ingest on the original "
                "directory, or re-read the topics with a new --group)",
                source=self.description,
            )

    def check_committed(self, committed: Sequence[Any], group: str) -> None:
        """Raise if ``group`` committed any of these offsets for another database."""
        for tp in committed:
            metadata = tp.metadata or ""
            if (
                tp.offset >= 0
                and metadata.startswith(_METADATA_PREFIX)
                and metadata != self.metadata
            ):
                raise ClickHouseError(
                    f"consumer group {group!r} committed {tp.topic} partition {tp.partition} "
                    f"up to offset {tp.offset} into another database "
                    f"({metadata[len(_METADATA_PREFIX) :]}, not {self.uuid}): those messages are "
                    "not here (was the data directory removed?). Point --embedded at the "
                    "original directory, or re-read the topics with a new --group",
                    source=self.description,
                )


def static_member_id(group: str, conn: Connection, database: str) -> str:
    """A ``group.instance.id`` stable across restarts of the same ingest, distinct otherwise."""
    where = str(Path(conn.path).resolve()) if isinstance(conn, ChdbConnection) else conn.description
    identity = "\n".join((group, where, database)).encode("utf-8")
    return "yangkey-ingest-" + hashlib.sha256(identity).hexdigest()[:16]
