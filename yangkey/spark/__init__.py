"""The Spark producer job: raw YANG-Push notifications -> keyed messages in Kafka.

* :mod:`yangkey.spark.transform` — the pure per-partition logic (no Spark, no I/O);
* :mod:`yangkey.spark.sink` — the confluent-kafka producer run inside each task
  (one transaction per task attempt, commit markers, checked flush);
* :mod:`yangkey.spark.job` — SparkSession, sources (files, the raw Kafka topic, streaming),
  the run and its summary;
* :mod:`yangkey.spark.commands` — ``yangkey produce``.

Nothing is imported here: the CLI imports submodules only when ``produce`` runs.
"""

from __future__ import annotations
