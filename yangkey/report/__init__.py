"""A picture of a run: one self-contained HTML page, charts included, no network needed.

* :mod:`yangkey.report.data` is what a report says (:class:`~yangkey.report.data.Report`) and
  reads it from the ClickHouse tables (the history and errors tables every topic feeds), from a
  producer run's summary, or from an ingest run's result;
* :mod:`yangkey.report.page` draws it: plotly figures with plotly.js inlined once, and
  tables, into one HTML file;
* :mod:`yangkey.report.commands` holds ``yangkey report``; ``produce``, ``ingest`` and
  ``demo`` call :mod:`yangkey.report.runs` for their ``--report PATH``.

Nothing in the core imports this package.
"""
