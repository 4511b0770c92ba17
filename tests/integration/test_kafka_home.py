"""Issue 16.2: a broker started from a Kafka distribution the user names (KAFKA_HOME)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yangkey.kafka.broker import EmbeddedKafka
from yangkey.kafka.install import install_kafka
from yangkey.kafka.process import broker_answers


def test_kafka_home_runs_that_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A distribution's layout (libs/*.jar) over the same jars the pinned download brings.
    home = tmp_path / "kafka_2.13-4.3.1"
    home.mkdir()
    (home / "libs").symlink_to(install_kafka())
    monkeypatch.setenv("KAFKA_HOME", str(home))
    monkeypatch.setenv("YANGKEY_CACHE", str(tmp_path / "no-cache"))  # must not be needed
    broker = EmbeddedKafka(version="0.0.0", die_with_parent=True)
    with broker:
        assert broker.version == "4.3.1"  # read from the distribution, not the argument
        assert broker_answers(broker.bootstrap)
        command = Path(f"/proc/{broker.pid}/cmdline").read_bytes().split(b"\0")
        assert str(home / "libs" / "*").encode() in command
    assert not (tmp_path / "no-cache").exists()
