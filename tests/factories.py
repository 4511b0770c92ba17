"""Test data every directory builds the same way: topic specs and names unique to a run.

A plain module, not fixtures, because test modules build their topics at import time (module
constants, ``parametrize``). ``tests/`` is on ``sys.path`` (the rootdir conftest), so unit and
integration tests both write ``from factories import topic_spec, unique_name``. The chdb
connection is a fixture, ``chdb_conn``, in ``tests/conftest.py``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from yangkey.topics import TopicSpec

RECENT_DAY = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
"""Yesterday (UTC), for event times of rows a test reads back from ClickHouse: tables drop a row
once its event time plus the topic's retention has passed (the TTL, also at insert), so a fixed
date would make the test fail once that much time has gone by."""

IF_PATH = "/ietf-interfaces:interfaces/interface"
"""The schema path of the topics tests build unless told otherwise."""


def topic_spec(name: str, *, compaction: bool = False, **fields: Any) -> TopicSpec:
    """A derived topic as the catalog would make it for subscription 1042 on ``IF_PATH``.

    ``compaction`` also picks the subscription type (``on-change-sync``, as the catalog
    requires, else ``periodic``); any other :class:`TopicSpec` field can be given.
    """
    schema_path = fields.pop("schema_path", IF_PATH)
    values: dict[str, Any] = {
        "schema_path": schema_path,
        "subscription_ids": (1042,),
        "subscription_type": "on-change-sync" if compaction else "periodic",
        "retention_seconds": 0,
        "partitions": 1,
        "replication_factor": 1,
        "templates": (f"{schema_path}[name='%s']" if schema_path == IF_PATH else schema_path,),
    }
    values.update(fields)
    return TopicSpec(name=name, compaction=compaction, **values)


def unique_name(prefix: str) -> str:
    """``prefix`` plus 8 hex digits: a topic, a run prefix or a group no other run shares, so
    reruns and parallel sessions against one broker never see each other's messages."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"
