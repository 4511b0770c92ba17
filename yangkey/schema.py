"""YANG schema context over yangson: module search path, YANG library, schema-node lookup.

The search path is, in order: directories given by the caller (``--yang-dir``), the
directories in ``$YANGKEY_YANG_PATH`` (``os.pathsep`` separated), and the IETF/IANA modules that
the ``pyang`` package ships, so that IETF subscriptions work out of the box.

yangson needs a YANG library (RFC 8525 / RFC 7895) naming every module. Unless one is given,
:class:`SchemaContext` builds it from the modules a subscription needs: the modules named in the
subscription, everything they import or include (transitively), with every feature enabled (a
device may stream any of them). Data models are cached per module set.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from yangson import DataModel
from yangson.exceptions import YangsonException
from yangson.schemanode import SchemaNode

from yangkey.errors import SchemaError

_HEADER = re.compile(r"^\s*(module|submodule)\s+([A-Za-z_][\w.-]*)", re.MULTILINE)
_NAMESPACE = re.compile(r"\bnamespace\s+[\"']?([^\"';\s]+)[\"']?\s*;")
_PREFIX = re.compile(r"^\s*prefix\s+[\"']?([A-Za-z_][\w.-]*)[\"']?\s*;", re.MULTILINE)
_REVISION = re.compile(r"\brevision\s+[\"']?(\d{4}-\d{2}-\d{2})[\"']?\s*[{;]")
_IMPORT = re.compile(r"\bimport\s+([A-Za-z_][\w.-]*)\s*\{")
_INCLUDE = re.compile(r"\binclude\s+([A-Za-z_][\w.-]*)\s*[{;]")
_FEATURE = re.compile(r"^\s*feature\s+([A-Za-z_][\w.-]*)\s*[{;]", re.MULTILINE)
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"")


@dataclass(frozen=True)
class ModuleInfo:
    """What the header of one ``.yang`` file says; enough to build a YANG library."""

    name: str
    kind: str
    path: Path
    revision: str | None
    namespace: str | None
    prefix: str | None
    imports: tuple[str, ...]
    includes: tuple[str, ...]
    features: tuple[str, ...]


def _strip_comments(text: str) -> str:
    # Comments may hide statements; strings may contain "//" (URLs), so keep strings intact.
    out: list[str] = []
    pos = 0
    for match in re.finditer(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|//[^\n]*|/\*.*?\*/", text, re.DOTALL):
        out.append(text[pos : match.start()])
        token = match.group(0)
        out.append(token if token[0] in "\"'" else " ")
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def read_module_info(path: Path) -> ModuleInfo | None:
    try:
        text = _strip_comments(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    header = _HEADER.search(text)
    if header is None:
        return None
    # Only the part before the first revision/description body matters for prefix/namespace,
    # but imports carry their own "prefix" statements: take the first prefix after the header.
    namespace = _NAMESPACE.search(text)
    prefix = _PREFIX.search(text, header.end())
    revision = _REVISION.search(text)
    body_without_strings = _STRING.sub('""', text)
    return ModuleInfo(
        name=header.group(2),
        kind=header.group(1),
        path=path,
        revision=revision.group(1) if revision else None,
        namespace=namespace.group(1) if namespace else None,
        prefix=prefix.group(1) if prefix else None,
        imports=tuple(dict.fromkeys(_IMPORT.findall(body_without_strings))),
        includes=tuple(dict.fromkeys(_INCLUDE.findall(body_without_strings))),
        features=tuple(dict.fromkeys(_FEATURE.findall(body_without_strings))),
    )


def pyang_module_dirs() -> tuple[str, ...]:
    """The IETF and IANA module directories that the pyang package installs, if present."""
    candidates = [Path(sys.prefix) / "share" / "yang" / "modules"]
    try:
        import pyang  # noqa: PLC0415 - optional, located only to find its data files

        candidates.append(Path(pyang.__file__).resolve().parents[4] / "share/yang/modules")
    except ImportError:
        pass
    found: list[str] = []
    for base in candidates:
        for sub in ("ietf", "iana"):
            directory = base / sub
            if directory.is_dir() and str(directory) not in found:
                found.append(str(directory))
    return tuple(found)


def default_search_path(extra: Iterable[str] = ()) -> tuple[str, ...]:
    env = tuple(p for p in os.environ.get("YANGKEY_YANG_PATH", "").split(os.pathsep) if p)
    path: list[str] = []
    for directory in (*extra, *env, *pyang_module_dirs()):
        if directory not in path:
            path.append(directory)
    return tuple(path)


class ModuleIndex:
    """Every module found on a search path; the first directory that has a module wins."""

    def __init__(self, search_path: tuple[str, ...]) -> None:
        self.search_path = search_path
        self.modules: dict[str, ModuleInfo] = {}
        for directory in search_path:
            base = Path(directory)
            if not base.is_dir():
                raise SchemaError(f"YANG directory {directory!r} does not exist")
            # Newest revision first when several files carry the same module.
            for path in sorted(base.glob("*.yang"), reverse=True):
                info = read_module_info(path)
                if info is not None and info.name not in self.modules:
                    self.modules[info.name] = info
        self.by_namespace = {
            m.namespace: m.name for m in self.modules.values() if m.namespace and m.kind == "module"
        }
        by_prefix: dict[str, list[str]] = {}
        for module in self.modules.values():
            if module.prefix and module.kind == "module":
                by_prefix.setdefault(module.prefix, []).append(module.name)
        self.by_prefix = by_prefix

    def get(self, name: str) -> ModuleInfo:
        try:
            return self.modules[name]
        except KeyError:
            raise SchemaError(
                f"YANG module {name!r} not found in the search path "
                f"({', '.join(self.search_path) or 'empty'}); add its directory with --yang-dir"
            ) from None

    def module_for_namespace(self, namespace: str) -> str:
        try:
            return self.by_namespace[namespace]
        except KeyError:
            raise SchemaError(
                f"unknown namespace {namespace!r}: no YANG module in the search path implements it"
            ) from None

    def closure(self, names: Iterable[str]) -> tuple[list[ModuleInfo], list[ModuleInfo]]:
        """(implemented modules, import-only modules) for ``names`` and their imports."""
        implemented = [self.get(name) for name in dict.fromkeys(names)]
        seen = {m.name for m in implemented}
        imported: list[ModuleInfo] = []
        queue = list(implemented)
        while queue:
            module = queue.pop()
            for dependency in (*module.imports, *module.includes):
                if dependency in seen:
                    continue
                seen.add(dependency)
                info = self.get(dependency)
                if info.kind == "module":
                    imported.append(info)
                queue.append(info)
        return implemented, imported


def _library(index: ModuleIndex, implemented: list[ModuleInfo], imported: list[ModuleInfo]) -> str:
    def entry(info: ModuleInfo, conformance: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            "name": info.name,
            "revision": info.revision or "",
            "namespace": info.namespace,
            "conformance-type": conformance,
        }
        submodules = [index.get(name) for name in info.includes]
        if submodules:
            item["submodule"] = [{"name": s.name, "revision": s.revision or ""} for s in submodules]
        if conformance == "implement":
            features = [*info.features, *(f for s in submodules for f in s.features)]
            if features:
                item["feature"] = features
        return item

    modules = [entry(m, "implement") for m in implemented]
    modules += [entry(m, "import") for m in imported]
    content_id = hashlib.sha256(json.dumps(modules, sort_keys=True).encode()).hexdigest()[:16]
    return json.dumps(
        {"ietf-yang-library:modules-state": {"module-set-id": content_id, "module": modules}}
    )


class SchemaContext:
    """A module search path plus lazily built yangson data models, one per module set."""

    def __init__(self, search_path: tuple[str, ...]) -> None:
        self.search_path = search_path
        self.index = ModuleIndex(search_path)
        self._models: dict[frozenset[str], DataModel] = {}
        self._explicit: DataModel | None = None

    @classmethod
    def cached(cls, extra_dirs: Iterable[str] = ()) -> SchemaContext:
        return _cached_context(default_search_path(extra_dirs))

    def with_library(self, library_path: str | Path) -> SchemaContext:
        """Use an explicit RFC 8525 / RFC 7895 library file instead of a computed module set."""
        path = Path(library_path)
        try:
            text = path.read_text(encoding="utf-8")
            self._explicit = DataModel(text, [*self.search_path])
        except OSError as exc:
            reason = f"cannot read YANG library: {exc.strerror}"
            raise SchemaError(reason, source=str(path)) from None
        except (YangsonException, ValueError, TypeError, KeyError, AttributeError) as exc:
            # A library of the wrong shape (an array, "module": 5) surfaces as any of these.
            raise SchemaError(f"invalid YANG library: {exc}", source=str(path)) from None
        return self

    def data_model(self, modules: Iterable[str]) -> DataModel:
        if self._explicit is not None:
            return self._explicit
        key = frozenset(modules)
        model = self._models.get(key)
        if model is None:
            implemented, imported = self.index.closure(sorted(key))
            library = _library(self.index, implemented, imported)
            try:
                model = DataModel(library, [*self.search_path])
            except (YangsonException, ValueError, KeyError) as exc:
                names = ", ".join(sorted(key))
                raise SchemaError(f"cannot build a schema from modules {names}: {exc}") from None
            self._models[key] = model
        return model

    def module_prefix(self, module: str) -> str:
        """The module's YANG ``prefix`` statement, used in topic names
        (docs/design.md#topic-names)."""
        prefix = self.index.get(module).prefix
        if prefix is None:
            raise SchemaError(f"YANG module {module!r} has no prefix statement")
        return prefix

    def schema_root(self, modules: Iterable[str]) -> SchemaNode:
        return self.data_model(modules).schema


@lru_cache(maxsize=32)
def _cached_context(search_path: tuple[str, ...]) -> SchemaContext:
    return SchemaContext(search_path)
