"""A real Apache Kafka broker for development and tests, plus librdkafka config helpers.

* :mod:`yangkey.kafka.broker` — runs a single-node KRaft broker on 127.0.0.1
  (:class:`~yangkey.kafka.broker.EmbeddedKafka`), built from :mod:`~yangkey.kafka.install`
  (its jars: a Kafka distribution, or a pinned, checksummed download from Maven Central),
  :mod:`yangkey.jvm` (the JDK, process groups), :mod:`~yangkey.kafka.properties` (its
  settings) and :mod:`~yangkey.kafka.process` (state file, stop from another process).
* :mod:`yangkey.kafka.config` — producer / consumer config dicts with the pipeline's
  defaults, ``key=value`` parsing, properties files, env overlay, topic creation.
* :mod:`yangkey.kafka.logs` — librdkafka's log lines, routed through Python logging and
  summarised (every client yangkey builds, Spark executors' included).
* :mod:`yangkey.kafka.closing` — closing a producer within a bound (``Producer.close()``
  has none).
* :mod:`yangkey.kafka.log` — a compacted single-partition log with offsets as sequence
  numbers: the schema registry's store, and (:mod:`yangkey.kafka.catalog_topic`) the shared
  subscription catalog.
* :mod:`yangkey.kafka.commands` — the ``yangkey kafka`` click group.

Nothing is imported here on purpose: the CLI imports this package on every start, and
``confluent_kafka`` (pulled in by the submodules) is not free to import.
"""

from __future__ import annotations
