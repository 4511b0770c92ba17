"""The Spark producer job: raw YANG-Push notifications -> keyed messages in Kafka.

The path of one notification: a task opens its partition's input (``source``), each record
goes through the ``transform`` (keys and topics), and the sink produces the result exactly
once (``delivery``); the driver plans the run and drives Spark (``runtime``) for a batch or a
stream.

Modules and subpackages, each importing only those above it (each subpackage lists its own
modules the same way; tests/unit/test_import_graph.py checks both):

* :mod:`yangkey.spark.source` — input bytes as records with positions: files, the raw topic,
  what one Spark partition holds and how its task reads it;
* :mod:`yangkey.spark.transform` — the pure per-record logic (no Spark): records -> keyed
  messages and dead letters, counted;
* :mod:`yangkey.spark.lines` — the same for a file range's lines, a chunk at a time (what a
  batch task runs);
* :mod:`yangkey.spark.delivery` — exactly-once into Kafka: commit markers, resuming, a
  stream's checkpoint identity, the sink, fencing crashed runs;
* :mod:`yangkey.spark.config` — :class:`~yangkey.spark.config.JobConfig`, what a run is asked
  to do;
* :mod:`yangkey.spark.preflight` — the broker answers, the topics exist (or are created), the
  message size they accept;
* :mod:`yangkey.spark.progress` — live progress and the summary;
* :mod:`yangkey.spark.tasks` — the function every partition runs;
* :mod:`yangkey.spark.runtime` — the SparkSession and its plumbing: the run's log, the JVM's
  class-data archive, ``--ship-env``, signals, executors, the worker daemon;
* :mod:`yangkey.spark.planning` — the driver's preparation: settings, run id, plan;
* :mod:`yangkey.spark.batch`, :mod:`yangkey.spark.stream` — the two kinds of run;
* :mod:`yangkey.spark.job` — :func:`~yangkey.spark.job.run`, which starts Spark and picks one;
* :mod:`yangkey.spark.options` — ``produce``'s options and their JobConfig;
* :mod:`yangkey.spark.report` — ``produce``'s start line, resume hint and summary table;
* :mod:`yangkey.spark.commands` — ``yangkey produce`` and the spark-submit ``main`` (the file
  spark-submit runs is :mod:`yangkey.cli.spark_submit`, a driver like the CLI).

Nothing is imported here: the CLI imports submodules only when ``produce`` runs.
"""

from __future__ import annotations
