"""JDK discovery, and reading what a JVM printed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from yangkey.errors import BrokerError

MIN_JAVA = 17
TAIL_LINES = 40

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


_JAVA_EXCEPTION = re.compile(r"\b(?:[\w$]+\.)*([\w$]+(?:Exception|Error)): (.+)")


def headline(text: str) -> str:
    """The first Java exception in a log, e.g. ``ConfigException: Invalid value …``.

    Put before the log tail in errors, so the cause is readable without scrolling through
    a stack trace.
    """
    match = _JAVA_EXCEPTION.search(_ANSI.sub("", text))
    return f"{match.group(1)}: {match.group(2).strip()}" if match else ""


def tail(text: str, lines: int = TAIL_LINES) -> str:
    """The last lines of a tool's output, without colour codes."""
    kept = [line for line in _ANSI.sub("", text).rstrip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def find_java(java: str | None = None) -> str:
    """An explicit path, ``$JAVA_HOME/bin/java`` or ``java`` on the PATH."""
    if java:
        return java
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise BrokerError(
            f"java not found: install a JDK {MIN_JAVA}+ (e.g. `apt-get install openjdk-17-jre`)"
            " or set JAVA_HOME",
            source="kafka broker",
        )
    return found


@lru_cache(maxsize=8)
def java_major_version(java: str) -> int:
    """The feature release of a ``java`` binary (``1.8`` → 8, ``17.0.15`` → 17)."""
    try:
        result = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrokerError(f"cannot run {java} -version: {exc}", source="kafka broker") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    if match is None:
        raise BrokerError(
            f"cannot read the version of {java}: {tail(result.stderr, 3)}", source="kafka broker"
        )
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def check_java(java: str) -> None:
    major = java_major_version(java)
    if major < MIN_JAVA:
        raise BrokerError(
            f"{java} is Java {major}; Kafka 4 brokers need Java {MIN_JAVA}+ (set JAVA_HOME)",
            source="kafka broker",
        )
