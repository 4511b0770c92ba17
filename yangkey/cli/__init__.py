"""The ``yangkey`` command line: the CLI layer, above the core and the edges.

Modules, each importing only the ones listed above it:

* :mod:`yangkey.cli.extras`: which ``pip install 'yangkey[EXTRA]'`` brings a missing module;
* :mod:`yangkey.cli.reporting`: a :class:`~yangkey.errors.YangkeyError` as one ``error:``
  line and exit status 1;
* :mod:`yangkey.cli.profile`: profiles (``yangkey.yaml``), the defaults of options;
* :mod:`yangkey.cli.output`: rows on stdout (table, TSV, CSV, JSON lines);
* :mod:`yangkey.cli.declaration`: how an option is declared once, and ``--profile``;
* :mod:`yangkey.cli.options`: every option more than one command module takes;
* :mod:`yangkey.cli.version`: ``--version``;
* :mod:`yangkey.cli.subscription`: the core commands' subscription options and compilation;
* :mod:`yangkey.cli.core`: ``normalize``, ``compile``, ``topic``, ``key``, ``keys``;
* :mod:`yangkey.cli.catalog`: ``catalog show``;
* :mod:`yangkey.cli.root`: the ``yangkey`` group and its lazy table of edge commands;
* :mod:`yangkey.cli.__main__`: ``python -m yangkey.cli``;
* :mod:`yangkey.cli.spark_submit`: the file ``spark-submit`` runs (``yangkey produce``'s
  options), shipped in the package.

The edges' command modules (``yangkey.kafka.commands``, ``yangkey.clickhouse.commands``, …,
``yangkey.demo.commands``) import the support modules (extras to options, which ship with the
core install); nothing outside this package imports the commands or the root, which load the
edges' commands (``tests/unit/test_import_graph.py``).

The console script is ``yangkey = yangkey.cli:main``: ``main`` is imported from the root on
first use, so that an edge importing :mod:`yangkey.cli.options` does not load the root.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yangkey.cli.root import main as main

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    if name == "main":
        from yangkey.cli.root import main  # noqa: PLC0415

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
