"""The producer job: prepare on the driver, start Spark, run the batch or the stream.

Sources (``--input``, repeatable):

* a local file or directory (no scheme, or ``file://``): the driver lists the files and cuts
  big ones into line-aligned ranges (counting lines as it goes, so positions are exact
  ``path:line``); each range is one Spark partition (:mod:`yangkey.spark.source.files`);
* any other Hadoop URI (``hdfs://``, ``s3a://``…): Spark's ``binaryFile`` source, one
  record set per file;
* ``kafka://TOPIC``: the raw topic a YANG-Push receiver fills
  (:mod:`yangkey.spark.source.kafka_source`).

The path of one notification, module by module: :mod:`~yangkey.spark.planning` (driver: what
each task reads, the run id, the topics) -> :mod:`~yangkey.spark.batch` or
:mod:`~yangkey.spark.stream` (the Spark job) -> :mod:`~yangkey.spark.tasks` (one partition) ->
:mod:`~yangkey.spark.transform` (keys, topics) -> :mod:`~yangkey.spark.delivery.sink` (Kafka).
The executors' preflight imports this module: it imports everything a task needs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from pyspark.sql import SparkSession

from yangkey.errors import ConfigError, InputError, YangkeyError
from yangkey.spark.batch import run_batch
from yangkey.spark.config import JobConfig, SparkRuntime
from yangkey.spark.delivery.fencing import Heartbeat
from yangkey.spark.planning import Prepared, bind_checkpoint, prepare, run_heartbeat
from yangkey.spark.progress import Summary
from yangkey.spark.runtime import driver
from yangkey.spark.runtime.executors import is_local_master, prepare_executors
from yangkey.spark.runtime.session import WORKER_DAEMON_CONF, build_session, spark_failure
from yangkey.spark.runtime.stopping import Stopper
from yangkey.spark.stream import run_stream

_NOT_RESTARTED = (ConfigError, InputError)


def run(
    config: JobConfig,
    spark: SparkSession | None = None,
    *,
    update: Callable[[str], None] | None = None,
    on_batch: Callable[[int, Summary], None] | None = None,
    on_restart: Callable[[YangkeyError, int], None] | None = None,
    prepared: Prepared | None = None,
    stopper: Stopper | None = None,
) -> Summary:
    """Run the job. With ``spark`` given, that session is used and left running; otherwise
    one is built from ``config`` and stopped at the end. A stream that fails is restarted
    from its checkpoint up to ``config.stream.restart_on_failure`` times (``on_restart``
    hears of each); configuration and input errors are never retried."""
    prepared = prepared or prepare(config)
    stopper = stopper or Stopper()
    stopper.starting = True
    try:
        session = spark or build_session(_runtime(config, prepared), prepared.run_log)
    except Exception as exc:  # no Java, a bad --master or --spark-conf: one line, no traceback
        raise spark_failure(exc, "starting Spark") from None
    finally:
        stopper.starting = False
    stopper.reclaim()
    # From here a signal cancels Spark's jobs (or stops the query, once there is one) from a
    # helper thread: a KeyboardInterrupt inside a py4j call would only log its traceback.
    stopper.session = session
    heartbeat: Heartbeat | None = None
    try:
        if stopper.signum is not None:
            raise KeyboardInterrupt  # while Spark started: nothing to stop yet
        if config.stream.enabled and prepared.stream is None:
            bind_checkpoint(config, prepared, session)  # the run id the heartbeat names
        heartbeat = prepared.heartbeat = run_heartbeat(config, prepared)
        heartbeat.start()
        prepare_executors(session, prepared.shipped, prepared.py_files)
        if not config.stream.enabled:
            return run_batch(session, config, prepared, update)
        restarts = 0
        while True:
            try:
                return run_stream(session, config, prepared, on_batch, update, stopper)
            except _NOT_RESTARTED:
                raise
            except YangkeyError as exc:
                if restarts >= config.stream.restart_on_failure or stopper.signum is not None:
                    raise
                restarts += 1
                if on_restart is not None:
                    on_restart(exc, restarts)
                time.sleep(min(30.0, 2.0**restarts))
    finally:
        if heartbeat is not None:
            heartbeat.stop(failed=sys.exc_info()[0] is not None or stopper.signum is not None)
        if spark is None:
            session.stop()
            driver.finish()  # the JVM gone before we return, not seconds after


def _runtime(config: JobConfig, prepared: Prepared) -> SparkRuntime:
    """The Spark yangkey starts: the configuration's settings over the worker daemon's on a
    local master, with what the command added (``--ship-env``'s archive) over both."""
    conf = {**config.spark.conf, **prepared.spark_conf}
    if is_local_master(config.spark.master):
        # Only where executors run this interpreter: a cluster's executors may lack
        # yangkey until --ship-env's code arrives, after the daemon has started.
        conf = {**WORKER_DAEMON_CONF, **conf}
    return config.spark.model_copy(update={"conf": conf})
