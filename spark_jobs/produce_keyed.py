"""spark-submit entry point of the yangkey producer job, for a clone of the repository.

    spark-submit --master yarn spark_jobs/produce_keyed.py \
        --subscriptions subs.yaml --input kafka://yang-push-raw --bootstrap kafka:9092

The same entry ships inside the package for pip installs (``yangkey/cli/spark_submit.py``;
``yangkey produce --help`` prints its installed path). Takes exactly the options of ``yangkey
produce``; ``--master`` is left to spark-submit. ``yangkey`` must be importable on the driver
and the executors (installed at the same interpreter path on every node, or shipped with
``yangkey produce --ship-env``).
"""

from __future__ import annotations

import sys

from yangkey.spark.commands import main

if __name__ == "__main__":
    sys.exit(main())
