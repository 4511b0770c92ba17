"""A class-data sharing archive for the local Spark JVM: Spark's classes mapped, not loaded.

A ``local`` master's JVM spends most of its start-up loading and verifying Spark's classes:
about 4 s of a 300k-record ``yangkey produce`` on two cores. HotSpot's dynamic class-data
sharing (JEP 350, JDK 13+; Spark 4 needs 17) records the classes a JVM loaded into an archive
at its exit (``-XX:ArchiveClassesAtExit``) and maps them at the next start
(``-XX:SharedArchiveFile``): the session starts in about half the time
(docs/design.md#spark-task-throughput, "The local JVM maps Spark's classes").

The archive lives in the cache (``$YANGKEY_CACHE/spark-cds``), one per Java binary and
PySpark installation (about 120 MB; one unused for :data:`UNUSED_DAYS` is deleted by the next
run of any other). A truncated archive does not fail gently: the JVM maps it and dies of SIGBUS. So:

1. one run at a time records (an ``O_EXCL`` claim naming its process), once a throwaway JVM
   has shown it takes the options (another JVM than HotSpot might not start with them); the
   others start as before;
2. the recording is written by the JVM after this Python process has ended, so it is
   promoted by a later run, once no one has written it for :data:`SETTLE_SECONDS`, and only
   after a throwaway JVM has mapped and checksummed all of it (``-XX:+VerifySharedSpaces``);
   anything else is deleted and recorded again;
3. a promoted archive is used with ``-Xshare:auto``: one the JVM finds stale is skipped, and
   the JVM's CDS log lines are off.

``YANGKEY_SPARK_CDS=0`` turns all of it off; a ``spark.driver.extraJavaOptions`` of the user's
replaces these options with the rest of yangkey's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import time
from pathlib import Path

from yangkey.dirs import cache_root
from yangkey.errors import BrokerError
from yangkey.jvm import find_java, pid_exists

CDS_ENV = "YANGKEY_SPARK_CDS"
"""``0`` (or ``off``, ``false``, ``no``): no archive is used or recorded."""
SETTLE_SECONDS = 30.0
"""A recording nobody has written for this long is complete or abandoned: the check tells."""
UNUSED_DAYS = 14
DYNAMIC_MAGIC = 0xF00BABA8
"""The first four bytes of a HotSpot dynamic archive (little-endian)."""
_QUIET = "-Xlog:cds*=off"


def enabled() -> bool:
    return os.environ.get(CDS_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def archive_key(java: str) -> str:
    """What an archive is valid for: this Java binary and this PySpark installation (the
    archive records the jars' paths, so another virtualenv needs its own)."""
    import pyspark  # noqa: PLC0415 - only where Spark starts

    jars = (Path(pyspark.__file__).parent / "jars").resolve()
    names = sorted(p.name for p in jars.glob("*.jar")) if jars.is_dir() else []
    binary = Path(java).resolve()
    stat = binary.stat()
    version = pyspark.__version__
    identity = "\n".join(
        [str(binary), str(stat.st_size), str(stat.st_mtime_ns), version, str(jars), *names]
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:20]


def _has_magic(path: Path) -> bool:
    try:
        with path.open("rb") as stream:
            head = stream.read(4)
    except OSError:
        return False
    return len(head) == 4 and int.from_bytes(head, "little") == DYNAMIC_MAGIC


def _throwaway_jvm(java: str, *options: str, timeout: float = 60.0) -> bool:
    """Whether ``java`` with ``options`` prints its version and exits 0."""
    command = [java, *options, "-Xshare:auto", _QUIET, "-version"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def verified(java: str, archive: Path) -> bool:
    """A throwaway JVM maps all of ``archive`` and checks its checksums: a truncated one
    kills it (SIGBUS), a whole one lets it print its version."""
    if not _has_magic(archive):
        return False
    return _throwaway_jvm(
        java,
        f"-XX:SharedArchiveFile={archive}",
        "-XX:+VerifySharedSpaces",
        "-XX:ErrorFile=/dev/null",  # no hs_err_pid file in the working directory
    )


def records_archives(java: str, directory: Path) -> bool:
    """Whether ``java`` takes the options (HotSpot does; another JVM might refuse to start
    with them), asked once of a throwaway JVM that records its few classes."""
    probe = directory / f"probe.{os.getpid()}.recording"
    try:
        return _throwaway_jvm(java, f"-XX:ArchiveClassesAtExit={probe}")
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()


def _recordings(directory: Path, key: str) -> list[Path]:
    return sorted(directory.glob(f"{key}.*.recording"))


def _settled(directory: Path, key: str, now: float) -> list[Path]:
    settled = []
    for recording in _recordings(directory, key):
        with contextlib.suppress(OSError):
            if now - recording.stat().st_mtime >= SETTLE_SECONDS:
                settled.append(recording)
    return settled


def _promote(directory: Path, key: str, java: str, final: Path, now: float) -> None:
    """A settled recording becomes the archive if it checks out; one that does not is
    deleted, which frees the claim for the next run to record again. A second recording
    (a run that took over a claim just before the first one's JVM wrote) is dropped."""
    for recording in _settled(directory, key, now):
        if not final.exists() and verified(java, recording):
            os.replace(recording, final)
        else:
            with contextlib.suppress(OSError):
                recording.unlink()
        with contextlib.suppress(OSError):
            (directory / f"{key}.claim").unlink()


def _tidy(directory: Path, now: float) -> None:
    """Every key's leftovers: archives unused for :data:`UNUSED_DAYS` (another Java, an old
    PySpark, a deleted virtualenv) and recordings or claims a day old that no run of their
    key came back to promote."""
    for path in directory.iterdir():
        limit = UNUSED_DAYS * 86400 if path.suffix == ".jsa" else 86400
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > limit:
                path.unlink()


def _claim(directory: Path, key: str) -> bool:
    """Whether this process may record: nobody else is recording or has a recording
    waiting (a claim whose process ended without leaving one is taken over)."""
    claim = directory / f"{key}.claim"
    for _ in range(2):
        try:
            descriptor = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                owner = int(claim.read_text(encoding="ascii").strip() or "0")
            except (OSError, ValueError):
                owner = 0
            if (owner and pid_exists(owner)) or _recordings(directory, key):
                return False
            with contextlib.suppress(OSError):
                claim.unlink()
            continue
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(str(os.getpid()))
        return True
    return False


def _option(name: str, path: Path) -> str:
    # Spark splits extraJavaOptions at blanks, keeping double-quoted text whole.
    option = f"{name}={path}"
    return f'"{option}"' if " " in option else option


def cds_options(directory: Path | None = None, now: float | None = None) -> str:
    """Java options of a local driver JVM yangkey launches: map the archive, or record one
    at exit, or nothing (off, no Java found, a cache that cannot be written, someone else
    recording)."""
    if not enabled():
        return ""
    try:
        java = find_java()  # the one Spark's launcher runs: $JAVA_HOME/bin/java, else PATH's
    except BrokerError:
        return ""  # Spark's own launcher reports the missing Java
    directory = directory or cache_root() / "spark-cds"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        key = archive_key(java)
        final = directory / f"{key}.jsa"
        now = time.time() if now is None else now
        _tidy(directory, now)
        _promote(directory, key, java, final, now)
        if final.exists():
            os.utime(final)  # in use: not one to clean up
            return f"{_option('-XX:SharedArchiveFile', final)} -Xshare:auto {_QUIET}"
        unsupported = directory / f"{key}.unsupported"
        if not unsupported.exists() and _claim(directory, key):
            if not records_archives(java, directory):
                unsupported.touch()  # asked again once a day (_tidy)
                (directory / f"{key}.claim").unlink()
                return ""
            recording = directory / f"{key}.{os.getpid()}.recording"
            return f"{_option('-XX:ArchiveClassesAtExit', recording)} {_QUIET}"
    except OSError:
        return ""  # a read-only or full cache: start as before
    return ""
