"""YANG library: which modules to implement, and explicit library files (RFC 8525 / RFC 7895).

A computed library implements the modules a subscription names and, transitively, every module
whose data nodes they reference: leafref ``path``, ``augment``, ``must``/``when`` and
``deviation`` arguments name nodes by prefix, and the target must exist in the schema (yangson
checks it). A module only imported for its types, identities or groupings stays import-only.
References inside ``grouping`` and ``typedef`` count even when the defining module is
import-only, because they land in the modules that use them (``if:interface-ref`` in
ietf-routing points into ietf-interfaces).

An explicit library file may be JSON or XML, RFC 8525 (``yang-library`` with module sets) or
RFC 7895 (``modules-state``); yangson reads RFC 7895 JSON only, so every form is converted.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.errors import InputError, SchemaError
from yangkey.modules import ModuleIndex, ModuleInfo
from yangkey.schema_data import MODULES_STATE, UNDECIDED, parse_file
from yangkey.xmlsafe import parse_xml

if TYPE_CHECKING:
    from yangson.statement import Statement

YANG_LIBRARY_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
YANG_LIBRARY = "ietf-yang-library:yang-library"

#: Statements whose argument names data nodes of other modules by prefix.
_REFERENCING = frozenset({"path", "augment", "must", "when", "deviation"})
#: Statements whose content is copied into the modules that use them.
_REUSABLE = frozenset({"grouping", "typedef"})
#: ``prefix:`` followed by a node name; quoted literals (identities in ``derived-from``) are
#: removed first so that they do not count as data node references.
_PREFIXED = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]*):(?=[A-Za-z_*])")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def parse_module(info: ModuleInfo) -> Statement:
    from yangson.exceptions import YangsonException  # noqa: PLC0415 - only when building

    try:
        return parse_file(info.path, info.name, info.revision or "")
    except (OSError, UnicodeDecodeError, YangsonException) as exc:
        raise SchemaError(f"cannot parse YANG module {info.name} ({info.path}): {exc}") from None


def _walk(statement: Statement, reusable: bool = False) -> Iterator[tuple[Statement, bool]]:
    for sub in statement.substatements:
        inside = reusable or sub.keyword in _REUSABLE
        yield sub, inside
        yield from _walk(sub, inside)


def prefix_map(statement: Statement, owner: str) -> dict[str, str]:
    """Prefix -> module name as seen from one module or submodule."""
    prefixes: dict[str, str] = {}
    own = statement.find1("prefix")
    if own is None:
        belongs = statement.find1("belongs-to")
        own = belongs.find1("prefix") if belongs is not None else None
    if own is not None and own.argument:
        prefixes[own.argument] = owner
    for imp in statement.find_all("import"):
        prefix = imp.find1("prefix")
        if prefix is not None and prefix.argument and imp.argument:
            prefixes[prefix.argument] = imp.argument
    return prefixes


def data_references(statement: Statement, owner: str) -> tuple[set[str], set[str]]:
    """(modules referenced anywhere, modules referenced from groupings and typedefs)."""
    prefixes = prefix_map(statement, owner)
    anywhere: set[str] = set()
    reusable: set[str] = set()
    for sub, inside in _walk(statement):
        if sub.keyword not in _REFERENCING or sub.prefix or not sub.argument:
            continue
        for prefix in _PREFIXED.findall(_QUOTED.sub("", sub.argument)):
            module = prefixes.get(prefix)
            if module is not None:
                anywhere.add(module)
                if inside:
                    reusable.add(module)
    return anywhere, reusable


class ReferenceIndex:
    """Per module (its submodules folded in): the modules whose data nodes it references."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._refs: dict[str, tuple[set[str], set[str]]] = {}

    def references(self, name: str) -> tuple[set[str], set[str]]:
        found = self._refs.get(name)
        if found is None:
            info = self.index.get(name)
            anywhere, reusable = data_references(parse_module(info), name)
            for sub in info.includes:
                sub_any, sub_reusable = data_references(parse_module(self.index.get(sub)), name)
                anywhere |= sub_any
                reusable |= sub_reusable
            found = self._refs[name] = (anywhere, reusable)
        return found

    def implemented(self, requested: Iterable[str], closure: Iterable[str]) -> list[str]:
        """The fixpoint: requested modules, plus every module of ``closure`` (the requested
        modules' imports, transitively) that an implemented module references anywhere or any
        module of the closure references from a grouping or typedef."""
        modules = [m for m in closure if self.index.get(m).kind == "module"]
        result = dict.fromkeys(requested)
        for name in modules:
            result.update(dict.fromkeys(sorted(self.references(name)[1])))
        queue = list(result)
        while queue:
            name = queue.pop()
            for target in sorted(self.references(name)[0]):
                if target not in result:
                    result[target] = None
                    queue.append(target)
        return [m for m in result if m in self.index.modules]


# --------------------------------------------------------------------------- explicit files

#: RFC 8525 / 7895 nodes that are lists or leaf-lists (XML gives one element per entry).
_ARRAYS = frozenset(
    {
        "module",
        "import-only-module",
        "submodule",
        "feature",
        "deviation",
        "location",
        "module-set",
        "schema",
        "datastore",
    }
)


def _xml_to_json(element: Any) -> Any:
    children = [c for c in element if isinstance(c.tag, str)]
    if not children:
        return (element.text or "").strip()
    result: dict[str, Any] = {}
    for child in children:
        name = child.tag.rpartition("}")[2]
        value = _xml_to_json(child)
        if name in _ARRAYS:
            result.setdefault(name, []).append(value)
        else:
            result[name] = value
    return result


def _load_document(raw: bytes, source: str) -> Any:
    text = raw.lstrip()
    if text.startswith(b"<"):
        root = parse_xml(raw, source)
        name = root.tag.rpartition("}")[2]
        namespace = root.tag[1:].partition("}")[0] if root.tag.startswith("{") else ""
        if namespace != YANG_LIBRARY_NS or name not in ("yang-library", "modules-state"):
            raise SchemaError(
                f"invalid YANG library: the XML root must be <yang-library> or <modules-state> "
                f"in namespace {YANG_LIBRARY_NS}, not <{name}>",
                source=source,
            )
        return {f"ietf-yang-library:{name}": _xml_to_json(root)}
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SchemaError(f"invalid YANG library: {exc}", source=source) from None


def _from_rfc8525(library: Any) -> list[dict[str, Any]]:
    """The module entries of an RFC 8525 library, as RFC 7895 ``modules-state`` entries.

    A server may have several module sets (one per datastore schema); the telemetry a
    subscription selects comes from one schema, so every module set is merged, and a module
    implemented in any set is implemented."""
    if not isinstance(library, dict) or not isinstance(library.get("module-set"), list):
        raise ValueError("yang-library has no module-set list")
    entries: dict[str, dict[str, Any]] = {}
    for module_set in library["module-set"]:
        for item in module_set.get("module", []):
            entry = {k: v for k, v in item.items() if k not in ("location", "deviation")}
            entry["conformance-type"] = "implement"
            entry.setdefault("revision", "")
            for sub in entry.get("submodule", []):
                sub.setdefault("revision", "")
            entries[item["name"]] = entry
        for item in module_set.get("import-only-module", []):
            if item["name"] not in entries:
                entry = {k: v for k, v in item.items() if k != "location"}
                entry["conformance-type"] = "import"
                entry.setdefault("revision", "")
                entries[item["name"]] = entry
    return list(entries.values())


def read_library(path: str | Path) -> dict[str, Any]:
    """An explicit library file (JSON or XML, RFC 8525 or RFC 7895) as RFC 7895 JSON."""
    path = Path(path)
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SchemaError(f"cannot read YANG library: {exc.strerror}", source=source) from None
    try:
        document = _load_document(raw, source)
    except InputError as exc:
        raise SchemaError(f"invalid YANG library: {exc.reason}", source=source) from None
    try:
        if isinstance(document, dict) and YANG_LIBRARY in document:
            modules = _from_rfc8525(document[YANG_LIBRARY])
            set_id = str(document[YANG_LIBRARY].get("content-id", "explicit"))
        elif isinstance(document, dict) and MODULES_STATE in document:
            state = document[MODULES_STATE]
            modules = state["module"]
            set_id = str(state.get("module-set-id", "explicit"))
        else:
            raise ValueError(f"neither {YANG_LIBRARY} nor {MODULES_STATE} at the top level")
        if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
            raise ValueError("the module list is not a list of modules")
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SchemaError(f"invalid YANG library: {detail}", source=source) from None
    return {MODULES_STATE: {"module-set-id": set_id, "module": modules}}


# --------------------------------------------------------------------------- features


def parse_feature_options(items: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``MODULE:F1,F2`` (repeatable; ``MODULE:`` turns every feature of MODULE off)."""
    result: dict[str, tuple[str, ...]] = {}
    for item in items:
        module, colon, names = item.partition(":")
        if not colon or not module.strip():
            raise SchemaError(
                f"{item!r}: expected MODULE:FEATURE,FEATURE (or MODULE: for none)",
                source="--features",
            )
        features = tuple(f.strip() for f in names.split(",") if f.strip())
        result[module.strip()] = (*result.get(module.strip(), ()), *features)
    return result


def apply_features(
    library: dict[str, Any], features: Mapping[str, tuple[str, ...]], index: ModuleIndex
) -> None:
    """Replace the feature lists of the named modules; unknown modules or features are errors,
    so that a typo does not silently turn a feature off."""
    if not features:
        return
    entries = {m.get("name"): m for m in library[MODULES_STATE]["module"]}
    for module, enabled in features.items():
        entry = entries.get(module)
        if entry is None:
            raise SchemaError(
                f"module {module!r} is not in the YANG library "
                f"(modules: {', '.join(sorted(str(n) for n in entries))})",
                source="features",
            )
        info = index.get(module)
        known = {*info.features, *(f for s in info.includes for f in index.get(s).features)}
        unknown = [f for f in enabled if f not in known]
        if unknown:
            raise SchemaError(
                f"module {module} has no feature {', '.join(repr(f) for f in unknown)} "
                f"(features: {', '.join(sorted(known)) or 'none'})",
                source="features",
            )
        entry["feature"] = list(dict.fromkeys(enabled))
        entry.pop(UNDECIDED, None)


_REFERENCES: weakref.WeakKeyDictionary[ModuleIndex, ReferenceIndex] = weakref.WeakKeyDictionary()


def references(index: ModuleIndex) -> ReferenceIndex:
    """The data-node references of ``index``'s modules, read once per index."""
    found = _REFERENCES.get(index)
    if found is None:
        found = _REFERENCES[index] = ReferenceIndex(index)
    return found


def computed_library(
    index: ModuleIndex, names: Iterable[str], features: Mapping[str, tuple[str, ...]] | None = None
) -> dict[str, Any]:
    """The computed YANG library (RFC 7895) for a subscription naming modules ``names``: their
    closure, the referenced ones implemented, every feature enabled unless ``features`` names
    a module's."""
    names = list(dict.fromkeys(names))
    closure = index.closure(names)
    implemented = set(references(index).implemented(names, [m.name for m in closure]))
    modules = [m for m in closure if m.kind == "module"]
    document = _library(index, modules, implemented)
    apply_features(document, features or {}, index)
    return document


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
