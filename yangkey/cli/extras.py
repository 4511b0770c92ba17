"""Optional dependencies: which ``pip install 'yangkey[EXTRA]'`` brings a missing module.

``pip install yangkey`` is the core and the CLI (keys, topics, catalog, DDL generation). The
edges load their heavy libraries on use, so a missing one surfaces as a ModuleNotFoundError
wherever the edge first imports it; :func:`missing_extra` turns that into one error line.
"""

from __future__ import annotations

from yangkey.errors import YangkeyError

EXTRA_OF_MODULE: dict[str, str] = {
    "pyspark": "spark",
    "py4j": "spark",
    "confluent_kafka": "kafka",
    "fastavro": "kafka",
    "avro": "kafka",
    "google": "kafka",
    "proto_schema_parser": "kafka",
    "jsonschema": "kafka",
    "jsonschema_specifications": "kafka",
    "starlette": "kafka",
    "uvicorn": "kafka",
    "chdb": "clickhouse",
    "clickhouse_connect": "clickhouse",
    "pyarrow": "clickhouse",
    "plotly": "report",
}
"""Top-level module -> the extra that installs it (see pyproject.toml)."""

EXTRA_OF_COMMAND: dict[str, str] = {
    "produce": "spark",
    "demo": "spark",
    "ingest": "clickhouse",
    "report": "report",
}
"""Commands whose extra brings every edge they use: one install, not one per missing module."""


class MissingDependency(YangkeyError):
    """An optional dependency of the command is not installed."""


def missing_extra(exc: ModuleNotFoundError, command: str | None) -> MissingDependency | None:
    """The error to print for ``exc``, or None when the missing module is not an optional
    dependency (a real bug: let it raise)."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is None:
        return None
    extra = EXTRA_OF_COMMAND.get(command or "", extra)
    return MissingDependency(
        f"needs the Python package {module!r}, which is not installed: "
        f"pip install 'yangkey[{extra}]'",
        source=f"yangkey {command}" if command else "yangkey",
    )
