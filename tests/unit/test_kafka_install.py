"""Issue 16.2: the broker's jars without Maven — a Kafka distribution, or pinned downloads
checked against their SHA-256 — and one error line when Java or the jars cannot be had."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from yangkey.errors import BrokerError
from yangkey.kafka.install import (
    KAFKA_VERSION,
    Pin,
    distribution,
    fetch,
    install_kafka,
    installed_jars,
    pinned,
)
from yangkey.kafka.repository import REPOSITORY_ENV, find_repository


def _repository(tmp_path: Path, files: dict[str, bytes]) -> str:
    for path, content in files.items():
        target = tmp_path / "repo" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return (tmp_path / "repo").as_uri()


def test_the_pinned_runtime_is_complete() -> None:
    pins = pinned(KAFKA_VERSION)
    names = {pin.name for pin in pins}
    assert f"kafka_2.13-{KAFKA_VERSION}.jar" in names
    assert {"log4j-core-2.24.3.jar", "log4j-slf4j-impl-2.24.3.jar", "slf4j-api-1.7.36.jar"} <= names
    assert len(names) == len(pins) > 40
    assert all(len(pin.sha256) == 64 and int(pin.sha256, 16) >= 0 for pin in pins)
    assert 40e6 < sum(pin.size for pin in pins) < 60e6  # what the progress bar counts


def _pin(path: str, content: bytes) -> Pin:
    return Pin(path, hashlib.sha256(content).hexdigest(), len(content))


def test_fetch_keeps_jars_whose_sha256_matches(tmp_path: Path) -> None:
    repo = _repository(tmp_path, {"g/a/1/a-1.jar": b"one", "g/b/2/b-2.jar": b"two"})
    out = tmp_path / "out"
    out.mkdir()
    pins = [_pin("g/a/1/a-1.jar", b"one"), _pin("g/b/2/b-2.jar", b"two")]
    seen: list[tuple[str, int]] = []

    class Recorder:
        def begin(self, files: int, total_bytes: int, origin: str) -> None:
            raise AssertionError("install_kafka begins, not fetch")

        def received(self, nbytes: int) -> None:
            seen.append(("bytes", nbytes))

        def file_done(self) -> None:
            seen.append(("file", 1))

    fetch(pins, out, repository=repo, progress=Recorder())
    assert (out / "a-1.jar").read_bytes() == b"one"
    assert (out / "b-2.jar").read_bytes() == b"two"
    assert sum(n for what, n in seen if what == "bytes") == 6
    assert sum(n for what, n in seen if what == "file") == 2


def test_fetch_refuses_a_jar_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    repo = _repository(tmp_path, {"g/a/1/a-1.jar": b"tampered"})
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(BrokerError, match=r"a-1\.jar: SHA-256 [0-9a-f]{64} is not the pinned"):
        fetch([_pin("g/a/1/a-1.jar", b"one")], out, repository=repo)


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


def _mirror_of_the_cache(tmp_path: Path) -> tuple[Path, Path]:
    """(the cached jars, a Maven repository of them under ``tmp_path``); skips without them."""
    cached = installed_jars()
    if cached is None:
        pytest.skip("no Kafka jars in the cache to serve as a mirror (make install fills it)")
    mirror = tmp_path / "mirror"
    for pin in pinned(KAFKA_VERSION):
        target = mirror / pin.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(cached / pin.name)
    return cached, mirror


def test_install_from_a_mirror_is_complete_and_idempotent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached, mirror = _mirror_of_the_cache(tmp_path)
    monkeypatch.setenv(REPOSITORY_ENV, mirror.as_uri())
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


def _no_maven_anywhere(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No $YANGKEY_MAVEN_REPOSITORY, no Maven settings, no mvn, no pyspark."""
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    for variable in ("M2_HOME", "MAVEN_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(home / "bin"))
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        "importlib.util.find_spec",
        lambda name, *a: None if name == "pyspark" else real_find_spec(name, *a),
    )


def test_without_any_repository_one_line_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_maven_anywhere(monkeypatch, tmp_path)
    assert find_repository() is None
    with pytest.raises(BrokerError) as caught:
        install_kafka(cache_dir=tmp_path / "cache")
    message = caught.value.message()
    assert "\n" not in message
    assert REPOSITORY_ENV in message and "apt-get install maven" in message
    assert "KAFKA_HOME" in message
    assert not (tmp_path / "cache" / "kafka-4.3.1" / "libs").exists()


def test_the_repository_of_maven_settings_wins_over_maven_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_maven_anywhere(monkeypatch, tmp_path)
    # An installed Maven: bin/mvn and the super POM in lib/maven-model-builder-*.jar
    maven = tmp_path / "maven"
    (maven / "bin").mkdir(parents=True)
    (maven / "lib").mkdir()
    (maven / "bin" / "mvn").write_text("#!/bin/sh\n")
    (maven / "bin" / "mvn").chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mvn").symlink_to(maven / "bin" / "mvn")
    super_pom = (
        "<project><repositories><repository>"  # Maven 3's super POM has no namespace
        "<id>central</id><url>https://central.invalid/maven2</url></repository>"
        "</repositories></project>"
    )
    with zipfile.ZipFile(maven / "lib" / "maven-model-builder-3.9.jar", "w") as jar:
        jar.writestr("org/apache/maven/model/pom-4.0.0.xml", super_pom)
    found = find_repository()
    assert found is not None and found.url == "https://central.invalid/maven2"
    assert "Maven" in found.origin
    # a company mirror in ~/.m2/settings.xml comes first
    (tmp_path / ".m2").mkdir()
    (tmp_path / ".m2" / "settings.xml").write_text(
        '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"><mirrors>'
        "<mirror><id>other</id><mirrorOf>snapshots</mirrorOf><url>https://no.invalid</url>"
        "</mirror><mirror><id>corp</id><mirrorOf>central</mirrorOf>"
        "<url>https://nexus.invalid/repository/maven-central</url></mirror>"
        "</mirrors></settings>"
    )
    found = find_repository()
    assert found is not None and found.url == "https://nexus.invalid/repository/maven-central"
    # and the variable before everything
    monkeypatch.setenv(REPOSITORY_ENV, "file:///srv/maven")
    found = find_repository()
    assert found is not None and found.url == "file:///srv/maven"


def test_kafka_extra_alone_installs_the_jars_without_pyspark_or_a_jvm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The [kafka] extra's user: no pyspark, no java on the PATH; the jars come from the
    repository Maven's settings name (here a mirror built from the cache)."""
    cached, mirror = _mirror_of_the_cache(tmp_path)
    _no_maven_anywhere(monkeypatch, tmp_path)
    (tmp_path / ".m2").mkdir()
    (tmp_path / ".m2" / "settings.xml").write_text(
        "<settings><mirrors><mirror><mirrorOf>*</mirrorOf>"
        f"<url>{mirror.as_uri()}</url></mirror></mirrors></settings>"
    )
    started: list[tuple[int, int, str]] = []
    done: list[int] = []

    class Recorder:
        def begin(self, files: int, total_bytes: int, origin: str) -> None:
            started.append((files, total_bytes, origin))

        def received(self, nbytes: int) -> None:
            done.append(nbytes)

        def file_done(self) -> None:
            pass

    libs = install_kafka(cache_dir=tmp_path / "cache", progress=Recorder())
    assert sorted(p.name for p in libs.iterdir()) == sorted(p.name for p in cached.iterdir())
    [(files, total, origin)] = started
    assert files == len(pinned(KAFKA_VERSION)) and total == sum(done)
    assert "settings.xml" in origin


def test_maven_central_is_found_where_pyspark_is() -> None:
    """The spark extra's Apache Ivy names Maven Central (read from its jar, no JVM)."""
    pytest.importorskip("pyspark")
    from yangkey.kafka.repository import _ivy_default  # noqa: PLC0415

    found = _ivy_default()
    assert found is not None
    assert found.url.startswith("https://") and found.url.endswith("/maven2/")
