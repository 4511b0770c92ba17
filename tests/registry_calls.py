"""Talking to a running schema registry instance the way a client does, for the tests that
run one against real brokers (tests/integration/test_registry_faults.py, test_cluster.py).

A plain module like :mod:`factories` (``tests/`` is on ``sys.path``): ``from registry_calls
import call, ok, json_schema, until``.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit


def call(url: str, method: str, path: str, body: object = None) -> tuple[int, Any]:
    """One request on its own connection (so a hung one holds no other): (status, JSON
    answer)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def ok(url: str, method: str, path: str, body: object = None) -> Any:
    """:func:`call`'s answer, which must be a 200."""
    status, answer = call(url, method, path, body)
    assert status == 200, (method, path, status, answer)
    return answer


def json_schema(name: str) -> dict[str, str]:
    """A registration body: a JSON Schema of its own per ``name``."""
    return {"schema": json.dumps({"type": "object", "title": name}), "schemaType": "JSON"}


def until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait for ``condition``, failing the test with ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:.0f}s: {what}"
        time.sleep(0.2)
