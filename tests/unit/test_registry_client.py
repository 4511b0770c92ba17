"""The producer's registry client and the ``yangkey registry`` commands, against the HTTP API
served in-process over an in-memory log (no broker needed for these)."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from cli_helpers import assert_one_error, run
from registry_memory import MemoryLog

from yangkey.catalog import load_catalog
from yangkey.registry.client import SchemaIds, register_topic_schemas, subject_for, topic_schemas
from yangkey.registry.errors import RegistryError
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.registry import Registry

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "subscriptions.yaml")


@pytest.fixture
def served() -> Iterator[tuple[str, MemoryLog]]:
    log = MemoryLog()
    server = RegistryHTTPServer(Registry(log, "A"), "127.0.0.1", 0)
    server.start()
    try:
        yield server.url, log
    finally:
        server.stop()


def free_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_every_derived_topic_gets_its_value_schema_registered_once(
    served: tuple[str, MemoryLog],
) -> None:
    url, log = served
    catalog = load_catalog(EXAMPLE)
    ids = register_topic_schemas(url, catalog)
    assert sorted(ids) == sorted(spec.name for spec in catalog.topics)
    assert len(set(ids.values())) == len(ids), "different subtrees, different schemas"
    written = len(log.records)
    assert written == len(ids)
    assert register_topic_schemas(url, catalog) == ids, "a new run looks the ids up"
    assert len(log.records) == written, "and writes nothing"

    result = run("registry", "register", "--subscriptions", EXAMPLE, "--schema-registry", url)
    assert result.exit_code == 0, result.output
    printed = dict(line.split("\t") for line in result.stdout.splitlines())
    assert printed == {subject_for(topic): str(schema_id) for topic, schema_id in ids.items()}


def test_the_registered_schema_is_the_generated_one(served: tuple[str, MemoryLog]) -> None:
    url, _ = served
    catalog = load_catalog(EXAMPLE)
    texts = topic_schemas(catalog)
    topic = next(name for name in texts if name.endswith("if-interfaces-interface"))
    schema_id = SchemaIds(url).id_for(topic, texts[topic])
    with urllib.request.urlopen(f"{url}/schemas/ids/{schema_id}") as response:
        body = json.load(response)
    assert body["schemaType"] == "JSON"
    assert json.loads(body["schema"]) == json.loads(texts[topic])

    result = run("registry", "schemas", "--subscriptions", EXAMPLE, "--topic", topic)
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == {subject_for(topic): json.loads(texts[topic])}


@pytest.mark.slow
def test_registry_refusals_and_an_unreachable_registry_are_clean_errors(
    served: tuple[str, MemoryLog],
) -> None:
    url, _ = served
    ids = SchemaIds(url)
    closed = json.dumps({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    ids.id_for("t", closed)
    with pytest.raises(RegistryError) as caught:
        SchemaIds(url).id_for("t", json.dumps({"type": "object", "additionalProperties": False}))
    assert caught.value.code == 409
    assert caught.value.message().startswith(f"{url}: t-value: ")

    nowhere = free_url()
    with pytest.raises(RegistryError) as caught:
        SchemaIds(nowhere).id_for("t", closed)
    assert "cannot reach the registry" in caught.value.message()
    assert_one_error(
        run("registry", "register", "--subscriptions", EXAMPLE, "--url", nowhere),
        nowhere,
        "cannot reach",
    )
    assert_one_error(
        run("registry", "schemas", "--subscriptions", EXAMPLE, "--topic", "nope"), "nope"
    )


def test_http_errors_are_confluent_json(served: tuple[str, MemoryLog]) -> None:
    url, _ = served

    def call(method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, object]]:
        request = urllib.request.Request(f"{url}{path}", data=body, method=method)
        request.add_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    assert call("GET", "/nothing/here") == (
        404,
        {"error_code": 404, "message": "HTTP 404 Not Found"},
    )
    assert call("PATCH", "/subjects")[1]["error_code"] == 405
    assert call("PUT", "/subjects")[1]["error_code"] == 405
    status, body = call("POST", "/subjects/x/versions", b"{not json")
    assert (status, body["error_code"]) == (400, 400)
    status, body = call("POST", "/subjects/x/versions", b'{"schema": "{}", "schemaType": "XML"}')
    assert (status, body["error_code"]) == (422, 42201)
    assert call("GET", "/schemas/ids/abc")[1]["error_code"] == 404  # as Jersey (Karapace)
    assert call("POST", "/subjects/x/versions", b'{"schema": "{}", "schemaType": "JSON"}') == (
        200,
        {"subject": "x", "version": 1, "id": 1, "schema": "{}", "schemaType": "JSON"},
    )
    assert call("GET", "/subjects/x/versions/0")[1]["error_code"] == 42202
    assert call("PUT", "/config", b'{"compatibility": "full_transitive"}') == (
        200,
        {"compatibility": "FULL_TRANSITIVE"},
    )
    assert call("GET", "/config")[1] == {"compatibilityLevel": "FULL_TRANSITIVE"}
    assert call("GET", "/config/x")[1]["error_code"] == 40408
    assert call("GET", "/config/x?defaultToGlobal=true")[1] == {
        "compatibilityLevel": "FULL_TRANSITIVE"
    }


@pytest.mark.needs("kafka")
def test_yang_modules_are_registered_with_their_imports_as_references(
    served: tuple[str, MemoryLog],
) -> None:
    url, _ = served
    result = run("registry", "register", "--subscriptions", EXAMPLE, "--url", url, "--modules")
    assert result.exit_code == 0, result.output
    printed = dict(line.split("\t") for line in result.stdout.splitlines())
    assert {"ietf-interfaces", "ietf-yang-types", "ietf-ip", "ietf-system"} <= set(printed)
    with urllib.request.urlopen(f"{url}/schemas/ids/{printed['ietf-ip']}") as response:
        body = json.load(response)
    assert body["schemaType"] == "YANG"
    assert body["schema"].startswith("module ietf-ip")
    assert {r["name"] for r in body["references"]} == {
        "ietf-interfaces",
        "ietf-inet-types",
        "ietf-yang-types",
    }
    again = run("registry", "register", "--subscriptions", EXAMPLE, "--url", url, "--modules")
    assert again.stdout == result.stdout, "a second run finds the same ids"
