"""Where a producer run's records come from: input bytes as records with exact positions.

Modules, each importing only those above it:

* :mod:`yangkey.spark.source.splitting` — file bytes as records (JSON lines, XML, one
  document per file), files cut into line-aligned ranges that read themselves back (no Spark);
* :mod:`yangkey.spark.source.files` — local files planned into ranges, binaryFile record sets;
* :mod:`yangkey.spark.source.kafka_source` — the raw topic: offset planning, ranges that read
  themselves, the streaming data source;
* :mod:`yangkey.spark.source.units` — what one Spark partition holds and how its task reads
  it (Spark's ``DataSource`` partitions/read shape), and range keys in words.
"""

from __future__ import annotations
