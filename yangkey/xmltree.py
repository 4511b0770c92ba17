"""XML elements -> the JSON-shaped tree of RFC 7951 (section 4: a member per child, namespaces
mapped to module names, repeated elements as arrays), so that key derivation has one code path
and the same data gives the same key in both encodings. Used by :mod:`yangkey.xmlnotifications`
for the data of a notification.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from lxml import etree

from yangkey.notification_model import Wanted
from yangkey.values import QNameText

_TrieLevel: TypeAlias = "dict[str, tuple[str, str, _TrieLevel | None]]"
"""A :data:`Wanted` in lxml tags: tag -> (member name, module, what to read below it; None:
everything). Member names depend on the parent's module only, which the trie fixes."""


class XmlConverter:
    """XML elements -> the JSON-shaped tree, with namespaces mapped to module names.

    One per namespace map (:func:`converter_for`), so the tag splits it caches serve every
    notification."""

    def __init__(self, ns_modules: Mapping[str, str]) -> None:
        self.ns_modules = ns_modules
        self.names: dict[tuple[str, str | None], tuple[str, str]] = {}
        """(tag, parent module) -> (member name, module): tags repeat, each is split once."""
        self.namespaces: dict[str, list[str]] = {}
        for ns, module in ns_modules.items():
            self.namespaces.setdefault(module, []).append(ns)
        self.tries: dict[int, tuple[Wanted, _TrieLevel, tuple[str, ...]]] = {}

    def module(self, ns: str) -> str:
        return self.ns_modules.get(ns, "{" + ns + "}")

    def leaf(self, element: etree._Element) -> str:
        text = element.text or ""
        prefix, colon, name = text.partition(":")
        if colon and prefix and " " not in text:
            ns = element.nsmap.get(prefix)
            if ns is not None and ns in self.ns_modules:
                return QNameText(text, f"{self.ns_modules[ns]}:{name}")
        return text

    def name(self, tag: str, parent_module: str | None) -> tuple[str, str]:
        ns, local = split_tag(tag)
        module = self.module(ns)
        named = (local if module == parent_module else f"{module}:{local}", module)
        if len(self.names) >= 100_000:
            self.names.clear()  # tags come from the input: the cache must not grow without end
        self.names[(tag, parent_module)] = named
        return named

    def members(
        self, children: Iterable[etree._Element], parent_module: str | None
    ) -> dict[str, Any]:
        result: dict[str, Any] = {}
        names = self.names
        for child in children:
            tag = child.tag
            if type(tag) is not str:
                continue  # the parser drops comments and PIs; parse_xml refuses entities
            member, module = names.get((tag, parent_module)) or self.name(tag, parent_module)
            # len() counts element children only, now that nothing else can be a child.
            value = self.members(child, module) if len(child) else self.leaf(child)
            if member in result:
                _again(result, member, value)
            else:
                result[member] = value
        return result

    def trie(self, wanted: Wanted) -> tuple[_TrieLevel, tuple[str, ...]]:
        """``wanted`` in tags, and every tag in it (what :meth:`pruned` asks lxml for)."""
        cached = self.tries.get(id(wanted))
        if cached is not None and cached[0] is wanted:
            return cached[1], cached[2]
        if len(self.tries) >= 1024:
            self.tries.clear()
        trie = self._trie(wanted, None)
        every: dict[str, None] = {}
        pending = [trie]
        while pending:
            level = pending.pop()
            every.update(dict.fromkeys(level))
            pending.extend(inner for _, _, inner in level.values() if inner is not None)
        # The Wanted kept alive: its id stays its own.
        self.tries[id(wanted)] = (wanted, trie, tuple(every))
        return trie, tuple(every)

    def _trie(self, wanted: Wanted, parent_module: str | None) -> _TrieLevel:
        level: _TrieLevel = {}
        for (module, local), inner in wanted.items():
            member = local if module == parent_module else f"{module}:{local}"
            for ns in self.namespaces.get(module, ()):
                below = None if inner is None else self._trie(inner, module)
                level[f"{{{ns}}}{local}"] = (member, module, below)
        return level

    def pruned(
        self, element: etree._Element, trie: _TrieLevel, every: tuple[str, ...]
    ) -> dict[str, Any]:
        """:meth:`members` of ``element`` along ``trie`` only. One lxml walk, filtered by tag
        in C, yields the elements of a tag the trie names, in document order; those whose
        parent is not on the trie are passed over. The members no walker reads never become
        Python objects. An element with element children is a dict and one without is text,
        whatever is left out: the walkers' type checks see what the full conversion gives.
        With ``every`` empty the walk yields every element, with the same result: cheaper for
        a few elements than setting up the filter."""
        root: dict[str, Any] = {}
        if not trie:
            return root
        # parent element -> (its dict, its trie level)
        levels: dict[etree._Element, tuple[dict[str, Any], _TrieLevel]] = {element: (root, trie)}
        for child in element.iter(*every):
            parent = levels.get(child.getparent())  # type: ignore[arg-type]
            if parent is None:
                continue
            result, below = parent
            spec = below.get(child.tag)
            if spec is None:
                continue
            member, module, inner = spec
            value: Any
            if len(child):
                if inner is None:
                    value = self.members(child, module)
                else:
                    value = {}
                    levels[child] = (value, inner)
            else:
                value = child.text or ""
                if ":" in value:
                    value = self.leaf(child)
            if member in result:
                _again(result, member, value)
            else:
                result[member] = value
        return root


def _again(result: dict[str, Any], member: str, value: Any) -> None:
    """``value`` for a member already in ``result``: an element repeated (a list's entries) is
    an array. The values are dicts and strings, never lists: a list there is that array."""
    seen = result[member]
    if type(seen) is list:
        seen.append(value)
    else:
        result[member] = [seen, value]


_CONVERTERS: dict[int, tuple[Mapping[str, str], XmlConverter]] = {}


def converter_for(ns_modules: Mapping[str, str]) -> XmlConverter:
    """The converter of a namespace map (a schema index's, built once and never changed)."""
    cached = _CONVERTERS.get(id(ns_modules))
    if cached is not None and cached[0] is ns_modules:
        return cached[1]
    if len(_CONVERTERS) >= 64:
        _CONVERTERS.clear()
    converter = XmlConverter(ns_modules)
    _CONVERTERS[id(ns_modules)] = (ns_modules, converter)
    return converter


def split_tag(tag: Any) -> tuple[str, str]:
    """``{namespace}local`` -> (namespace, local); string ops, as etree.QName is slow."""
    if tag[0] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag
