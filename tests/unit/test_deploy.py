"""The production stack cannot run here (no Docker engine); keep it consistent with the code."""

from __future__ import annotations

from pathlib import Path

import yaml
from lxml import etree

from yangkey.clickhouse.ddl import DdlOptions

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, object]:
    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(document, dict)
    return document


def test_every_image_is_pinned() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    for name, service in services.items():
        image = service["image"]
        tag = image.rpartition(":")[2]
        assert ":" in image and tag not in ("", "latest"), f"{name}: {image} is not pinned"


def test_every_service_has_a_healthcheck_and_binds_loopback_only() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    for name, service in services.items():
        assert "healthcheck" in service, name
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"


def test_named_collection_matches_the_generated_ddl() -> None:
    config = etree.parse(str(ROOT / "deploy/clickhouse/config.d/yangkey.xml"))
    collections = config.find("named_collections")
    assert collections is not None
    names = [child.tag for child in collections if isinstance(child.tag, str)]
    assert DdlOptions().kafka_collection in names
    broker_list = collections.find(f"{DdlOptions().kafka_collection}/kafka_broker_list")
    assert broker_list is not None and broker_list.get("from_env") == "KAFKA_BROKERS"


def test_no_secret_in_the_compose_file() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert "CLICKHOUSE_PASSWORD: ${CLICKHOUSE_PASSWORD:?" in text
    assert "password:" not in text.lower().replace("clickhouse_password", "")
