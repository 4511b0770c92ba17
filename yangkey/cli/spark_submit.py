"""spark-submit entry point of the yangkey producer job; it ships in the package, so a pip
install has it (``yangkey produce --help`` prints its path)::

    SUBMIT=$(python -c 'import yangkey.cli.spark_submit as s; print(s.__file__)')
    spark-submit --master yarn "$SUBMIT" \\
        --subscriptions subs.yaml --input kafka://yang-push-raw --bootstrap kafka:9092

Takes exactly the options of ``yangkey produce``; ``--master`` is left to spark-submit
(``python -m yangkey.cli.spark_submit`` is the same command without spark-submit). The package
``yangkey`` must be importable on the driver and the executors: installed at the same
interpreter path on every node, or shipped as a packed virtualenv (``venv-pack -o
env.tar.gz``, then ``--archives env.tar.gz#environment`` and ``--conf
spark.pyspark.python=./environment/bin/python``; ``yangkey produce --ship-env`` does this for
you).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a file (spark-submit), this directory is first on sys.path: its modules (profile,
    # catalog, output, ...) must not stand in for top-level ones of the same name (profile is
    # the standard library's).
    if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    from yangkey.spark.commands import main

    sys.exit(main())
