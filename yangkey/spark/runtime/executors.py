"""Checks before the producer job runs on a cluster: executors' Python, local input paths.

On a cluster master the executors run Python on other nodes (or, on one machine, in other
working directories with another environment): the job's first task would otherwise fail
four times over with ``No module named 'yangkey'`` before anything says what to do.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from yangkey.errors import ConfigError
from yangkey.spark.runtime.session import spark_failure
from yangkey.spark.runtime.ship_env import EXECUTOR_PYTHON

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from yangkey.spark.config import JobConfig

TIMEOUT_CONF = "spark.yangkey.preflight.timeout"
DEFAULT_TIMEOUT = 90.0
"""Seconds for an executor to start and answer (a cold executor JVM plus unpacking a shipped
environment takes tens of seconds on a busy node)."""
PROBED_MODULE = "yangkey.spark.job"
"""Imports everything a task needs: the transform, the sink, confluent-kafka, yangson, lxml."""
_FIX = (
    "pass --ship-env to ship this virtualenv to the executors, or install yangkey with the same"
    " interpreter path on every node and set PYSPARK_PYTHON to it"
)


def is_local_master(master: str | None) -> bool | None:
    """True for ``local[…]``, False for a cluster master, None when spark-submit decides."""
    if master is None:
        return None if "PYSPARK_GATEWAY_PORT" in os.environ else True
    return master.startswith("local")


def local_input_warnings(config: JobConfig) -> list[str]:
    """A cluster master reads local input paths on the executors' file systems."""
    if is_local_master(config.spark.master) is not False:
        return []
    local = [uri for uri in config.source.inputs if "://" not in uri or uri.startswith("file://")]
    if not local:
        return []
    return [
        f"{', '.join(local)}: local input on a cluster master: the executors open the same"
        " absolute path on their own nodes, so it must be on storage every node mounts"
        " (or use hdfs://, s3a://…)"
    ]


def _probe(module: str) -> Callable[[Iterable[Any]], Iterator[dict[str, str]]]:
    # A nested function is pickled by value: an executor without yangkey can still run it and
    # say what it lacks, instead of failing to unpickle the task.
    def probe(_: Iterable[Any]) -> Iterator[dict[str, str]]:
        import importlib  # noqa: PLC0415
        import sys  # noqa: PLC0415

        report = {"python": sys.executable, "error": ""}
        try:
            importlib.import_module(module)
        except Exception as exc:
            report["error"] = f"{type(exc).__name__}: {exc}"
        yield report

    return probe


def _timeout(session: SparkSession) -> float:
    text = session.sparkContext.getConf().get(TIMEOUT_CONF) or ""
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"{text!r} is not a number of seconds", source=TIMEOUT_CONF) from None


def check_executors(
    session: SparkSession, *, shipped: bool, module: str = PROBED_MODULE
) -> dict[str, str]:
    """Run one tiny task that imports the job's modules on an executor; raise a ConfigError
    that says what to do when it cannot, within :data:`TIMEOUT_CONF` seconds. Returns the
    executor's report (``python``: its ``sys.executable``)."""
    context = session.sparkContext
    timeout = _timeout(session)
    group = f"yangkey-preflight-{uuid.uuid4().hex[:8]}"
    outcome: list[Any] = []
    probe = _probe(module)

    def collect() -> None:
        # Job groups are per thread (pinned threads): this one can be cancelled on timeout.
        context.setJobGroup(group, "yangkey: can executors import yangkey?", True)
        try:
            outcome.append(context.parallelize([0], 1).mapPartitions(probe).collect())
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=collect, name="yangkey-preflight", daemon=True)
    thread.start()
    thread.join(timeout)
    where = f"spark executors ({context.master})"
    if not outcome:
        context.cancelJobGroup(group)
        raise ConfigError(
            f"no executor ran a task within {timeout:.0f}s: check that workers with free cores"
            f" and memory are registered with the master, or wait longer with --spark-conf"
            f" {TIMEOUT_CONF}=SECONDS",
            source=where,
        )
    result = outcome[0]
    hint = (
        f"the shipped environment does not work there (its bin/python links to {_base_python()},"
        " which every node needs at that path)"
        if shipped
        else _FIX
    )
    if isinstance(result, BaseException):
        raise ConfigError(f"{_task_failure(result)}; {hint}", source=where) from None
    report = result[0] if result else {"python": "?", "error": "no answer"}
    if report["error"]:
        raise ConfigError(
            f"{report['python']} cannot import {module.partition('.')[0]} ({report['error']});"
            f" {hint}",
            source=where,
        )
    return report


def _task_failure(exc: BaseException) -> str:
    """The executor-side cause of a failed probe (``Cannot run program …``, a Python version
    mismatch…) without Spark's "Job aborted due to stage failure" wrapping."""
    match = _LAST_FAILURE.search(str(exc))
    if match and "PythonException" not in match.group(1):  # those: the Python-side line below
        return f"the probe task failed: {match.group(1).strip()}"
    return spark_failure(exc, "the probe task").reason


_LAST_FAILURE = re.compile(r"most recent failure: Lost task [^)]*\)[^)]*\): ([^\n]+)")


def _base_python() -> str:
    return os.path.realpath(sys.executable)


def prepare_executors(session: SparkSession, shipped: bool, py_files: Sequence[str] = ()) -> None:
    """Point executors at the shipped environment (``--ship-env``, ``shipped``) and, on a
    cluster master, check that they can import yangkey before the job's tasks start."""
    context = session.sparkContext
    if is_local_master(context.master):
        return
    if shipped:
        # Executors only: the driver JVM's own Python helpers keep this interpreter.
        context.pythonExec = EXECUTOR_PYTHON
    for path in py_files:
        context.addPyFile(path)
    check_executors(session, shipped=shipped)
