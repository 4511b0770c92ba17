"""The producer's schema ids (``produce --schema-registry``): credentials never shown, learned
topics registered once per process, the sink's ``schema-id`` header, clean CLI errors. Against
the registry served in-process over an in-memory log (no broker needed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import assert_one_error, run
from registry_memory import MemoryLog
from test_registry_client import free_url

from yangkey.catalog import Catalog, load_catalog
from yangkey.errors import ConfigError
from yangkey.messages import HEADER_SCHEMA_ID
from yangkey.registry.client import (
    RegistrySettings,
    SchemaIds,
    learned_topic_id,
    process_ids,
    register_topic_schemas,
    shown_url,
)
from yangkey.registry.errors import RegistryError
from yangkey.registry.httpd import RegistryHTTPServer
from yangkey.registry.registry import Registry

EXAMPLE = Path(__file__).parents[2] / "examples" / "subscriptions.yaml"
LEARNED_XPATH = "/ietf-interfaces:interfaces/interface/oper-status"


@dataclass
class Served:
    url: str
    log: MemoryLog
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(method, path, Authorization header) of every request the registry answered."""


@pytest.fixture
def served() -> Iterator[Served]:
    seen: list[tuple[str, str, str | None]] = []

    log = MemoryLog()
    server = RegistryHTTPServer(Registry(log, "A"), "127.0.0.1", 0)
    route = server.app.router

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        authorization = headers.get(b"authorization")
        query = scope["query_string"].decode()
        path = scope["path"] + (f"?{query}" if query else "")
        seen.append((scope["method"], path, authorization.decode() if authorization else None))
        await route(scope, receive, send)

    server.app.router = recording  # type: ignore[assignment]
    server.start()
    try:
        yield Served(server.url, log, seen)
    finally:
        server.stop()


def with_credentials(url: str, user: str = "alice", password: str = "s3cret") -> str:
    return url.replace("http://", f"http://{user}:{password}@")


def learning_catalog(tmp_path: Path) -> Catalog:
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    document["learn"] = True
    path = tmp_path / "subscriptions.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return load_catalog(path)


def test_shown_url_hides_passwords_only() -> None:
    assert shown_url("http://alice:s3cret@h:8081") == "http://alice:***@h:8081"
    assert shown_url("https://h:8081/,http://u:p@g") == "https://h:8081/,http://u:***@g"
    assert shown_url("http://token@h") == "http://token@h"  # a user name alone is no secret


def test_settings_take_environment_then_options() -> None:
    environ = {
        "YANGKEY_SCHEMA_REGISTRY": "http://ignored-here",
        "YANGKEY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO": "bob:pw",
        "YANGKEY_SCHEMA_REGISTRY_MAX_RETRIES": "5",
    }
    settings = RegistrySettings.from_options("http://h", {"max.retries": "0"}, environ)
    assert dict(settings.config) == {"basic.auth.user.info": "bob:pw", "max.retries": "0"}
    hash(settings)  # the key of the per-process client


def test_credentials_reach_the_registry_and_never_a_message(served: Served) -> None:
    url = with_credentials(served.url)
    ids = SchemaIds(url)
    closed = json.dumps({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    ids.id_for("t", closed)
    assert {auth for _, _, auth in served.requests} == {"Basic YWxpY2U6czNjcmV0"}  # alice:s3cret

    with pytest.raises(RegistryError) as caught:  # incompatible: the registry refuses
        SchemaIds(url).id_for("t", json.dumps({"type": "object", "additionalProperties": False}))
    message = caught.value.message()
    assert message.startswith(f"{served.url.replace('http://', 'http://alice:***@')}: t-value")
    assert "s3cret" not in message

    nowhere = with_credentials(free_url())
    config = {"max.retries": "0"}
    with pytest.raises(RegistryError) as caught:
        SchemaIds(nowhere, config).id_for("t", closed)
    assert "cannot reach the registry" in caught.value.message()
    assert "s3cret" not in caught.value.message()

    with pytest.raises(ConfigError) as bad:
        SchemaIds(served.url, {"basic.auth.user.info": "carol:hunter2", "no.such.setting": "1"})
    assert "no.such.setting" in bad.value.message() and "hunter2" not in bad.value.message()


def test_a_learned_topic_is_registered_once_per_process(served: Served, tmp_path: Path) -> None:
    catalog = learning_catalog(tmp_path)
    settings = RegistrySettings(served.url)
    known = register_topic_schemas(process_ids(settings), catalog)
    assert sorted(known) == sorted(spec.name for spec in catalog.topics)
    entry = catalog.learn(9001, {"xpath-filter": LEARNED_XPATH}, "t:1")
    (topic,) = entry.topics
    assert topic not in known

    before = len(served.requests)
    schema_id = learned_topic_id(settings, catalog, topic)
    assert schema_id is not None and schema_id not in known.values()
    assert len(served.requests) > before
    asked = len(served.requests)
    assert learned_topic_id(settings, catalog, topic) == schema_id
    assert learned_topic_id(settings, catalog, next(iter(known))) == known[next(iter(known))]
    assert len(served.requests) == asked, "the process asks the registry once per topic"
    assert learned_topic_id(settings, catalog, catalog.dead_letter_topic) is None

    registered = json.loads(process_ids(settings).client.get_schema(schema_id).schema_str)
    assert registered["description"].endswith("oper-status")
    assert registered["title"] == topic


@pytest.mark.needs("spark")
def test_the_sink_adds_the_topic_schema_id_and_none_to_dead_letters(
    served: Served, tmp_path: Path
) -> None:
    from yangkey.spark.delivery.sink import KafkaSink  # noqa: PLC0415
    from yangkey.spark.delivery.spec import SinkSpec  # noqa: PLC0415

    catalog = learning_catalog(tmp_path)
    settings = RegistrySettings(served.url)
    known = register_topic_schemas(process_ids(settings), catalog)
    learned = catalog.learn(9002, {"xpath-filter": LEARNED_XPATH}, "t:1").topics[0]
    spec = SinkSpec(
        producer_config={"bootstrap.servers": "127.0.0.1:1"},
        dead_letter_topic=catalog.dead_letter_topic,
        run_id="r",
        exactly_once=False,
        schema_registry=settings,
        schema_ids=known,
    )
    sink = KafkaSink(spec, 0, 0, catalog=catalog)
    headers: dict[str, Any] = {}
    try:
        for topic in (*known, learned, catalog.dead_letter_topic):
            headers[topic] = sink._headers_for(topic)
    finally:
        sink.close()
    for topic, schema_id in known.items():
        assert headers[topic] == ((HEADER_SCHEMA_ID, str(schema_id).encode()),)
    learned_id = process_ids(settings).known(learned)
    assert headers[learned] == ((HEADER_SCHEMA_ID, str(learned_id).encode()),)
    assert headers[catalog.dead_letter_topic] == ()

    plain = KafkaSink(SinkSpec({"bootstrap.servers": "127.0.0.1:1"}, "dlq", "r"), 0, 0)
    try:
        assert plain._headers_for(next(iter(known))) == ()
    finally:
        plain.close()


@pytest.mark.needs("spark")
def test_produce_reports_a_registry_that_refuses_before_sending(
    served: Served, tmp_path: Path
) -> None:
    catalog = load_catalog(EXAMPLE)
    topic = catalog.topics[0].name
    SchemaIds(served.url).id_for(topic, json.dumps({"type": "string"}))  # another shape
    data = tmp_path / "in.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    result = run(
        *("produce", "--subscriptions", str(EXAMPLE), "--input", str(data)),
        *("--bootstrap", "127.0.0.1:1", "--schema-registry", served.url),
    )
    assert_one_error(result, served.url, f"{topic}-value", "incompatible")


@pytest.mark.needs("spark")
def test_produce_reports_a_registry_that_is_down_before_sending(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    nowhere = free_url()
    common = ["produce", "--subscriptions", str(EXAMPLE), "--input", str(data)]
    # No broker at 127.0.0.1:1 either: the registry is asked first, before Kafka or Spark.
    line = assert_one_error(
        run(
            *common,
            "--bootstrap",
            "127.0.0.1:1",
            "--schema-registry",
            with_credentials(nowhere),
            "--schema-registry-config",
            "max.retries=0",
        ),
        nowhere.replace("http://", "http://alice:***@"),
        "cannot reach the registry",
    )
    assert "s3cret" not in line
    mixed = run(
        *common, "--bootstrap", "127.0.0.1:1", "--schema-registry", nowhere, "--single-topic", "a"
    )
    assert mixed.exit_code == 2  # a usage error: the combination makes no run
    assert "error: --single-topic mixes every subscription branch" in mixed.stderr
    assert_one_error(
        run(
            *common,
            "--bootstrap",
            "127.0.0.1:1",
            "--schema-registry",
            nowhere,
            "--schema-registry-config",
            "nonsense.key=1",
        ),
        "nonsense.key",
    )


def test_the_demo_check_notices_missing_or_wrong_schema_ids() -> None:
    from yangkey.demo.pipeline import DemoResult, check  # noqa: PLC0415
    from yangkey.demo.sample import Expected  # noqa: PLC0415

    def problems(stored: list[dict[str, Any]]) -> list[str]:
        result = DemoResult(0, {}, 0, {}, [], [], [], Expected(current={}, bad=0))
        result.subjects = {"a-value": 1, "b-value": 2}
        result.stored_ids = stored
        return check(result)[0]

    assert problems([{"topic": "a", "schema_id": 1, "messages": 3}]) == []
    assert problems([{"topic": "a", "schema_id": 2, "messages": 3}]) == [
        "3 message(s) on a carry schema id 2; the registry has 1 for a-value"
    ]
    assert problems([{"topic": "c", "schema_id": None, "messages": 1}]) == [
        "1 message(s) on c carry schema id None; the registry has None for c-value"
    ]
