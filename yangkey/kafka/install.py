"""Where the broker's jars come from: a Kafka distribution the user has, else the cache.

1. ``--kafka-home`` / ``$KAFKA_HOME``: an unpacked Apache Kafka distribution; its ``libs/`` is
   used as it is (its version is read from the ``kafka_2.13-<version>.jar`` there).
2. Otherwise ``$YANGKEY_CACHE/kafka-<version>/libs`` (default ``~/.cache/yangkey``), filled on
   first use with a pinned list of jars, each checked against the SHA-256 in
   ``jars-<version>.sha256`` beside this module. No Maven needed: Apache Ivy, which ships inside
   pyspark (the ``spark`` extra), fetches them from Maven Central with its default settings;
   ``$YANGKEY_MAVEN_REPOSITORY`` names a mirror of the same layout to download from instead. A
   marker file makes it a no-op once complete; a file lock serialises concurrent installs
   (parallel test runs); jars land in a temp dir renamed into place, so an interrupted install
   never looks complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.resources
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from yangkey.dirs import cache_root
from yangkey.errors import BrokerError
from yangkey.jvm import find_java, tail

KAFKA_VERSION = "4.3.1"
"""Newest Kafka 4.x whose whole runtime resolves from Maven Central (4.x brokers need Java 17+).

4.4.0 is listed there, but its ``kafka-tools-api`` jar could not be fetched when this was pinned.
"""
SCALA_VERSION = "2.13"
LOG4J_VERSION = "2.24.3"
"""log4j2 is Kafka 4's logging backend; its jars are not dependencies of ``kafka_2.13``."""
REPOSITORY_ENV = "YANGKEY_MAVEN_REPOSITORY"
"""A Maven Central mirror (same layout) to download from instead of Ivy's default (Central)."""
_MARKER = "install.json"
_KAFKA_JAR = re.compile(rf"kafka_{re.escape(SCALA_VERSION)}-(\d[\w.-]*)\.jar")
_WHAT_TO_INSTALL = (
    "download Apache Kafka {version} (Scala {scala}) from kafka.apache.org, unpack it and"
    " pass --kafka-home DIR or set KAFKA_HOME"
)


def kafka_home(version: str = KAFKA_VERSION, cache_dir: Path | None = None) -> Path:
    """``<cache>/kafka-<version>``: one directory per version so upgrades never mix jars."""
    return (cache_dir or cache_root()) / f"kafka-{version}"


def installed_jars(version: str = KAFKA_VERSION, cache_dir: Path | None = None) -> Path | None:
    """The ``libs`` directory if a previous install completed and no jar went missing."""
    home = kafka_home(version, cache_dir)
    try:
        recorded = json.loads((home / _MARKER).read_text(encoding="utf-8"))
        jars = [str(name) for name in recorded["jars"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    libs = home / "libs"
    if jars and all((libs / name).is_file() for name in jars):
        return libs
    return None


def distribution(home: Path | str) -> tuple[Path, str]:
    """``(libs, version)`` of an unpacked Apache Kafka distribution, or one clear error."""
    libs = Path(home).expanduser() / "libs"
    versions = sorted(
        match.group(1)
        for path in (libs.glob(f"kafka_{SCALA_VERSION}-*.jar") if libs.is_dir() else ())
        if (match := _KAFKA_JAR.fullmatch(path.name))
    )
    if not versions:
        raise BrokerError(
            f"no libs/kafka_{SCALA_VERSION}-<version>.jar: not an unpacked Apache Kafka"
            " distribution (Kafka 4.x)",
            source=str(home),
        )
    return libs, versions[-1]


def pinned(version: str) -> list[tuple[str, str]]:
    """``(path in the repository, sha256)`` of every jar the broker of ``version`` runs on."""
    resource = importlib.resources.files("yangkey.kafka").joinpath(f"jars-{version}.sha256")
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BrokerError(
            f"yangkey pins the jars of Kafka {KAFKA_VERSION} only; for {version}, "
            + _WHAT_TO_INSTALL.format(version=version, scala=SCALA_VERSION),
            source="kafka install",
        ) from None
    pins = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            digest, _, path = line.partition("  ")
            pins.append((path.strip(), digest.strip()))
    return pins


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock so two test sessions never install into the same dir."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fetch(
    pins: list[tuple[str, str]], out: Path, *, repository: str, timeout: float = 120.0
) -> None:
    """Download every pinned jar into ``out`` and check its SHA-256; the first failure raises."""

    def one(pin: tuple[str, str]) -> None:
        path, expected = pin
        url = f"{repository.rstrip('/')}/{path}"
        target = out / path.rsplit("/", 1)[-1]
        digest = hashlib.sha256()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, target.open("wb") as f:
                while chunk := response.read(1 << 16):
                    digest.update(chunk)
                    f.write(chunk)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise BrokerError(f"cannot download {url}: {reason}", source="kafka install") from exc
        if digest.hexdigest() != expected:
            raise BrokerError(
                f"{url}: SHA-256 {digest.hexdigest()} is not the pinned {expected}",
                source="kafka install",
            )

    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(one, pin) for pin in pins]:
            future.result()


def ivy_jar() -> Path | None:
    """The Apache Ivy jar pyspark ships (``pyspark/jars/ivy-*.jar``), if pyspark is installed."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        return None
    jars = sorted((Path(spec.origin).parent / "jars").glob("ivy-*.jar"))
    return jars[-1] if jars else None


def fetch_with_ivy(pins: list[tuple[str, str]], out: Path, *, ivy: Path, work: Path) -> None:
    """Every pinned jar into ``out`` through Ivy (non-transitive: the pins are the closure),
    then the same SHA-256 check as :func:`fetch`."""
    dependencies = []
    for path, _digest in pins:
        *group, module, revision, _file = path.split("/")
        dependencies.append(
            f'<dependency org="{".".join(group)}" name="{module}" rev="{revision}"'
            ' transitive="false"/>'
        )
    ivy_xml = work / "ivy.xml"
    ivy_xml.write_text(
        '<ivy-module version="2.0"><info organisation="yangkey" module="kafka-runtime"/>'
        f"<dependencies>{''.join(dependencies)}</dependencies></ivy-module>",
        encoding="utf-8",
    )
    command = [
        find_java(),
        "-cp",
        str(ivy),
        "org.apache.ivy.Main",
        *("-ivy", str(ivy_xml), "-cache", str(work / "ivy-cache"), "-types", "jar", "bundle"),
        *("-retrieve", f"{out}/[artifact]-[revision](-[classifier]).[ext]"),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrokerError(f"cannot run Apache Ivy: {exc}", source="kafka install") from None
    if done.returncode != 0:
        raise BrokerError(
            "Apache Ivy could not fetch the jars: "
            + " | ".join(tail(done.stdout + done.stderr, 3).splitlines()),
            source="kafka install",
        )
    wanted = {path.rsplit("/", 1)[-1]: digest for path, digest in pins}
    for jar in out.iterdir():
        if jar.name not in wanted:
            jar.unlink()  # anything Ivy retrieved beyond the pins
    for name, expected in wanted.items():
        jar = out / name
        if not jar.is_file():
            raise BrokerError(f"Apache Ivy did not retrieve {name}", source="kafka install")
        actual = hashlib.sha256(jar.read_bytes()).hexdigest()
        if actual != expected:
            raise BrokerError(
                f"{name}: SHA-256 {actual} is not the pinned {expected}", source="kafka install"
            )


def install_kafka(
    version: str = KAFKA_VERSION,
    *,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Download Kafka's runtime jars into the cache and return the ``libs`` directory.

    Idempotent: returns at once when the marker file says a previous run completed.
    """
    ready = installed_jars(version, cache_dir)
    if ready is not None:
        return ready
    pins = pinned(version)
    say = progress or (lambda _message: None)
    home = kafka_home(version, cache_dir)
    with _locked(home / ".install.lock"):
        ready = installed_jars(version, cache_dir)  # another process may have finished
        if ready is not None:
            return ready
        started = time.monotonic()
        repository = os.environ.get(REPOSITORY_ENV)
        ivy = None if repository else ivy_jar()
        advice = _WHAT_TO_INSTALL.format(version=version, scala=SCALA_VERSION)
        if not repository and ivy is None:
            raise BrokerError(
                "cannot fetch Kafka's jars without Apache Ivy: pip install 'yangkey[spark]'"
                f" (pyspark ships it), set {REPOSITORY_ENV} to a Maven repository URL, or"
                f" {advice}",
                source="kafka install",
            )
        work = Path(tempfile.mkdtemp(prefix=".install-", dir=home))
        try:
            out = work / "libs"
            out.mkdir()
            origin = repository or "Maven Central (Apache Ivy)"
            say(f"downloading {len(pins)} jars of Kafka {version} from {origin}")
            try:
                if repository:
                    fetch(pins, out, repository=repository)
                else:
                    assert ivy is not None
                    fetch_with_ivy(pins, out, ivy=ivy, work=work)
            except BrokerError as exc:
                exc.reason += f"; or {advice}"
                exc.args = (exc.message(),)
                raise
            libs = home / "libs"
            if libs.exists():
                shutil.rmtree(libs)  # incomplete leftovers: the marker was missing or stale
            out.rename(libs)
            jars = sorted(path.name for path in libs.glob("*.jar"))
            seconds = round(time.monotonic() - started, 1)
            marker = {"version": version, "jars": jars, "seconds": seconds, "at": time.time()}
            (home / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
            say(f"{len(jars)} jars in {libs} ({seconds}s)")
            return libs
        finally:
            shutil.rmtree(work, ignore_errors=True)


def resolve_jars(
    version: str = KAFKA_VERSION,
    *,
    home: Path | str | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Path, str]:
    """``(libs, version)`` to run: ``home`` or ``$KAFKA_HOME`` when set, else the cache
    (installed on first use)."""
    home = home or os.environ.get("KAFKA_HOME") or None
    if home is not None:
        return distribution(home)
    return install_kafka(version, cache_dir=cache_dir, progress=progress), version
