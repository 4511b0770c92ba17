"""Where the broker's jars come from: a Kafka distribution the user has, else the cache.

1. ``--kafka-home`` / ``$KAFKA_HOME``: an unpacked Apache Kafka distribution; its ``libs/`` is
   used as it is (its version is read from the ``kafka_2.13-<version>.jar`` there).
2. Otherwise ``$YANGKEY_CACHE/kafka-<version>/libs`` (default ``~/.cache/yangkey``), filled on
   first use with a pinned list of jars downloaded straight from Maven Central (or the mirror
   the machine's Maven settings or ``$YANGKEY_MAVEN_REPOSITORY`` name,
   :mod:`yangkey.kafka.repository`), eight at a time, each checked against the SHA-256 in
   ``jars-<version>.sha256`` beside this module. No Maven, Ivy or JVM runs. A marker file makes
   it a no-op once complete; a file lock serialises concurrent installs (parallel test runs);
   jars land in a temp dir renamed into place, so an interrupted install never looks complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.resources
import json
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from yangkey.dirs import cache_root
from yangkey.errors import BrokerError
from yangkey.kafka.repository import WHERE_TO_GET_ONE, Repository, find_repository

KAFKA_VERSION = "4.3.1"
"""Newest Kafka 4.x whose whole runtime resolves from Maven Central (4.x brokers need Java 17+).

4.4.0 is listed there, but its ``kafka-tools-api`` jar could not be fetched when this was pinned.
"""
SCALA_VERSION = "2.13"
LOG4J_VERSION = "2.24.3"
"""log4j2 is Kafka 4's logging backend; its jars are not dependencies of ``kafka_2.13``."""
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


@dataclass(frozen=True)
class Pin:
    """One jar of the broker's runtime: its path in a Maven repository, SHA-256 and size."""

    path: str
    sha256: str
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def pinned(version: str) -> list[Pin]:
    """Every jar the broker of ``version`` runs on (``jars-<version>.sha256``)."""
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
            digest, size, path = line.split()
            pins.append(Pin(path, digest, int(size)))
    return pins


class DownloadProgress(Protocol):
    """What a download reports as it goes (:func:`terminal_progress` draws it)."""

    def begin(self, files: int, total_bytes: int, origin: str) -> None: ...

    def received(self, nbytes: int) -> None: ...

    def file_done(self) -> None: ...


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
    pins: list[Pin],
    out: Path,
    *,
    repository: str,
    timeout: float = 120.0,
    progress: DownloadProgress | None = None,
) -> None:
    """Download every pinned jar into ``out``, eight at a time, and check its SHA-256; the
    first failure raises."""

    def one(pin: Pin) -> None:
        url = f"{repository.rstrip('/')}/{pin.path}"
        digest = hashlib.sha256()
        try:
            with (
                urllib.request.urlopen(url, timeout=timeout) as response,
                (out / pin.name).open("wb") as f,
            ):
                while chunk := response.read(1 << 16):
                    digest.update(chunk)
                    f.write(chunk)
                    if progress is not None:
                        progress.received(len(chunk))
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise BrokerError(f"cannot download {url}: {reason}", source="kafka install") from exc
        if digest.hexdigest() != pin.sha256:
            raise BrokerError(
                f"{url}: SHA-256 {digest.hexdigest()} is not the pinned {pin.sha256}",
                source="kafka install",
            )
        if progress is not None:
            progress.file_done()

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(one, pin) for pin in pins]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()  # an error or Ctrl-C: no new downloads start
            raise


def install_kafka(
    version: str = KAFKA_VERSION,
    *,
    cache_dir: Path | None = None,
    progress: DownloadProgress | None = None,
    repository: Repository | None = None,
) -> Path:
    """Download Kafka's runtime jars into the cache and return the ``libs`` directory.

    Idempotent: returns at once when the marker file says a previous run completed.
    ``repository`` defaults to :func:`yangkey.kafka.repository.find_repository`.
    """
    ready = installed_jars(version, cache_dir)
    if ready is not None:
        return ready
    pins = pinned(version)
    home = kafka_home(version, cache_dir)
    with _locked(home / ".install.lock"):
        ready = installed_jars(version, cache_dir)  # another process may have finished
        if ready is not None:
            return ready
        advice = _WHAT_TO_INSTALL.format(version=version, scala=SCALA_VERSION)
        repository = repository or find_repository()
        if repository is None:
            raise BrokerError(
                f"no Maven repository to download Kafka's jars from: {WHERE_TO_GET_ONE}; or"
                f" {advice}",
                source="kafka install",
            )
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=".install-", dir=home))
        try:
            out = work / "libs"
            out.mkdir()
            if progress is not None:
                progress.begin(len(pins), sum(pin.size for pin in pins), repository.describe())
            try:
                fetch(pins, out, repository=repository.url, progress=progress)
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
            marker = {
                "version": version,
                "jars": jars,
                "seconds": seconds,
                "at": time.time(),
                "repository": repository.url,
            }
            (home / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
            return libs
        finally:
            shutil.rmtree(work, ignore_errors=True)


def resolve_jars(
    version: str = KAFKA_VERSION,
    *,
    home: Path | str | None = None,
    cache_dir: Path | None = None,
    progress: DownloadProgress | None = None,
) -> tuple[Path, str]:
    """``(libs, version)`` to run: ``home`` or ``$KAFKA_HOME`` when set, else the cache
    (installed on first use)."""
    home = home or os.environ.get("KAFKA_HOME") or None
    if home is not None:
        return distribution(home)
    return install_kafka(version, cache_dir=cache_dir, progress=progress), version


@contextlib.contextmanager
def terminal_progress(what: str) -> Iterator[DownloadProgress]:
    """A progress bar on stderr (bytes, files, speed, time left) for a download, then one line
    saying what arrived; nothing is drawn when nothing is downloaded."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(stderr=True, highlight=False, soft_wrap=True)

    class Bar:
        def __init__(self) -> None:
            self.bar: Progress | None = None
            self.task: TaskID | None = None
            self.files = 0
            self.total = 0
            self.started = 0.0

        def begin(self, files: int, total_bytes: int, origin: str) -> None:
            size = f"{total_bytes / 1e6:.1f} MB"
            console.print(f"downloading {what}: {files} jars, {size}, from {origin}")
            self.total, self.started = files, time.monotonic()
            if not console.is_terminal:
                return  # a log file gets the two lines, not a redrawn bar
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TextColumn("{task.fields[files]}"),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(what, total=total_bytes, files=f"0/{files} jars")

        def received(self, nbytes: int) -> None:
            if self.bar is not None and self.task is not None:
                self.bar.advance(self.task, nbytes)

        def file_done(self) -> None:
            self.files += 1
            if self.bar is not None and self.task is not None:
                self.bar.update(self.task, files=f"{self.files}/{self.total} jars")

        def close(self) -> None:
            if self.bar is not None:
                self.bar.stop()

    bar = Bar()
    try:
        yield bar
    finally:
        bar.close()
    if bar.total and bar.files == bar.total:
        console.print(f"downloaded {bar.files} jars in {time.monotonic() - bar.started:.1f}s")
