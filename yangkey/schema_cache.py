"""On-disk cache of module indexes, yangson data models and compiled subscriptions (the last
through :mod:`yangkey.compiler`).

A one-shot ``yangkey key`` spends almost all of its time building the schema (and importing
yangson to do it); with a warm cache it loads the compiled subscription and never imports
yangson. Entries are pickles named by a digest of everything that determines them:

* module index: the search path and every ``.yang`` file's name, size and mtime there;
* data model: the YANG library document and the content (SHA-256) of every module it lists;
* compiled subscription: the filter and its options, the index fingerprint, the explicit
  library file's bytes, and the content hashes of the modules the schema was built from,
  verified again on load, so an edited module invalidates the entry.

All keys also cover the yangkey and yangson code (file sizes and mtimes), so an upgrade never
loads a stale pickle. Location: ``$YANGKEY_SCHEMA_CACHE``, else ``$YANGKEY_CACHE/schema``,
else ``$XDG_CACHE_HOME/yangkey/schema`` or ``~/.cache/yangkey/schema``;
``YANGKEY_SCHEMA_CACHE=off`` turns it off. An unreadable, corrupt or unwritable cache is
ignored: the work is done again, never a crash.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from yangkey.dirs import cache_root

T = TypeVar("T")

SCHEMA_CACHE_ENV = "YANGKEY_SCHEMA_CACHE"


def cache_dir() -> Path | None:
    """The schema cache: ``$YANGKEY_SCHEMA_CACHE`` (a directory, or ``off``), else
    ``<cache root>/schema``."""
    setting = os.environ.get(SCHEMA_CACHE_ENV, "")
    if setting.lower() in ("off", "0", "no", "false"):
        return None
    if setting:
        return Path(setting).expanduser()
    return cache_root() / "schema"


def digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _stat_entries(directory: str, suffix: str) -> list[tuple[str, int, int]]:
    try:
        entries = [e for e in os.scandir(directory) if e.name.endswith(suffix)]
        stats = [(e.name, e.stat()) for e in entries]
    except OSError:
        return [("<missing>", 0, 0)]
    return sorted((name, st.st_size, st.st_mtime_ns) for name, st in stats)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The yangkey and yangson sources: a changed class layout must not load old pickles."""
    parts: list[Any] = [sys.version]
    directories = [str(Path(__file__).parent)]
    spec = importlib.util.find_spec("yangson")
    if spec is not None and spec.origin:
        directories.append(str(Path(spec.origin).parent))
    for directory in directories:
        parts.append((directory, _stat_entries(directory, ".py")))
    return digest(*parts)


def dirs_fingerprint(search_path: Iterable[str]) -> str:
    """Names, sizes and mtimes of the ``.yang`` files on the search path (cheap: no reads)."""
    return digest(*((d, _stat_entries(d, ".yang")) for d in search_path))


def files_digest(paths: Iterable[str]) -> str:
    """SHA-256 over the contents of ``paths``; a missing file gives a digest that matches
    nothing stored."""
    hasher = hashlib.sha256()
    for path in paths:
        hasher.update(path.encode("utf-8", "surrogatepass") + b"\0")
        try:
            hasher.update(Path(path).read_bytes())
        except OSError:
            hasher.update(b"<unreadable>")
        hasher.update(b"\0")
    return hasher.hexdigest()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a schema is built, pickled or unpickled.

    Those create hundreds of thousands of long-lived objects and no garbage; every collection
    then walks all of them for nothing: with collection on, unpickling a Junos protocols model
    (22 MB) took 4.0 s of CPU, without it 0.5 s."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class DiskCache:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    @classmethod
    def default(cls) -> DiskCache:
        return cls(cache_dir())

    def path(self, kind: str, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{kind}-{key}.pickle"

    def load(self, kind: str, key: str) -> Any | None:
        path = self.path(kind, key)
        if path is None:
            return None
        try:
            with path.open("rb") as stream, gc_paused():
                return pickle.load(stream)
        except FileNotFoundError:
            return None
        except Exception:  # a corrupt, truncated or stale pickle: build again
            return None

    def store(self, kind: str, key: str, value: Any) -> None:
        path = self.path(kind, key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                dir=path.parent, prefix=f".{kind}-", delete=False
            ) as stream:
                temporary = Path(stream.name)
                try:
                    with gc_paused():
                        pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:
                    stream.close()
                    temporary.unlink(missing_ok=True)
                    raise
            # Atomic: concurrent runs see the old entry or the new one, never half of one.
            os.replace(temporary, path)
        except Exception:  # an unwritable directory or an unpicklable value: no cache entry
            pass

    def get_or_build(
        self,
        kind: str,
        key: str,
        build: Callable[[], T],
        *,
        valid: Callable[[Any], bool] = lambda _: True,
    ) -> T:
        found = self.load(kind, key)
        if found is not None and valid(found):
            return found  # type: ignore[no-any-return]
        value = build()
        self.store(kind, key, value)
        return value
