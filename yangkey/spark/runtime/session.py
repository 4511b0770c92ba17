"""The SparkSession of a run, and Spark's failures turned back into one clear error."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from yangkey.errors import YangkeyError
from yangkey.spark.config import SparkRuntime
from yangkey.spark.runtime import driver, runlog
from yangkey.spark.runtime.classdata import cds_options

DEFAULT_MASTER = "local[*]"
WORKER_DAEMON_CONF = {"spark.python.daemon.module": "yangkey.spark.runtime.daemon"}
"""Python workers that die with the JVM that started them (:mod:`yangkey.spark.runtime.daemon`)."""


def spark_failure(exc: BaseException, what: str = "the Spark job") -> YangkeyError:
    """A Spark/Py4J exception -> the YangkeyError a task raised, or one clear line."""
    if isinstance(exc, YangkeyError):
        return exc
    text = str(exc)
    found: tuple[str, str, str] | None = None
    for line in text.splitlines():
        match = _TASK_ERROR.search(line)
        if match is not None:
            found = (match.group(1), match.group(2), match.group(3).strip())
    attempts = ""
    for line in text.splitlines():
        if "failed" in line and "times, most recent failure" in line:
            start = line.find("failed ")
            attempts = line[start : line.find(",", start)].strip()
            break
    if found is not None:
        module, name, message = found
        # yangkey.errors or an edge's own (yangkey.registry.errors): the class the task raised
        try:
            cls = getattr(importlib.import_module(module), name, YangkeyError)
        except ImportError:
            cls = YangkeyError
        if not (isinstance(cls, type) and issubclass(cls, YangkeyError)):
            cls = YangkeyError
        suffix = f" (task {attempts})" if attempts else ""
        source, sep, reason = message.partition(": ")
        if not sep:
            source, reason = "spark task", message
        try:
            return cls(reason + suffix, source=source)
        except TypeError:  # a class with a richer constructor (RegistryError): its line only
            return YangkeyError(reason + suffix, source=source)
    candidates = [
        match.group(1)
        for line in text.splitlines()
        if (match := _EXCEPTION_LINE.match(line.strip())) is not None
    ]
    python_side = [c for c in candidates if not c.startswith(("org.", "java.", "scala."))]
    if python_side:
        reason = python_side[-1]
    elif candidates:
        reason = candidates[0]
    else:
        reason = next((line for line in text.splitlines() if line.strip()), type(exc).__name__)
    return YangkeyError(f"{what} failed: {reason.strip()}", source="spark")


_TASK_ERROR = re.compile(r"\b(yangkey(?:\.\w+)*\.errors)\.(\w+): (.*)")
_EXCEPTION_LINE = re.compile(r"^(?::\s*)?([\w.$]+(?:Error|Exception|Crash)\b(?::.*)?)$")


def _quiet_log4j2(level: str, *, to_file: bool = False) -> Path:
    """A log4j2 config for the driver JVM: Spark's console layout at ``level``, on stderr or
    (``to_file``) appended to the file the ``yangkey.run.log`` system property names.

    PySpark's gateway logger is at ``level`` too: Spark treats a PySpark driver as a shell,
    and a shell whose own logger has no level of its own gets WARN, and, that differing from
    the root's, "Setting default log level to …" and a ``setLogLevel`` hint on stderr."""
    lowered = level.lower()
    if to_file:
        appender = (
            "appender.out.type = File\n"
            f"appender.out.fileName = ${{sys:{runlog.PROPERTY}}}\n"
            "appender.out.append = true\n"
        )
    else:
        appender = "appender.out.type = Console\nappender.out.target = SYSTEM_ERR\n"
    text = (
        f"rootLogger.level = {lowered}\n"
        "rootLogger.appenderRef.out.ref = out\n"
        "logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\n"
        f"logger.gateway.level = {lowered}\n"
        f"{appender}"
        "appender.out.name = out\n"
        "appender.out.layout.type = PatternLayout\n"
        "appender.out.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
    )
    name = f"yangkey-log4j2-{lowered}{'-file' if to_file else ''}.properties"
    path = Path(tempfile.gettempdir()) / name
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return path
    # Another run may read it meanwhile: a whole file replaces the old one at once.
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path


def worker_python(
    master: str | None, spark_conf: Mapping[str, str], environ: Mapping[str, str]
) -> str | None:
    """The interpreter Spark's Python workers must run, or None to leave PySpark's choice.

    The user's ``spark.pyspark.python`` wins, then their ``PYSPARK_PYTHON``; otherwise a local
    master runs this very interpreter, the one that imported yangkey. Cluster masters keep
    Spark's own resolution: the environment ships with ``--archives`` (see the README).
    """
    chosen = spark_conf.get("spark.pyspark.python")
    if chosen:
        return chosen
    if environ.get("PYSPARK_PYTHON"):
        return None
    if (master or "").startswith("local"):
        return sys.executable
    return None


LOCAL_JIT = "-XX:TieredStopAtLevel=1"
"""The JIT of a local master's JVM that yangkey starts: C1 only. On a local master one JVM
is driver and executor on the cores the Python workers need, and it only schedules tasks,
plans micro-batches and passes descriptors; the per-record work is Python's. C2's compiler
threads spent those cores on start-up: a 300k-record ``yangkey produce`` took 7.0-9.0 s of
JVM CPU instead of 13.5-15.7 s (docs/design.md#spark-task-throughput, "The local JVM
compiles with C1 only")."""


def driver_java_options(log_level: str, local: bool, run_log: str | None = None) -> str:
    """``spark.driver.extraJavaOptions`` of a JVM yangkey launches (not spark-submit's):
    Spark's start-up chatter kept below ``log_level`` from the first line, in ``run_log``
    rather than on stderr when given, and on a ``local`` master the JIT above. A cluster's
    driver keeps the JVM's default JIT."""
    config = _quiet_log4j2(log_level, to_file=run_log is not None)
    quiet = f"-Dlog4j2.configurationFile=file:{config}"
    if run_log is not None:
        # One token: Spark splits these options on whitespace (a path with spaces: no file).
        if any(c.isspace() for c in run_log):
            quiet = f"-Dlog4j2.configurationFile=file:{_quiet_log4j2(log_level)}"
        else:
            quiet += f" -D{runlog.PROPERTY}={run_log}"
    return f"{LOCAL_JIT} {quiet}" if local else quiet


def build_session(runtime: SparkRuntime, run_log: str | None = None) -> SparkSession:
    """``SparkSession`` for the job: ``--master`` if given, else spark-submit's, else local;
    a JVM yangkey launches logs into ``run_log`` (:mod:`yangkey.spark.runtime.runlog`)."""
    builder: Any = SparkSession.builder.appName(runtime.app_name)
    master = runtime.master
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = DEFAULT_MASTER  # plain Python, not spark-submit: run locally
    if master is not None:
        builder = builder.master(master)
    settings: dict[str, str] = {
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
    }
    python = worker_python(master, runtime.conf, os.environ)
    if python is not None:
        # Python workers run SparkContext.pythonExec, which PySpark takes from this variable
        # (else `python3` on PATH, which need not see yangkey); the builder's
        # spark.pyspark.python does not reach it when the driver is plain Python.
        os.environ["PYSPARK_PYTHON"] = python
    launching = "PYSPARK_GATEWAY_PORT" not in os.environ
    local = (master or "").startswith("local")
    if launching and "spark.driver.extraJavaOptions" not in runtime.conf:
        options = driver_java_options(runtime.log_level, local, run_log)
        sharing = cds_options() if local else ""
        settings["spark.driver.extraJavaOptions"] = f"{options} {sharing}".strip()
    if launching and local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings.update(runtime.conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if launching:
        # the JVM started here, its stderr through yangkey's filter (driver's module doc)
        from pyspark import SparkConf  # noqa: PLC0415

        conf = SparkConf().setAppName(runtime.app_name).setAll(list(settings.items()))
        driver.launch(conf.setMaster(master) if master is not None else conf)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*pandas.*", category=FutureWarning)
        session: SparkSession = builder.getOrCreate()
    session.sparkContext.setLogLevel(runtime.log_level)
    return session


def quiet_query_errors(session: SparkSession) -> None:
    """A failed query is reported as one ``error:`` line (or a restart warning): Spark's own
    log of it, a JVM stack trace, would only bury that line."""
    with contextlib.suppress(Exception):
        jvm: Any = getattr(session, "_jvm")  # noqa: B009 - private, untyped
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "org.apache.spark.sql.execution.streaming", jvm.org.apache.logging.log4j.Level.OFF
        )
