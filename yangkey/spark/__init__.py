"""The Spark producer job: raw YANG-Push notifications -> keyed messages in Kafka.

Modules, each importing only those above it:

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
* :mod:`yangkey.spark.config` — :class:`~yangkey.spark.config.JobConfig`;
* :mod:`yangkey.spark.files` — local files planned into ranges, binaryFile record sets;
* :mod:`yangkey.spark.session` — the SparkSession, Spark failures as one error;
* :mod:`yangkey.spark.preflight`, :mod:`yangkey.spark.executors` — broker, topics and
  executors checked before the tasks start;
* :mod:`yangkey.spark.planning` — the driver's preparation: settings, run id, plan;
* :mod:`yangkey.spark.tasks` — the function every partition runs;
* :mod:`yangkey.spark.progress` — live progress and the summary;
* :mod:`yangkey.spark.batch`, :mod:`yangkey.spark.stream` — the two kinds of run;
* :mod:`yangkey.spark.job` — :func:`~yangkey.spark.job.run`, which starts Spark and picks one;
* :mod:`yangkey.spark.commands` — ``yangkey produce`` and the spark-submit ``main``.

Nothing is imported here: the CLI imports submodules only when ``produce`` runs.
"""

from __future__ import annotations
