"""YANG schema context over yangson: the modules of a search path (:mod:`yangkey.modules`),
their YANG library, the data model built from it, schema-node lookup.

yangson needs a YANG library (RFC 8525 / RFC 7895) naming every module. Unless one is given,
:class:`SchemaContext` builds it from the modules a subscription needs: the modules named in the
subscription and everything they import or include (transitively); the modules whose data nodes
they reference are implemented (:mod:`yangkey.library`), the rest import-only. Every feature is
enabled (a device may stream any of them) unless ``features`` names a module's features. Data
models are kept per module set in memory and on disk (:mod:`yangkey.schema_cache`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.errors import SchemaError, YangkeyError
from yangkey.library import apply_features, computed_library, read_library
from yangkey.modules import ModuleIndex, default_search_path
from yangkey.schema_build import BuiltModel, LeftOut, build, cut
from yangkey.schema_cache import (
    DiskCache,
    code_fingerprint,
    digest,
    dirs_fingerprint,
    files_digest,
)
from yangkey.schema_data import MODULES_STATE, UNDECIDED

if TYPE_CHECKING:
    from yangson import DataModel
    from yangson.exceptions import YangsonException
    from yangson.schemanode import SchemaNode


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
        self.index = _cached_index(search_path)
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
        return computed_library(self.index, sorted(set(modules)), self.features)

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
    return DiskCache.default().get_or_build(
        "index", key, lambda: ModuleIndex.from_dirs(search_path)
    )


@lru_cache(maxsize=32)
def _cached_context(
    search_path: tuple[str, ...], features: tuple[tuple[str, tuple[str, ...]], ...] = ()
) -> SchemaContext:
    return SchemaContext(search_path, dict(features))
