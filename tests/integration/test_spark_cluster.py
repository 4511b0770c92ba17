"""The producer job on a real Spark standalone cluster: a master and one worker started from the
pyspark package on 127.0.0.1, the worker with a plain PATH (no project packages), as a cluster
node would have. ``yangkey produce --master spark://… --ship-env`` must produce exactly what the
core computes; without --ship-env the preflight must fail fast with one ``error:`` line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest
from test_spark_job import consume, make_setup, reference, sample_records, triples, write_jsonl

from yangkey.jvm import parent_death_hook, terminate
from yangkey.kafka.properties import free_port
from yangkey.spark.source.splitting import split_records

SPARK_HOME = Path(pyspark.__file__).resolve().parent
YANGKEY = Path(sys.executable).parent / "yangkey"
PLAIN_PATH = "/usr/bin:/bin"
START_TIMEOUT = 90.0


@dataclass(frozen=True)
class Cluster:
    master_url: str
    logs: Path


def _spark_class(
    main_class: str, args: list[str], env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), main_class, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # own process group: the executors it spawns die with it
            preexec_fn=parent_death_hook(),  # noqa: PLW1509 - a killed session leaves no JVM
        )


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    pytest.fail(f"{log.name}: no {text!r} within {START_TIMEOUT:.0f}s:\n{tail}", pytrace=False)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and one worker (1 core, 1 GiB) on free 127.0.0.1 ports."""
    base = tmp_path_factory.mktemp("spark-cluster")
    env = {
        "PATH": PLAIN_PATH,
        "HOME": str(base),
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_WORKER_DIR": str(base / "work"),
    }
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        master = _spark_class(
            "org.apache.spark.deploy.master.Master",
            ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port())],
            env,
            base / "master.log",
        )
        processes.append(master)
        # Started together: the worker retries until the master listens (JVM start-ups overlap).
        worker = _spark_class(
            "org.apache.spark.deploy.worker.Worker",
            [
                *("--host", "127.0.0.1", "--port", str(free_port())),
                *("--webui-port", str(free_port()), "--cores", "1", "--memory", "1g"),
                *("--work-dir", str(base / "work"), url),
            ],
            env,
            base / "worker.log",
        )
        processes.append(worker)
        _wait_for(base / "master.log", "I have been elected leader", master)
        _wait_for(base / "worker.log", "Successfully registered with master", worker)
        yield Cluster(url, base)
    finally:
        for process in reversed(processes):
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group (the JVM and the executors it spawned), SIGKILL after 15 s."""
    terminate(process.pid, lambda: process.poll() is None, timeout=15)


def produce(cluster: Cluster, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``yangkey produce --master spark://…`` as a user runs it: its own process and cwd."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"  # the executors call the driver back on loopback
    return subprocess.run(
        [
            str(YANGKEY),
            "produce",
            *("--master", cluster.master_url),
            *("--spark-conf", "spark.executor.memory=512m"),
            *("--spark-conf", "spark.ui.enabled=false"),
            *args,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_ship_env_runs_the_job_on_a_standalone_cluster(
    spark_cluster: Cluster, kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(nodes=2))
    expected, tally = reference(setup, split_records(data.read_bytes(), str(data)))
    result = produce(
        spark_cluster,
        tmp_path,
        *("--subscriptions", str(setup.subscriptions)),
        *("--input", "in.jsonl"),  # relative: resolved on the driver, not in the executor's cwd
        *("--bootstrap", kafka_bootstrap, "--create-topics", "--ship-env", "--json"),
        *("--producer-config", "linger.ms=5"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "shipping this virtualenv to the executors as ./environment" in result.stderr
    assert "local input on a cluster master" in result.stderr
    got = triples(consume(kafka_bootstrap, [*setup.topics, setup.dead_letter]))
    assert got == expected
    assert sum(got.values()) == tally.messages + tally.rejections > 20
    # Spark unpacked the archive in the executor's working directory (app-ID/EXECUTOR/), and
    # yangkey came from the shipped code zip, not from the editable finder of this source tree.
    unpacked = list((spark_cluster.logs / "work").glob("app-*/*/environment"))
    assert len(unpacked) == 1
    assert (unpacked[0] / "bin" / "python").exists()
    assert not list(unpacked[0].glob("lib/python*/site-packages/__editable__*yangkey*"))
    assert not list(unpacked[0].glob("lib/python*/site-packages/pyspark/jars/*"))
    assert "yangkey's code from" in result.stderr


def test_without_ship_env_the_preflight_says_what_to_do(
    spark_cluster: Cluster, kafka_bootstrap: str, tmp_path: Path
) -> None:
    setup = make_setup(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", sample_records(nodes=1))
    started = time.monotonic()
    result = produce(
        spark_cluster,
        tmp_path,
        *("--subscriptions", str(setup.subscriptions)),
        *("--input", str(data), "--bootstrap", kafka_bootstrap, "--create-topics"),
    )
    elapsed = time.monotonic() - started
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 1, result.stderr[-3000:]
    assert len(errors) == 1, result.stderr[-3000:]
    assert "cannot import yangkey" in errors[0]
    assert "No module named 'yangkey'" in errors[0]
    assert "--ship-env" in errors[0] and "PYSPARK_PYTHON" in errors[0]
    assert "Traceback" not in result.stderr
    assert elapsed < 120, f"the preflight took {elapsed:.0f}s"
    assert consume(kafka_bootstrap, setup.topics, idle=1.0) == []
