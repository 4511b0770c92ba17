"""JSON Schema documents and their ``$ref``s: local pointers, anchors, ``$id``s and the
documents a schema's references name (Confluent's ``references``, by name).

Used by the compatibility check (:mod:`yangkey.registry.jsoncompat`) and by the ``JSON`` type
to refuse a ``$ref`` that names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urljoin


@dataclass(frozen=True)
class Node:
    """A schema and the document its local ``$ref``s resolve in."""

    schema: Any
    doc: Any


@dataclass
class Scope:
    """A schema document and the documents its references name."""

    root: Any
    docs: Mapping[str, Any] = field(default_factory=dict)

    def node(self) -> Node:
        return Node(self.root, self.root)

    def resolve(self, ref: str, doc: Any) -> Node | None:
        target, _, anchor = ref.partition("#")
        if target:
            found = self._document(target, doc)
            if found is None:
                return None
            doc = found
        return fragment(doc, unquote(anchor))

    def _document(self, target: str, doc: Any) -> Any:
        if target in self.docs:
            return self.docs[target]
        base = doc.get("$id") if isinstance(doc, dict) else None
        absolute = urljoin(base, target) if isinstance(base, str) else target
        for name, candidate in self.docs.items():
            if absolute in (name, schema_id(candidate)) or target == schema_id(candidate):
                return candidate
        for candidate in (self.root, *self.docs.values()):
            for node in subschemas(candidate):
                if schema_id(node) in (target, absolute):
                    return node
        return None

    def unresolved(self) -> Iterator[str]:
        """``$ref``s that name nothing known (absolute URIs excepted: they may be fetched)."""
        for doc in (self.root, *self.docs.values()):
            for node in subschemas(doc):
                ref = node.get("$ref")
                absolute = isinstance(ref, str) and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", ref)
                if isinstance(ref, str) and not absolute and self.resolve(ref, doc) is None:
                    yield ref


def schema_id(node: Any) -> str | None:
    found = node.get("$id") if isinstance(node, dict) else None
    return found if isinstance(found, str) else None


DATA = frozenset(("enum", "const", "default", "examples"))
"""Keywords whose values are instances, not schemas: no ``$ref`` or ``$id`` in them counts."""


def subschemas(doc: Any) -> Iterator[dict[str, Any]]:
    pending = [doc]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            yield node
            pending.extend(v for k, v in node.items() if k not in DATA)
        elif isinstance(node, list):
            pending.extend(node)


def fragment(doc: Any, pointer: str) -> Node | None:
    """The node ``pointer`` (a URI fragment, decoded) names in ``doc``."""
    if pointer in ("", "/"):
        return Node(doc, doc)
    if not pointer.startswith("/"):  # a plain-name fragment: $anchor, or draft-07's "$id": "#x"
        for node in subschemas(doc):
            if node.get("$anchor") == pointer or node.get("$id") == f"#{pointer}":
                return Node(node, doc)
        return None
    node = doc
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return Node(node, doc)
