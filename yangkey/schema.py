"""YANG schema context over yangson: module search path, YANG library, schema-node lookup.

The search path is, in order: directories given by the caller (``--yang-dir``), the
directories in ``$YANGKEY_YANG_PATH`` (``os.pathsep`` separated), and the IETF/IANA modules that
the ``pyang`` package ships, so that IETF subscriptions work out of the box.

yangson needs a YANG library (RFC 8525 / RFC 7895) naming every module. Unless one is given,
:class:`SchemaContext` builds it from the modules a subscription needs: the modules named in the
subscription and everything they import or include (transitively); the modules whose data nodes
they reference are implemented (:mod:`yangkey.library`), the rest import-only. Every feature is
enabled (a device may stream any of them) unless ``features`` names a module's features. Data
models are kept per module set in memory and on disk (:mod:`yangkey.schema_cache`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.errors import SchemaError, YangkeyError
from yangkey.library import (
    MODULES_STATE,
    ReferenceIndex,
    apply_features,
    read_library,
)
from yangkey.schema_build import UNDECIDED, BuiltModel, LeftOut, build, cut
from yangkey.schema_cache import (
    DiskCache,
    code_fingerprint,
    digest,
    dirs_fingerprint,
    files_digest,
)

if TYPE_CHECKING:
    from yangson import DataModel
    from yangson.exceptions import YangsonException
    from yangson.schemanode import SchemaNode

_HEADER = re.compile(r"^\s*(module|submodule)\s+([A-Za-z_][\w.-]*)", re.MULTILINE)
_NAMESPACE = re.compile(r"\bnamespace\s+[\"']?([^\"';\s]+)[\"']?\s*;")
_PREFIX = re.compile(r"(?:^|[;{])\s*prefix\s+[\"']?([A-Za-z_][\w.-]*)[\"']?\s*;", re.MULTILINE)
_REVISION = re.compile(r"\brevision\s+[\"']?(\d{4}-\d{2}-\d{2})[\"']?\s*[{;]")
_IMPORT = re.compile(r"\bimport\s+([A-Za-z_][\w.-]*)\s*\{")
_INCLUDE = re.compile(r"\binclude\s+([A-Za-z_][\w.-]*)\s*[{;]")
_FEATURE = re.compile(r"^\s*feature\s+([A-Za-z_][\w.-]*)\s*[{;]", re.MULTILINE)
_IDENTITY = re.compile(r"^\s*identity\s+[A-Za-z_]", re.MULTILINE)
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
    identities: bool = False
    """Whether it defines an identity (identityref values may name it by its prefix)."""

    @cached_property
    def features(self) -> tuple[str, ...]:
        """The ``feature`` statements of the file (read when a library needs them: the body of
        a vendor module runs to megabytes, the header to a few kB)."""
        try:
            text = _strip_comments(self.path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return ()
        return tuple(dict.fromkeys(_FEATURE.findall(_STRING.sub('""', text))))


_LEXEME = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|//[^\n]*|/\*.*?\*/", re.DOTALL)
_REVISION_KEYWORD = re.compile(r"(?:^|[;{}])\s*revision\s")


def _strip_comments(text: str, *, header: bool = False) -> str:
    """``text`` without comments (strings may contain "//": they are kept intact).

    ``header``: stop after the first ``revision`` statement. The module header, its imports and
    includes come before it (RFC 7950 section 7.1.1 orders them so); the body, which is what
    makes a vendor file megabytes long, after it."""
    out: list[str] = []
    pos = 0
    revision_seen = False
    for match in _LEXEME.finditer(text):
        segment = text[pos : match.start()]
        out.append(segment)
        if revision_seen:
            return "".join(out)  # the revision date (a string or in the segment before) is in
        revision_seen = header and _REVISION_KEYWORD.search(segment) is not None
        token = match.group(0)
        out.append(token if token[0] in "\"'" else " ")
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _outside_strings(pattern: re.Pattern[str], text: str, start: int = 0) -> re.Match[str] | None:
    """The first match of ``pattern`` that is not inside a quoted string (a description may
    say "revision 2000-01-01 {")."""
    alternatives = rf"{_STRING.pattern}|'[^']*'|(?:{pattern.pattern})"
    for match in re.finditer(alternatives, text[start:], pattern.flags):
        if match.lastindex:
            return match
    return None


def read_module_info(path: Path) -> ModuleInfo | None:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    text = _strip_comments(raw, header=True)
    header = _HEADER.search(text)
    if header is None:
        return None
    # Imports carry their own "prefix" statements: take the first prefix after the header.
    namespace = _outside_strings(_NAMESPACE, text)
    prefix = _outside_strings(_PREFIX, text, header.end())
    revision = _outside_strings(_REVISION, text)
    without_strings = _STRING.sub('""', text)
    return ModuleInfo(
        name=header.group(2),
        kind=header.group(1),
        path=path,
        revision=revision.group(1) if revision else None,
        namespace=namespace.group(1) if namespace else None,
        prefix=prefix.group(1) if prefix else None,
        imports=tuple(dict.fromkeys(_IMPORT.findall(without_strings))),
        includes=tuple(dict.fromkeys(_INCLUDE.findall(without_strings))),
        # The whole text, comments and strings included: one regex search, where stripping
        # them costs a Python loop over a vendor module's megabytes. A description line that
        # starts with "identity x" only offers the module's prefix for identityref values.
        identities=_IDENTITY.search(raw) is not None,
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
        identities = {
            module.name
            for module in self.modules.values()
            if module.identities
            or any(self.modules[s].identities for s in module.includes if s in self.modules)
        }
        self.unique_prefixes = {
            prefix: owners[0]
            for prefix, owners in by_prefix.items()
            if len(owners) == 1 and prefix not in self.modules and owners[0] in identities
        }
        """YANG prefix -> module, for the prefixes one module defining identities on the search
        path owns (and that are no module name): how a device's ``ianaift:gpon`` is read."""
        self._references: ReferenceIndex | None = None

    @classmethod
    def load(cls, search_path: tuple[str, ...]) -> ModuleIndex:
        """The index of ``search_path``, from the on-disk cache while no file there changed."""
        return _cached_index(search_path)

    def files(self, names: Iterable[str]) -> list[str]:
        """The files of modules ``names`` and their submodules (those on the search path)."""
        paths: list[str] = []
        for name in names:
            info = self.modules.get(name)
            if info is not None:
                paths.append(str(info.path))
                paths += [str(self.modules[s].path) for s in info.includes if s in self.modules]
        return paths

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

    def closure(self, names: Iterable[str]) -> list[ModuleInfo]:
        """``names`` and everything they import or include, transitively."""
        found = {name: self.get(name) for name in dict.fromkeys(names)}
        queue = list(found.values())
        while queue:
            module = queue.pop()
            for dependency in (*module.imports, *module.includes):
                if dependency not in found:
                    found[dependency] = info = self.get(dependency)
                    queue.append(info)
        return list(found.values())

    def library(
        self, names: Iterable[str], features: Mapping[str, tuple[str, ...]] | None = None
    ) -> dict[str, Any]:
        """The computed YANG library (RFC 7895) for a subscription naming modules ``names``."""
        names = list(dict.fromkeys(names))
        closure = self.closure(names)
        implemented = set(self.references().implemented(names, [m.name for m in closure]))
        modules = [m for m in closure if m.kind == "module"]
        document = _library(self, modules, implemented)
        apply_features(document, features or {}, self)
        return document

    def references(self) -> ReferenceIndex:
        if self._references is None:
            self._references = ReferenceIndex(self)
        return self._references


def _library(
    index: ModuleIndex, modules: list[ModuleInfo], implemented: set[str]
) -> dict[str, Any]:
    def entry(info: ModuleInfo) -> dict[str, Any]:
        item: dict[str, Any] = {
            "name": info.name,
            "revision": info.revision or "",
            "namespace": info.namespace,
            "conformance-type": "implement" if info.name in implemented else "import",
            # No device said which features it has (yangkey.features): --features decides.
            UNDECIDED: True,
        }
        submodules = [index.get(name) for name in info.includes]
        if submodules:
            item["submodule"] = [{"name": s.name, "revision": s.revision or ""} for s in submodules]
        # Import-only modules list their features too: their groupings may carry if-feature.
        features = [*info.features, *(f for s in submodules for f in s.features)]
        if features:
            item["feature"] = features
        return item

    # Implemented first, then import-only, each in closure order: a stable document.
    ordered = [m for m in modules if m.name in implemented]
    ordered += [m for m in modules if m.name not in implemented]
    entries = [entry(m) for m in ordered]
    content_id = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:16]
    return {MODULES_STATE: {"module-set-id": content_id, "module": entries}}


def _missing_modules(exc: YangsonException, library: dict[str, Any]) -> list[str]:
    """Modules that a yangson schema error points into and that the library does not
    implement: a leafref/augment/must target in an import-only or absent module."""
    implemented = {
        m.get("name")
        for m in library[MODULES_STATE]["module"]
        if m.get("conformance-type") == "implement"
    }
    named = re.findall(r"([A-Za-z_][\w.-]*):", str(exc))
    return [m for m in dict.fromkeys(named) if m not in implemented]


def build_data_model(
    library: dict[str, Any], search_path: tuple[str, ...], what: str
) -> BuiltModel:
    """yangson's data model for ``library`` (:mod:`yangkey.schema_build`); any failure is one
    :class:`SchemaError`."""
    # yangson is imported only to build a schema: a cached compilation needs none of it.
    from yangson.exceptions import (  # noqa: PLC0415
        InvalidLeafrefPath,
        ModuleNotImplemented,
        NonexistentSchemaNode,
        YangsonException,
    )

    try:
        return build(library, search_path)
    except (YangsonException, ValueError, TypeError, KeyError, AttributeError) as exc:
        # A library of the wrong shape (an array, "module": 5) surfaces as any of these.
        missing = (
            _missing_modules(exc, library)
            if isinstance(exc, (InvalidLeafrefPath, NonexistentSchemaNode, ModuleNotImplemented))
            else []
        )
        detail = cut(f"{type(exc).__name__}: {exc}", 400)
        if missing:
            raise SchemaError(
                f"{what}: module {', '.join(missing)} is not implemented in the YANG library but "
                f"its data nodes are referenced ({detail}); list it with conformance-type "
                "implement"
            ) from None
        raise SchemaError(f"{what}: {detail}") from None
    except SchemaError as exc:
        raise SchemaError(f"{what}: {exc.reason}") from None


class SchemaContext:
    """A module search path plus lazily built yangson data models, one per module set.

    ``features`` maps a module to the features to enable (``--features``); modules not named
    have every feature on.
    """

    def __init__(
        self,
        search_path: tuple[str, ...],
        features: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.search_path = search_path
        self.index = ModuleIndex.load(search_path)
        self.features: dict[str, tuple[str, ...]] = dict(features or {})
        self._models: dict[frozenset[str], BuiltModel] = {}
        self._explicit: BuiltModel | None = None
        self.explicit_library: dict[str, Any] | None = None

    @classmethod
    def cached(
        cls,
        extra_dirs: Iterable[str] = (),
        features: Mapping[str, tuple[str, ...]] | None = None,
    ) -> SchemaContext:
        frozen = tuple(sorted((features or {}).items()))
        return _cached_context(default_search_path(extra_dirs), frozen)

    def with_library(self, library_path: str | Path) -> SchemaContext:
        """Use an explicit RFC 8525 / RFC 7895 library file (JSON or XML) as given, instead of
        a computed module set; ``features`` still override its feature lists."""
        library = read_library(library_path)
        try:
            apply_features(library, self.features, self.index)
        except YangkeyError as exc:
            raise exc.with_source(str(library_path)) from None
        what = "invalid YANG library"
        try:
            self._explicit = build_data_model(library, self.search_path, what)
        except SchemaError as exc:
            raise exc.with_source(str(library_path)) from None
        self.explicit_library = library
        return self

    def library(self, modules: Iterable[str]) -> dict[str, Any]:
        """The YANG library in use for a subscription naming ``modules``."""
        if self.explicit_library is not None:
            return self.explicit_library
        return self.index.library(sorted(set(modules)), self.features)

    def built(self, modules: Iterable[str]) -> BuiltModel:
        """The data model for a subscription naming ``modules``, with what its build left out."""
        if self._explicit is not None:
            return self._explicit
        key = frozenset(modules)
        built = self._models.get(key)
        if built is None:
            what = f"cannot build a schema from modules {', '.join(sorted(key))}"
            library = self.library(key)
            built = self._models[key] = DiskCache.default().get_or_build(
                "model",
                self.library_key(library),
                lambda: build_data_model(library, self.search_path, what),
                valid=lambda found: isinstance(found, BuiltModel),
            )
        return built

    def data_model(self, modules: Iterable[str]) -> DataModel:
        return self.built(modules).model

    def left_out(self, modules: Iterable[str]) -> tuple[LeftOut, ...]:
        """The statements the schema build for ``modules`` left out."""
        return self.built(modules).left_out

    def library_files(self, modules: Iterable[str]) -> list[str]:
        """The files of every module (and submodule) in the library for ``modules``."""
        library = self.library(modules)
        return self.index.files(m.get("name", "") for m in library[MODULES_STATE]["module"])

    def library_key(self, library: dict[str, Any]) -> str:
        """A digest of what a schema built from ``library`` depends on: the library, the
        files on the search path, and the content of every module the library lists."""
        names = [m.get("name", "") for m in library[MODULES_STATE]["module"]]
        return digest(
            code_fingerprint(),
            self.search_path,
            dirs_fingerprint(self.search_path),
            json.dumps(library, sort_keys=True),
            files_digest(self.index.files(names)),
        )

    def module_prefix(self, module: str) -> str:
        """The module's YANG ``prefix`` statement, used in topic names
        (docs/design.md#topic-names)."""
        prefix = self.index.get(module).prefix
        if prefix is None:
            raise SchemaError(f"YANG module {module!r} has no prefix statement")
        return prefix

    def schema_root(self, modules: Iterable[str]) -> SchemaNode:
        return self.data_model(modules).schema

    def why_missing(self, module: str, name: str, modules: Iterable[str]) -> str | None:
        """Why ``module:name`` is not in the schema, when a feature choice is the cause: the
        ``if-feature`` that is false, and the setting that brings the node back."""
        if module not in self.index.modules:
            return None
        library = self.library(modules)
        decided: dict[str, set[str] | None] = {
            item["name"]: None if item.get(UNDECIDED) else set(item.get("feature", []))
            for item in library[MODULES_STATE]["module"]
        }
        from yangkey.missing import why_removed  # noqa: PLC0415 - only for an error message

        return why_removed(
            self.index, module, name, decided, explicit=self.explicit_library is not None
        )


@lru_cache(maxsize=32)
def _cached_index(search_path: tuple[str, ...]) -> ModuleIndex:
    key = digest(code_fingerprint(), search_path, dirs_fingerprint(search_path))
    return DiskCache.default().get_or_build("index", key, lambda: ModuleIndex(search_path))


@lru_cache(maxsize=32)
def _cached_context(
    search_path: tuple[str, ...], features: tuple[tuple[str, tuple[str, ...]], ...] = ()
) -> SchemaContext:
    return SchemaContext(search_path, dict(features))
