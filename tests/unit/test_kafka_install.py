"""Issue 16.2: the broker's jars without Maven — a Kafka distribution, or pinned downloads
checked against their SHA-256 — and one error line when Java or the jars cannot be had."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from yangkey.errors import BrokerError
from yangkey.kafka.install import (
    KAFKA_VERSION,
    REPOSITORY_ENV,
    distribution,
    fetch,
    install_kafka,
    installed_jars,
    ivy_jar,
    pinned,
)


def _repository(tmp_path: Path, files: dict[str, bytes]) -> str:
    for path, content in files.items():
        target = tmp_path / "repo" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return (tmp_path / "repo").as_uri()


def test_the_pinned_runtime_is_complete() -> None:
    pins = pinned(KAFKA_VERSION)
    names = {path.rsplit("/", 1)[-1] for path, _ in pins}
    assert f"kafka_2.13-{KAFKA_VERSION}.jar" in names
    assert {"log4j-core-2.24.3.jar", "log4j-slf4j-impl-2.24.3.jar", "slf4j-api-1.7.36.jar"} <= names
    assert len(names) == len(pins) > 40
    assert all(len(digest) == 64 and int(digest, 16) >= 0 for _, digest in pins)


def test_fetch_keeps_jars_whose_sha256_matches(tmp_path: Path) -> None:
    repo = _repository(tmp_path, {"g/a/1/a-1.jar": b"one", "g/b/2/b-2.jar": b"two"})
    out = tmp_path / "out"
    out.mkdir()
    pins = [
        ("g/a/1/a-1.jar", hashlib.sha256(b"one").hexdigest()),
        ("g/b/2/b-2.jar", hashlib.sha256(b"two").hexdigest()),
    ]
    fetch(pins, out, repository=repo)
    assert (out / "a-1.jar").read_bytes() == b"one"
    assert (out / "b-2.jar").read_bytes() == b"two"


def test_fetch_refuses_a_jar_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    repo = _repository(tmp_path, {"g/a/1/a-1.jar": b"tampered"})
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(BrokerError, match=r"a-1\.jar: SHA-256 [0-9a-f]{64} is not the pinned"):
        fetch([("g/a/1/a-1.jar", hashlib.sha256(b"one").hexdigest())], out, repository=repo)


def test_an_unreachable_repository_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REPOSITORY_ENV, (tmp_path / "empty").as_uri())
    with pytest.raises(BrokerError) as caught:
        install_kafka(cache_dir=tmp_path / "cache")
    message = caught.value.message()
    assert message.startswith("kafka install: cannot download ")
    assert "set KAFKA_HOME" in message
    assert "\n" not in message
    assert installed_jars(cache_dir=tmp_path / "cache") is None


def test_an_unpinned_version_points_to_a_distribution() -> None:
    with pytest.raises(BrokerError, match=r"pins the jars of Kafka .* KAFKA_HOME"):
        pinned("3.0.0")


def test_install_from_a_mirror_is_complete_and_idempotent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = installed_jars()
    if cached is None:
        pytest.skip("no Kafka jars in the cache to serve as a mirror (make install fills it)")
    for path, _ in pinned(KAFKA_VERSION):
        target = tmp_path / "mirror" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(cached / path.rsplit("/", 1)[-1])
    monkeypatch.setenv(REPOSITORY_ENV, (tmp_path / "mirror").as_uri())
    libs = install_kafka(cache_dir=tmp_path / "cache")
    assert sorted(p.name for p in libs.iterdir()) == sorted(p.name for p in cached.iterdir())
    monkeypatch.setenv(REPOSITORY_ENV, (tmp_path / "nowhere").as_uri())
    assert install_kafka(cache_dir=tmp_path / "cache") == libs  # complete: no download


def test_a_kafka_distribution_is_used_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "kafka_2.13-4.1.0.jar").write_bytes(b"")
    (tmp_path / "libs" / "kafka-clients-4.1.0.jar").write_bytes(b"")
    assert distribution(tmp_path) == (tmp_path / "libs", "4.1.0")
    with pytest.raises(BrokerError, match="not an unpacked Apache Kafka distribution"):
        distribution(tmp_path / "libs")


@pytest.mark.needs("kafka")
def test_kafka_start_without_java_is_one_error_line(tmp_path: Path) -> None:
    home = tmp_path / "kafka"
    (home / "libs").mkdir(parents=True)
    (home / "libs" / "kafka_2.13-4.3.1.jar").write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k not in {"JAVA_HOME", "KAFKA_HOME"}}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv only: no java on it
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "yangkey.cli",
            "kafka",
            "start",
            "--kafka-home",
            str(home),
            "--state-dir",
            str(tmp_path / "state"),
        ],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: kafka broker: java not found: install a JDK 17+")


def test_without_ivy_or_a_mirror_one_line_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    monkeypatch.setattr("yangkey.kafka.install.ivy_jar", lambda: None)
    with pytest.raises(BrokerError) as caught:
        install_kafka(cache_dir=tmp_path)
    message = caught.value.message()
    assert "\n" not in message
    assert "pip install 'yangkey[spark]'" in message and REPOSITORY_ENV in message
    assert not (tmp_path / "kafka-4.3.1" / "libs").exists()


def test_ivy_ships_with_pyspark() -> None:
    pytest.importorskip("pyspark")
    jar = ivy_jar()
    assert jar is not None and jar.is_file()
