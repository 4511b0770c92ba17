"""Exactly-once delivery into Kafka: one transaction per task attempt, a commit marker with
it, resumes that produce only what no marker covers, and crashed runs fenced.

Modules, each importing only those above it:

* :mod:`yangkey.spark.delivery.markers` — a run's scope (``RunScope``), commit markers and
  the store that reads, records and fences them;
* :mod:`yangkey.spark.delivery.resume` — what a resumed batch run has left;
* :mod:`yangkey.spark.delivery.checkpoint` — a stream's checkpoint identity;
* :mod:`yangkey.spark.delivery.native_producer` — the native producer (yangkey-native over
  confluent-kafka's librdkafka) and when it runs;
* :mod:`yangkey.spark.delivery.spec` — what tasks are told about producing (``SinkSpec``)
  and what each reports back (``PartitionResult``);
* :mod:`yangkey.spark.delivery.direct` — a task's lines keyed by the native pass straight
  into the native producer (``yangkey_native.Outbox``);
* :mod:`yangkey.spark.delivery.opening` — a task's transaction opened in another thread
  while its first records are transformed;
* :mod:`yangkey.spark.delivery.sink` — the producer run inside each task (one transaction
  per task attempt, commit markers, checked flush);
* :mod:`yangkey.spark.delivery.fencing` — run records, heartbeats, crashed runs'
  transactions aborted.
"""

from __future__ import annotations
