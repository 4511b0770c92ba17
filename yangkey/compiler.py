"""Compile a subscription: the one entry point for Phases 1 and 2 (draft section 3.1.2) that
every caller uses: ``yangkey compile``/``key``/``keys``, the catalog (the subscriptions file,
learned subscriptions, the shared catalog's records) and the ClickHouse typed tables.

:func:`compile_filter` goes through the on-disk cache (:mod:`yangkey.schema_cache`): a one-shot
``yangkey key`` with a warm cache loads the compiled subscription and never imports yangson, and
a subscription a producer learns costs what the CLI's did. An entry is keyed by everything that
changes the result (the filter, its options, the schema's search path, its file listing and
features, an explicit library file's bytes, the yangkey and yangson code) and stored with the
content hashes of the modules it was compiled from, checked again on load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yangkey.compiled import CompiledSubscription, KeylessPolicy
from yangkey.schema import SchemaContext
from yangkey.schema_cache import DiskCache, code_fingerprint, digest, dirs_fingerprint, files_digest
from yangkey.templates import compile_subscription


def compile_filter(
    filter_text: str,
    schema: SchemaContext,
    *,
    subtree: bool = False,
    namespaces: Mapping[str, str] | None = None,
    keyless: KeylessPolicy = "reject",
    source: str = "subscription",
    library_file: str | Path | None = None,
) -> CompiledSubscription:
    """:func:`yangkey.templates.compile_subscription` of ``filter_text`` against ``schema`` (or,
    with ``library_file``, against that YANG library over ``schema``'s search path), from the
    disk cache when an entry is current."""

    def build() -> tuple[CompiledSubscription, SchemaContext]:
        used = schema
        if library_file is not None:
            used = SchemaContext(schema.search_path, dict(schema.features)).with_library(
                library_file
            )
        compiled = compile_subscription(
            filter_text,
            used,
            subtree=subtree,
            namespaces=namespaces,
            keyless=keyless,
            source=source,
        )
        return compiled, used

    library_bytes: bytes | None = None
    if library_file is not None:
        try:
            library_bytes = Path(library_file).read_bytes()
        except OSError:
            return build()[0]  # with_library reports it
    request = (
        filter_text,
        subtree,
        source,
        sorted((namespaces or {}).items()),
        keyless,
        library_bytes,
    )
    return _cached(schema, request, build)


def _cached(
    schema: SchemaContext,
    request: tuple[Any, ...],
    build: Callable[[], tuple[CompiledSubscription, SchemaContext]],
) -> CompiledSubscription:
    """The entry of ``request`` from the cache, or ``build()`` (which returns the compiled
    subscription with the schema context it was compiled against) stored with the content
    hashes of its modules."""
    cache = DiskCache.default()
    key = digest(
        code_fingerprint(),
        schema.search_path,
        dirs_fingerprint(schema.search_path),
        sorted(schema.features.items()),
        request,
    )
    found = cache.load("compiled", key)
    if found is not None and files_digest(found[1]) == found[2]:
        return found[0]  # type: ignore[no-any-return]
    compiled, used = build()
    files = used.library_files(compiled.modules)
    cache.store("compiled", key, (compiled, files, files_digest(files)))
    return compiled
