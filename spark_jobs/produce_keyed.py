"""spark-submit entry point of the yangkey producer job.

    spark-submit --master yarn spark_jobs/produce_keyed.py \
        --subscriptions subs.yaml --input kafka://yang-push-raw --bootstrap kafka:9092

Takes exactly the options of ``yangkey produce`` (``--help`` lists them); ``--master`` is
left to spark-submit. The package ``yangkey`` must be importable on the driver and the
executors (installed, or shipped with ``--py-files``).
"""

from __future__ import annotations

import sys

from yangkey.spark.job import main

if __name__ == "__main__":
    sys.exit(main())
