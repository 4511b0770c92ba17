"""``yangkey doctor``: what this installation has and whether what it is pointed at answers,
one :class:`Check` per line (as ``dbt debug`` does).

A check *fails* when something yangkey was told to use does not work (a bootstrap, ClickHouse
or registry that does not answer, an installed extra of a version yangkey does not support, a
profiles file that does not load); it *warns* about what is missing but optional here (Java,
the Kafka jars, an extra not installed). ``doctor`` exits 1 when any check failed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from yangkey.cli.extras import version_problem
from yangkey.errors import YangkeyError

Status = Literal["ok", "warn", "fail"]

#: The extras a user installs (pyproject.toml); ``all``, ``test`` and ``dev`` group these.
EXTRAS = ("kafka", "clickhouse", "spark", "report")
TIMEOUT = 5.0


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self, width: int = 12) -> str:
        fix = f" -> {self.fix}" if self.fix else ""
        return f"{self.status:<4}  {self.name:<{width}} {self.detail}{fix}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


# -- this installation ---------------------------------------------------------------------


def check_yangkey() -> Check:
    version = metadata.version("yangkey")
    python = ".".join(str(part) for part in sys.version_info[:3])
    return Check("yangkey", "ok", f"{version} on Python {python} ({sys.executable})")


def check_java() -> Check:
    from yangkey.jvm import MIN_JAVA, find_java, java_major_version  # noqa: PLC0415

    needs = "`kafka start` and `produce` need it"
    try:
        java = find_java()
        major = java_major_version(java)
    except YangkeyError as exc:
        return Check(
            "java", "warn", f"{exc.reason}; {needs}", f"install a JDK {MIN_JAVA}+ or set JAVA_HOME"
        )
    if major < MIN_JAVA:
        return Check(
            "java",
            "fail",
            f"{java} is Java {major}; {needs} at {MIN_JAVA}+",
            f"install a JDK {MIN_JAVA}+ and set JAVA_HOME",
        )
    return Check("java", "ok", f"Java {major} ({java})")


def check_jars() -> Check:
    from yangkey.kafka.install import KAFKA_VERSION, installed_jars, kafka_home  # noqa: PLC0415

    home = os.environ.get("KAFKA_HOME")
    if home:
        if (Path(home) / "libs").is_dir():
            return Check("kafka jars", "ok", f"KAFKA_HOME={home}")
        return Check(
            "kafka jars", "fail", f"KAFKA_HOME={home} has no libs/", "unset KAFKA_HOME or fix it"
        )
    libs = installed_jars()
    if libs is None:
        return Check(
            "kafka jars",
            "warn",
            f"Kafka {KAFKA_VERSION} not downloaded yet ({kafka_home()}); the first `kafka start`"
            " fetches it",
            "yangkey kafka install",
        )
    count = sum(1 for _ in libs.glob("*.jar"))
    return Check("kafka jars", "ok", f"Kafka {KAFKA_VERSION}, {count} jars in {libs}")


def extra_requirements(extra: str) -> list[tuple[str, str]]:
    """(distribution, specifier) of ``extra`` itself (not of the extras it includes), from the
    installed package's metadata."""
    from packaging.requirements import Requirement  # noqa: PLC0415

    found = []
    for text in metadata.requires("yangkey") or []:
        requirement = Requirement(text)
        if requirement.name.lower() == "yangkey" or requirement.marker is None:
            continue
        if requirement.marker.evaluate({"extra": extra}) and not requirement.marker.evaluate(
            {"extra": ""}
        ):
            found.append((requirement.name, str(requirement.specifier)))
    return found


def check_extra(extra: str) -> Check:
    name = f"[{extra}]"
    have, missing, wrong = [], [], []
    for distribution, specifier in extra_requirements(extra):
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            missing.append(distribution)
            continue
        have.append(f"{distribution} {version}")
        problem = version_problem(distribution, version, specifier)
        if problem is not None:
            wrong.append(problem)
    install = f"pip install 'yangkey[{extra}]'"
    if wrong:
        return Check(name, "fail", "; ".join(wrong), f"pip install --upgrade 'yangkey[{extra}]'")
    if missing and not have:
        return Check(name, "warn", "not installed", install)
    if missing:
        return Check(name, "warn", f"missing {', '.join(missing)} ({', '.join(have)})", install)
    return Check(name, "ok", ", ".join(have))


def check_native() -> Check:
    from yangkey.native import status  # noqa: PLC0415

    text = status()
    if "contract" in text:
        return Check("native", "warn", text, "make native")
    return Check("native", "ok", f"decode path: {text}")


# -- what it is pointed at -----------------------------------------------------------------


def check_profile(name: str | None, name_source: str) -> Check:
    from yangkey.cli.profile import load_profiles, profiles_path, select  # noqa: PLC0415

    path = profiles_path()
    if not path.is_file():
        if name:
            return Check("profile", "fail", f"{name!r} asked ({name_source}), but no {path}", "")
        return Check("profile", "ok", f"none (no {path}); options come from flags and env")
    try:
        profiles = load_profiles(path)
        profile = select(profiles, name, path)
    except YangkeyError as exc:
        return Check("profile", "fail", str(exc), f"fix {path}")
    chosen = name or profiles.profile or "default"
    source = name_source if name else ("the file's `profile:`" if profiles.profile else "default")
    if profile is None:
        return Check("profile", "ok", f"{path}: no profile 'default', none used")
    return Check("profile", "ok", f"{chosen!r} from {path} ({source})")


def check_bootstrap(bootstrap: str | None, source: str) -> Check:
    if bootstrap is None:
        return Check(
            "bootstrap",
            "warn",
            "none given and no broker recorded",
            "yangkey kafka start, or --bootstrap / YANGKEY_BOOTSTRAP / a profile",
        )
    try:
        from yangkey.kafka.process import broker_count  # noqa: PLC0415
    except ModuleNotFoundError:
        return Check(
            "bootstrap",
            "warn",
            f"{bootstrap} ({source}) not checked",
            "pip install 'yangkey[kafka]'",
        )
    count = broker_count(bootstrap, TIMEOUT)
    if count == 0:
        return Check(
            "bootstrap",
            "fail",
            f"{bootstrap} ({source}) does not answer",
            "start the broker (yangkey kafka start) or fix the address",
        )
    return Check("bootstrap", "ok", f"{bootstrap} ({source}): {count} broker(s) answer")


def check_clickhouse(url: str | None, embedded: str | None, source: str) -> Check:
    if url is None and embedded is None:
        return Check(
            "clickhouse",
            "warn",
            "none given",
            "--embedded PATH or --clickhouse URL (or YANGKEY_EMBEDDED, a profile)",
        )
    if url is not None:
        return _check_server(url, source)
    assert embedded is not None
    return _check_embedded(embedded, source)


def _check_server(url: str, source: str) -> Check:
    from yangkey.clickhouse.connection import open_server  # noqa: PLC0415

    try:
        conn = open_server(url)
        try:
            version = conn.query("SELECT version() AS v")[0]["v"]
        finally:
            conn.close()
    except YangkeyError as exc:
        return Check(
            "clickhouse",
            "fail",
            f"{url} ({source}): {exc.reason}",
            "check the URL and CLICKHOUSE_PASSWORD",
        )
    return Check("clickhouse", "ok", f"{url} ({source}): ClickHouse {version}")


def _check_embedded(directory: str, source: str) -> Check:
    from yangkey.clickhouse.connection import follower_connection  # noqa: PLC0415
    from yangkey.clickhouse.query_socket import lock_holder, locked_error  # noqa: PLC0415

    where = f"{directory} ({source})"
    if not Path(directory).is_dir():
        return Check(
            "clickhouse",
            "warn",
            f"embedded {where} does not exist yet",
            "yangkey ingest or yangkey ddl apply creates it",
        )
    follower = follower_connection(directory)
    if follower is not None:
        by = f", pid {follower.pid}" if follower.pid else ""
        return Check(
            "clickhouse",
            "ok",
            f"embedded {where}: held by yangkey ingest{by}, which answers queries",
        )
    holder = lock_holder(directory)
    if holder is not None and holder != os.getpid():
        return Check(
            "clickhouse", "fail", f"embedded {where}: {locked_error(directory, holder).reason}"
        )
    try:
        metadata.version("chdb")
    except metadata.PackageNotFoundError:
        return Check(
            "clickhouse",
            "fail",
            f"embedded {where}: chdb not installed",
            "pip install 'yangkey[clickhouse]'",
        )
    return Check("clickhouse", "ok", f"embedded {where}: not locked")


def check_registry(url: str | None, source: str) -> Check:
    if url is None:
        return Check("registry", "ok", "none given (optional: produce --schema-registry)")
    import urllib.error  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    from yangkey.registry.client import shown_url  # noqa: PLC0415

    shown = shown_url(url)
    target = url.split(",")[0].rstrip("/") + "/subjects"
    try:
        with urllib.request.urlopen(target, timeout=TIMEOUT) as response:
            count = len(json.loads(response.read() or b"[]"))
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return Check(
                "registry", "ok", f"{shown} ({source}) answers (needs credentials: {exc.code})"
            )
        return Check("registry", "fail", f"{shown} ({source}): HTTP {exc.code}", "check the URL")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Check(
            "registry",
            "fail",
            f"{shown} ({source}) does not answer: {reason}",
            "start it (yangkey registry serve) or fix the URL",
        )
    return Check("registry", "ok", f"{shown} ({source}): {count} subject(s)")


def run_all(checks: Iterable[tuple[str, Callable[[], Check]]]) -> list[Check]:
    """Each named check; one that raises a yangkey error is a failed check, not a traceback."""
    results = []
    for name, check in checks:
        try:
            results.append(check())
        except YangkeyError as exc:
            results.append(Check(name, "fail", str(exc)))
    return results
