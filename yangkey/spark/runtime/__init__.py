"""The Spark runtime of a producer run: the session and what keeps it quiet, fast and tidy.

Modules, each importing only those above it:

* :mod:`yangkey.spark.runtime.runlog` — a run's log file: Spark's log, the workers' Kafka
  client lines;
* :mod:`yangkey.spark.runtime.classdata` — the local JVM's class-data sharing archive;
* :mod:`yangkey.spark.runtime.ship_env` — ``--ship-env``: this virtualenv packed for the
  executors;
* :mod:`yangkey.spark.runtime.driver` — the local driver JVM: its stderr filtered (no
  incubator warning, no stack traces of an interruption), its exit awaited;
* :mod:`yangkey.spark.runtime.stopping` — Ctrl-C and SIGTERM without py4j tracebacks;
* :mod:`yangkey.spark.runtime.session` — the SparkSession, Spark failures as one error;
* :mod:`yangkey.spark.runtime.executors` — on a cluster: the executors' Python and the local
  input paths checked before the tasks start;
* :mod:`yangkey.spark.runtime.daemon` — PySpark's worker daemon, dying with its JVM and
  importing the task code (:mod:`yangkey.spark.tasks`) before it forks workers (Spark starts
  it by name: ``spark.python.daemon.module``).
"""

from __future__ import annotations
