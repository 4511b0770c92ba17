"""JVM processes, for every edge that runs one (the local Kafka broker, Spark): finding the
JDK, reading what a JVM printed, whether a process lives, stopping a process group, and tying a
child's life to its parent's."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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


def pid_exists(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def terminate(pid: int, is_alive: Callable[[], bool], timeout: float) -> bool:
    """SIGTERM the process group of ``pid``, SIGKILL it after ``timeout``; True if killed hard.

    The group (a JVM we start is a session leader) so that nothing the JVM spawned survives.
    """

    def signal_group(sig: signal.Signals) -> None:
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive():
            return False
        time.sleep(0.1)
    signal_group(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    return True


def parent_death_hook() -> Callable[[], None] | None:
    """A pre-exec hook making the child get SIGTERM when its parent dies (Linux only).

    atexit hooks do not run when a test session is SIGKILLed or SIGTERMed (a CI timeout);
    without ``PR_SET_PDEATHSIG`` its JVM (a broker, a Spark master) would outlive it. The
    libc lookup happens here, in the parent, so the hook itself does nothing but one system
    call.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    sigterm = int(signal.SIGTERM)

    def hook() -> None:
        prctl(pr_set_pdeathsig, sigterm, 0, 0, 0)

    return hook
