"""spark-submit entry point of the yangkey producer job.

    spark-submit --master yarn spark_jobs/produce_keyed.py \
        --subscriptions subs.yaml --input kafka://yang-push-raw --bootstrap kafka:9092

Takes exactly the options of ``yangkey produce`` (``--help`` lists them); ``--master`` is
left to spark-submit. The package ``yangkey`` must be importable on the driver and the
executors: installed at the same interpreter path on every node, or shipped as a packed
virtualenv (``venv-pack -o env.tar.gz``, then ``--archives env.tar.gz#environment`` and
``--conf spark.pyspark.python=./environment/bin/python``; ``yangkey produce --ship-env`` does
this for you).
"""

from __future__ import annotations

import sys

from yangkey.spark.commands import main

if __name__ == "__main__":
    sys.exit(main())
