"""Issue 8.1: Spark's Python workers run the driver's interpreter for local masters.

PySpark starts its workers with ``PYSPARK_PYTHON``, else ``python3`` from PATH. On a user's
machine that ``python3`` is usually not the one yangkey is installed in, so the test puts a
bare virtualenv's ``python3`` first on PATH, unsets the variables that would hide the problem,
and asks a Spark task which interpreter it runs and whether it can import confluent_kafka.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from yangkey.spark.runtime.session import worker_python

_PROBE = """\
import json, sys
from yangkey.spark.config import SparkRuntime
from yangkey.spark.runtime.session import build_session

def probe(_):
    import sys
    try:
        import confluent_kafka  # noqa: F401
        importable = True
    except ImportError:
        importable = False
    return sys.executable, importable

session = build_session(SparkRuntime(master="local[1]", conf={"spark.ui.enabled": "false"}))
try:
    rows = session.sparkContext.parallelize([0], 1).map(probe).collect()
finally:
    session.stop()
print(json.dumps({"driver": sys.executable, "worker": rows[0][0], "imports": rows[0][1]}))
"""


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose ``python3`` sees none of the project's packages."""
    target = tmp_path_factory.mktemp("bare") / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    bin_dir = target / "bin"
    check = subprocess.run(
        [bin_dir / "python3", "-c", "import confluent_kafka"], capture_output=True, check=False
    )
    assert check.returncode != 0, "the bare interpreter must not see confluent_kafka"
    return bin_dir


def test_a_spark_task_runs_the_driver_interpreter(bare_python: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"PYSPARK_PYTHON", "VIRTUAL_ENV"}}
    env["PATH"] = f"{bare_python}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    result = subprocess.run(
        [sys.executable, "-c", _PROBE],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["worker"] == answer["driver"] == sys.executable
    assert answer["imports"] is True


def test_the_users_choice_of_worker_python_wins() -> None:
    local = "local[*]"
    assert worker_python(local, {}, {}) == sys.executable
    assert worker_python(local, {}, {"PYSPARK_PYTHON": "/opt/py/bin/python"}) is None
    chosen = {"spark.pyspark.python": "./env/bin/python"}
    assert worker_python(local, chosen, {"PYSPARK_PYTHON": "/x"}) == "./env/bin/python"
    assert worker_python("yarn", chosen, {}) == "./env/bin/python"
    # cluster masters: the executors' interpreter is the deployment's (README: --archives)
    assert worker_python("yarn", {}, {}) is None
    assert worker_python("spark://h:7077", {}, {}) is None
