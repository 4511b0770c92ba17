"""``yangkey demo``, ``yangkey init`` and ``yangkey sample``: the whole pipeline on the
embedded stack, on a generated data set. An edge driver: it runs every edge, and nothing but the
CLI's lazy table imports it.

Modules, each importing only the ones listed above it:

* :mod:`yangkey.demo.sample`: a realistic, deterministic YANG-Push data set for the example
  subscriptions, and the outcome a correct pipeline ends with;
* :mod:`yangkey.demo.pipeline`: the demo's run (broker, registry, DDL, producer, ingest) and
  its checks;
* :mod:`yangkey.demo.commands`: the ``demo``, ``init`` and ``sample`` commands.
"""
