"""``yangkey produce --ship-env``: the running virtualenv, packed for the executors.

This is Spark's documented "Python Package Management" recipe for virtualenvs: the environment
is packed with venv-pack into a ``.tar.gz``, passed as ``spark.archives`` with the alias
``environment`` (Spark unpacks it into every executor's working directory) and the executors'
Python is ``./environment/bin/python``.

* The archive holds the virtualenv's files except ``pyspark/jars`` (executors run the cluster's
  own Spark, and their Python workers import the cluster's ``pyspark.zip`` first anyway) and
  the embedded ClickHouse (``chdb``, ~530 MB: only ``ingest``/``state``/``history`` on the
  driver use it; the executor preflight imports everything the tasks import).
* venv-pack keeps ``bin/python`` as a link to the base interpreter the venv was made from
  (``pyvenv.cfg`` ``home``), so every node needs that Python at the same path. That is
  venv-pack's documented limit; conda-pack ships the interpreter itself.
* Editable installs: venv-pack refuses path-style ``.pth`` editables and would silently ship the
  PEP 660 finder of ``pip install -e .``, which imports from the source tree of *this* machine.
  For yangkey itself the finder is left out of the archive and the package's files (with the
  subpackages pyproject.toml maps elsewhere, ``yangkey.sql_templates``) go into a small zip
  that the driver adds with ``SparkContext.addPyFile``. Any other editable distribution is an
  error.
* Both are cached under ``<cache>/spark-env``: the archive keyed by the venv's content (the
  interpreter, every distribution's name and version), the code zip by its files' bytes. A
  repeated run reuses them; editing yangkey's code re-zips only the code. A new archive
  replaces the older archives of the same venv.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from yangkey.dirs import cache_root
from yangkey.errors import ConfigError

ALIAS = "environment"
EXECUTOR_PYTHON = f"./{ALIAS}/bin/python"
PACKAGE = "yangkey"
_FORMAT = "2"
"""Bump when what goes into the archive changes, so cached archives are rebuilt."""
_EXCLUDED = (
    # The cluster's Spark provides the JVM side; these are ~460 MB of the venv.
    "lib/python*/site-packages/pyspark/jars/*",
)
_DRIVER_ONLY = ("chdb", "chdb-core")
"""Distributions Spark tasks never import: their files stay out of the archive."""
_SOURCE_SKIP = ("__pycache__",)
_MAPPED_SUBPACKAGES = ("sql_templates",)
"""Subpackages pyproject.toml's ``package-dir`` maps outside ``yangkey/``."""


@dataclass(frozen=True)
class ShippedEnv:
    """An archive of the running virtualenv, ready for ``spark.archives``."""

    archive: Path
    code: Path | None
    """A zip of yangkey's own files when it is installed in editable mode (``sc.addPyFile``)."""
    reused: bool
    seconds: float

    @property
    def size(self) -> int:
        return self.archive.stat().st_size

    def spark_conf(self, existing: str | None = None) -> dict[str, str]:
        """``spark.archives`` with this archive added (keeps archives the user listed)."""
        entry = f"{self.archive.as_uri()}#{ALIAS}"
        return {"spark.archives": f"{existing},{entry}" if existing else entry}

    def describe(self) -> str:
        how = "cached" if self.reused else f"packed in {self.seconds:.0f}s"
        code = f", yangkey's code from {self.code}" if self.code else ""
        return (
            f"shipping this virtualenv to the executors as ./{ALIAS}:"
            f" {self.archive} ({self.size / 1e6:,.0f} MB, {how}){code}"
        )


def running_venv() -> Path:
    """The virtualenv of this interpreter, or a ConfigError saying why it cannot be packed."""
    prefix = Path(sys.prefix)
    if (prefix / "conda-meta").is_dir():
        raise ConfigError(
            "yangkey runs from a conda environment: pack it with conda-pack and pass it as"
            f" --spark-conf spark.archives=ENV.tar.gz#{ALIAS} (PYSPARK_PYTHON={EXECUTOR_PYTHON})",
            source="--ship-env",
        )
    if sys.prefix == sys.base_prefix or not (prefix / "pyvenv.cfg").is_file():
        raise ConfigError(
            f"yangkey runs from {sys.executable}, not from a virtualenv: install it in one"
            " (python3 -m venv) to ship it, or install yangkey at the same interpreter path on"
            " every node and set PYSPARK_PYTHON",
            source="--ship-env",
        )
    return prefix


def _site_packages(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python*/site-packages"))
    if not found:
        raise ConfigError(f"{prefix} has no lib/python*/site-packages", source="--ship-env")
    return found[0]


def _is_editable(dist: metadata.Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        info: Any = json.loads(text)
        return bool(info.get("dir_info", {}).get("editable", False))
    except (ValueError, AttributeError):
        return False


def _package_dirs(name: str) -> dict[str, Path]:
    """``{"yangkey": dir, "yangkey.sql_templates": dir}``: where the import system finds the
    package and the subpackages pyproject.toml maps to other directories (``package-dir``)."""
    dirs: dict[str, Path] = {}
    for dotted in (name, *(f"{name}.{sub}" for sub in _MAPPED_SUBPACKAGES)):
        spec = find_spec(dotted)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"cannot locate the {dotted} package", source="--ship-env")
        dirs[dotted] = Path(next(iter(spec.submodule_search_locations)))
    return dirs


def source_files(name: str = PACKAGE) -> dict[str, Path]:
    """Archive-relative target (below site-packages) -> source file, for a package whose
    files live outside the venv."""
    files: dict[str, Path] = {}
    for dotted, directory in sorted(_package_dirs(name).items()):
        base = Path(*dotted.split("."))
        for path in sorted(directory.rglob("*")):
            relative = path.relative_to(directory)
            if not path.is_file() or any(part in _SOURCE_SKIP for part in relative.parts):
                continue
            files.setdefault(str(base / relative), path)
    return files


def _outside(prefix: Path) -> dict[str, Path]:
    """yangkey's files when the package is not inside the venv (editable install or
    PYTHONPATH), else {}."""
    spec = find_spec(PACKAGE)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    if origin is not None and origin.resolve().is_relative_to(prefix.resolve()):
        return {}
    return source_files(PACKAGE)


def content_key(prefix: Path) -> str:
    """A digest of what the venv archive holds: the interpreter and every distribution's name
    and version (an editable yangkey's code is shipped apart, so edits do not re-pack)."""
    digest = hashlib.sha256()
    digest.update(f"{_FORMAT}\n{sys.version}\n{sys.platform}\n{prefix}\n".encode())
    dists = metadata.distributions(path=[str(_site_packages(prefix))])
    for line in sorted(f"{d.metadata['Name']}=={d.version}" for d in dists):
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()[:16]


def _check_editables(prefix: Path) -> list[str]:
    """Names of editable distributions other than yangkey (they cannot be shipped)."""
    dists = metadata.distributions(path=[str(_site_packages(prefix))])
    return sorted(
        str(d.metadata["Name"])
        for d in dists
        if _is_editable(d) and str(d.metadata["Name"]).lower() != PACKAGE
    )


def _pack(prefix: Path, editable: bool, output: Path) -> None:
    import venv_pack  # noqa: PLC0415 - only --ship-env needs it

    site = _site_packages(prefix).relative_to(prefix)
    try:
        env = venv_pack.Env(str(prefix))
    except venv_pack.VenvPackException as exc:
        raise ConfigError(
            f"venv-pack cannot pack {prefix}: {' '.join(str(exc).split())}", source="--ship-env"
        ) from None
    for pattern in (*_EXCLUDED, *_driver_only_patterns(prefix)):
        env = env.exclude(pattern)
    if editable:
        # The editable finder would import from this machine's source tree (the code goes in
        # the code zip instead).
        env = env.exclude(f"{site}/__editable__*{PACKAGE}*").exclude(
            f"{site}/__pycache__/__editable__*{PACKAGE}*"
        )
    try:
        env.pack(output=str(output), format="tar.gz", compress_level=1, force=True)
    except (venv_pack.VenvPackException, OSError) as exc:
        raise ConfigError(f"cannot pack {prefix}: {exc}", source="--ship-env") from None


def _driver_only_patterns(prefix: Path) -> list[str]:
    """venv-pack exclude patterns for the top-level entries of :data:`_DRIVER_ONLY`."""
    site = _site_packages(prefix)
    relative = site.relative_to(prefix)
    patterns: set[str] = set()
    for dist in metadata.distributions(path=[str(site)]):
        if str(dist.metadata["Name"]).lower() not in _DRIVER_ONLY:
            continue
        for file in dist.files or ():
            top = Path(str(file)).parts[0]
            if top != "..":  # scripts in bin/ are small and harmless
                patterns.update((f"{relative}/{top}", f"{relative}/{top}/*"))
    return sorted(patterns)


def _zip_code(files: dict[str, Path], output: Path) -> None:
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        for target, path in sorted(files.items()):
            archive.write(path, target)


def _cache_dir() -> Path:
    return cache_root() / "spark-env"


def _build(path: Path, write: Callable[[Path], None]) -> bool:
    """Write ``path`` unless it exists; True if it was there already."""
    if path.is_file():
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the final name and renamed: a concurrent run never sees half a file.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".packing-", suffix=path.name)
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return False


def ship_running_env(cache_dir: Path | None = None, prefix: Path | None = None) -> ShippedEnv:
    """The archive of the running virtualenv (and yangkey's code when it is installed in
    editable mode): from the cache, or packed now."""
    started = time.monotonic()
    prefix = prefix or running_venv()
    try:
        import venv_pack  # noqa: F401, PLC0415
    except ImportError:
        raise ConfigError(
            "--ship-env needs venv-pack: pip install 'yangkey[spark]'", source="--ship-env"
        ) from None
    editables = _check_editables(prefix)
    if editables:
        raise ConfigError(
            f"editable installs cannot be shipped: {', '.join(editables)}; install them"
            " normally (pip install PATH, not -e)",
            source="--ship-env",
        )
    code = _outside(prefix)
    directory = cache_dir or _cache_dir()
    venv_id = hashlib.sha256(str(prefix.resolve()).encode()).hexdigest()[:8]
    archive = directory / f"venv-{venv_id}-{content_key(prefix)}.tar.gz"
    reused = _build(archive, lambda out: _pack(prefix, bool(code), out))
    if not reused:
        for old in directory.glob(f"venv-{venv_id}-*.tar.gz"):
            if old != archive:
                old.unlink(missing_ok=True)
    code_zip: Path | None = None
    if code:
        digest = hashlib.sha256()
        for target, path in sorted(code.items()):
            digest.update(target.encode() + b"\0" + path.read_bytes() + b"\0")
        code_zip = directory / f"{PACKAGE}-{digest.hexdigest()[:16]}.zip"
        _build(code_zip, lambda out: _zip_code(code, out))
        os.utime(code_zip)  # recently used: kept by the clean-up below
        week_ago = time.time() - 7 * 86400
        for old in directory.glob(f"{PACKAGE}-*.zip"):
            if old.stat().st_mtime < week_ago:
                old.unlink(missing_ok=True)
    return ShippedEnv(archive, code_zip, reused=reused, seconds=time.monotonic() - started)
