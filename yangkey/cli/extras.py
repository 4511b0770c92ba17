"""Optional dependencies: which ``pip install 'yangkey[EXTRA]'`` brings a missing module.

``pip install yangkey`` is the core and the CLI (keys, topics, catalog, DDL generation). The
edges load their heavy libraries on use, so a missing one surfaces as an ImportError wherever
the edge first imports it; :func:`missing_extra` turns that into one error line: the extra to
install, or, when the package is there but older (or newer) than yangkey's requirement, both
versions (``pyspark 4.1.4 is installed, yangkey needs pyspark>=4.2,<5``).
"""

from __future__ import annotations

import functools
import importlib.metadata

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


def missing_extra(exc: ImportError, command: str | None) -> MissingDependency | None:
    """The error to print for ``exc``, or None when the module is not an optional dependency,
    or is installed as yangkey needs it (a real bug: let it raise)."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is None:
        return None
    extra = EXTRA_OF_COMMAND.get(command or "", extra)
    source = f"yangkey {command}" if command else "yangkey"
    mismatch = version_mismatch(module)
    if mismatch is not None:
        return MissingDependency(
            f"{mismatch}: pip install --upgrade 'yangkey[{extra}]'", source=source
        )
    if not isinstance(exc, ModuleNotFoundError):
        return None
    return MissingDependency(
        f"needs the Python package {module!r}, which is not installed: "
        f"pip install 'yangkey[{extra}]'",
        source=source,
    )


@functools.cache
def requirements() -> dict[str, str]:
    """Distribution name (normalised) -> yangkey's version specifier for it, from the installed
    package's metadata (``pyproject.toml``'s dependencies and extras)."""
    from packaging.requirements import Requirement  # noqa: PLC0415

    wanted: dict[str, str] = {}
    for line in importlib.metadata.requires("yangkey") or ():
        requirement = Requirement(line)
        if requirement.specifier:
            wanted[_normalised(requirement.name)] = str(requirement.specifier)
    return wanted


def _normalised(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def version_mismatch(module: str) -> str | None:
    """``"pyspark 4.1.4 is installed, yangkey needs pyspark>=4.2,<5"`` when a distribution
    providing the top-level ``module`` is installed at a version yangkey's requirement excludes;
    None when it is not installed or fits."""
    for distribution in importlib.metadata.packages_distributions().get(module, ()):
        specifier = requirements().get(_normalised(distribution))
        version = installed_version(distribution)
        if specifier is None or version is None:
            continue
        problem = version_problem(distribution, version, specifier)
        if problem is not None:
            return problem
    return None


def version_problem(distribution: str, version: str, specifier: str) -> str | None:
    """``"pyspark 4.1.4 is installed, yangkey needs pyspark>=4.2,<5"`` when ``version`` is
    outside ``specifier``, else None. Pre-releases count as their version (a development
    build of a supported version is that version)."""
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415

    if SpecifierSet(specifier).contains(version, prereleases=True):
        return None
    needed = ",".join(sorted(specifier.split(","), key=lambda s: s[0] != ">"))
    return f"{distribution} {version} is installed, yangkey needs {distribution}{needed}"
