"""The Spark producer job: raw YANG-Push notifications -> keyed messages in Kafka.

Modules, each importing only those above it (tests/unit/test_import_graph.py checks):

* :mod:`yangkey.spark.splitting` — input bytes as records with positions, files cut into
  line-aligned ranges (no Spark);
* :mod:`yangkey.spark.transform` — the pure per-partition logic (no Spark);
* :mod:`yangkey.spark.kafka_source` — the raw topic: offset planning, batch reads, the
  streaming data source;
* :mod:`yangkey.spark.markers` — commit markers and the store that reads, records and fences
  them;
* :mod:`yangkey.spark.resume`, :mod:`yangkey.spark.checkpoint` — what a resumed batch run has
  left, a stream's checkpoint identity;
* :mod:`yangkey.spark.sink` — the confluent-kafka producer run inside each task
  (one transaction per task attempt, commit markers, checked flush);
* :mod:`yangkey.spark.preflight` — the broker answers, the topics exist (or are created), the
  message size they accept;
* :mod:`yangkey.spark.fencing` — run records, heartbeats, crashed runs' transactions aborted;
* :mod:`yangkey.spark.config` — :class:`~yangkey.spark.config.JobConfig`;
* :mod:`yangkey.spark.files` — local files planned into ranges, binaryFile record sets;
* :mod:`yangkey.spark.ship_env` — ``--ship-env``: this virtualenv packed for the executors;
* :mod:`yangkey.spark.classdata` — the local JVM's class-data sharing archive;
* :mod:`yangkey.spark.runlog` — a run's log file: Spark's log, the workers' Kafka client lines;
* :mod:`yangkey.spark.session` — the SparkSession, Spark failures as one error;
* :mod:`yangkey.spark.executors` — on a cluster: the executors' Python and the local input
  paths checked before the tasks start;
* :mod:`yangkey.spark.planning` — the driver's preparation: settings, run id, plan;
* :mod:`yangkey.spark.progress` — live progress and the summary;
* :mod:`yangkey.spark.tasks` — the function every partition runs;
* :mod:`yangkey.spark.daemon` — PySpark's worker daemon, dying with its JVM and
  importing the task code before it forks workers
  (Spark starts it by name: ``spark.python.daemon.module``);
* :mod:`yangkey.spark.stopping` — Ctrl-C and SIGTERM without py4j tracebacks;
* :mod:`yangkey.spark.batch`, :mod:`yangkey.spark.stream` — the two kinds of run;
* :mod:`yangkey.spark.job` — :func:`~yangkey.spark.job.run`, which starts Spark and picks one;
* :mod:`yangkey.spark.options` — ``produce``'s options and their JobConfig;
* :mod:`yangkey.spark.report` — ``produce``'s start line, resume hint and summary table;
* :mod:`yangkey.spark.commands` — ``yangkey produce`` and the spark-submit ``main``.

Nothing is imported here: the CLI imports submodules only when ``produce`` runs.
"""

from __future__ import annotations
