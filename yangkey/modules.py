"""YANG modules on disk: what a ``.yang`` file's header says (:class:`ModuleInfo`), the module
search path, and the index of every module on it (:class:`ModuleIndex`).

The search path is, in order: directories given by the caller (``--yang-dir``), the
directories in ``$YANGKEY_YANG_PATH`` (``os.pathsep`` separated), and the IETF/IANA modules that
the ``pyang`` package ships, so that IETF subscriptions work out of the box. Only module headers
are read here (RFC 7950 section 7.1: name, namespace, prefix, revision, imports, includes); the
YANG library over them is :mod:`yangkey.library`'s, the schema :mod:`yangkey.schema`'s.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from yangkey.errors import SchemaError

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

    def __init__(self, modules: Iterable[ModuleInfo], search_path: tuple[str, ...] = ()) -> None:
        """The index of ``modules`` (the first of a name wins); ``search_path`` is where they
        were found, for error messages and the caches."""
        self.search_path = search_path
        self.modules: dict[str, ModuleInfo] = {}
        for info in modules:
            self.modules.setdefault(info.name, info)
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

    @classmethod
    def from_dirs(cls, search_path: tuple[str, ...]) -> ModuleIndex:
        """Every module in the ``.yang`` files of ``search_path``'s directories: the first
        directory that has a module wins, and in one directory its newest revision."""
        return cls(_read_dirs(search_path), search_path)

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


def _read_dirs(search_path: tuple[str, ...]) -> Iterator[ModuleInfo]:
    for directory in search_path:
        base = Path(directory)
        if not base.is_dir():
            raise SchemaError(f"YANG directory {directory!r} does not exist")
        # Newest revision first when several files carry the same module.
        for path in sorted(base.glob("*.yang"), reverse=True):
            info = read_module_info(path)
            if info is not None:
                yield info
