"""Why a node the modules define is not in the schema: a feature choice removed it.

Compiling a path through such a node says which ``if-feature`` is false, what makes it false
(the features ``--features``, ``features:`` or the YANG library decide) and the setting that
brings the node back (:mod:`yangkey.features` explains undecided features). The node is looked
for in the module's text (and its submodules'), then through the ``uses`` of a grouping it is
defined in: ``if-feature`` on a ``uses`` or on the ``augment`` around it applies to the
grouping's nodes (SR Linux guards whole sections that way).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yangkey.features import Atom, atoms, evaluate, parse
from yangkey.library import parse_module, prefix_map
from yangkey.schema_build import cut

if TYPE_CHECKING:
    from yangkey.modules import ModuleIndex


def why_removed(
    index: ModuleIndex,
    module: str,
    name: str,
    decided: Mapping[str, set[str] | None],
    *,
    explicit: bool,
) -> str | None:
    """Why ``module:name`` is not in the schema when a feature choice removed it: the false
    ``if-feature`` and the setting that brings the node back. ``decided`` maps each module of
    the library to its enabled features, or None when they are undecided."""
    # Nodes named ``name`` in ``module`` (or an augment in any module of the library).
    for candidate in [module, *(m for m in decided if m != module)]:
        if candidate not in index.modules:
            continue
        found = _false_if_feature(index, candidate, name, decided)
        if found is not None:
            return _feature_advice(*found, explicit=explicit)
    return None


_DATA_KEYWORDS = frozenset(
    {"container", "list", "leaf", "leaf-list", "choice", "case", "anydata", "anyxml"}
)


def _false_if_feature(
    index: ModuleIndex, module: str, name: str, decided: Mapping[str, set[str] | None]
) -> tuple[str, str, list[tuple[str, str, bool]]] | None:
    """(module, expression, [(owner, feature, on)]) of the first false if-feature above a node
    named ``name`` in ``module``."""
    info = index.get(module)
    for part in (info, *(index.get(s) for s in info.includes)):
        statement = parse_module(part)
        resolver = _Resolver(module, prefix_map(statement, module), decided)
        for node in _statements_named(statement, name):
            for current in _enclosing(node, statement):
                for condition in current.find_all("if-feature"):
                    expression = parse(condition.argument or "")
                    if evaluate(expression, resolver) is False:
                        named = [
                            (resolver.owner(a.prefix), a.name, resolver(a.prefix, a.name) is True)
                            for a in atoms(expression)
                        ]
                        return module, condition.argument or "", named
    return None


@dataclass(frozen=True)
class _Resolver:
    """Feature values as seen from one module's text (its prefixes)."""

    module: str
    prefixes: Mapping[str, str]
    decided: Mapping[str, set[str] | None]

    def owner(self, prefix: str | None) -> str:
        return self.prefixes.get(prefix, prefix) if prefix else self.module

    def __call__(self, prefix: str | None, feature: str) -> bool | None:
        enabled = self.decided.get(self.owner(prefix), set())
        return None if enabled is None else feature in enabled


def _enclosing(node: Any, top: Any, depth: int = 0) -> Iterator[Any]:
    """``node`` and the statements around it, through the ``uses`` of a grouping it is in (an
    ``if-feature`` on a ``uses`` or on the ``augment`` around it applies to the grouping's
    nodes)."""
    current = node
    while current is not None:
        yield current
        if current.keyword == "grouping" and depth < 8:
            for use in _statements_using(top, current.argument):
                yield from _enclosing(use, top, depth + 1)
        current = current.superstmt


def _statements_using(statement: Any, grouping: str) -> Iterator[Any]:
    for sub in statement.substatements:
        if sub.keyword == "uses" and (sub.argument or "").rpartition(":")[2] == grouping:
            yield sub
        yield from _statements_using(sub, grouping)


def _statements_named(statement: Any, name: str) -> Iterable[Any]:
    for sub in statement.substatements:
        if sub.keyword in _DATA_KEYWORDS and sub.argument == name:
            yield sub
        yield from _statements_named(sub, name)


def _feature_advice(
    module: str, expression: str, named: list[tuple[str, str, bool]], *, explicit: bool
) -> str:
    where = "the YANG library" if explicit else "--features / features:"
    if isinstance(parse(expression), Atom):
        owner, feature, _ = named[0]
        return (
            f"it is under if-feature {owner}:{feature}, which {where} does not enable (enable it "
            f"with --features {owner}:{feature}, or features: in the subscriptions file)"
        )
    states = ", ".join(f"{o}:{f} is {'on' if on else 'off'}" for o, f, on in named)
    owners = ", ".join(sorted({o for o, _, _ in named}))
    if explicit:
        remedy = (
            "the device does not have this node; --features MODULE:F1,F2 overrides the "
            "library's feature list"
        )
    else:
        remedy = (
            f"to bring it back, list the features of {owners} that the device has in "
            f"--features MODULE:F1,F2 (or features: in the subscriptions file), or leave "
            f"{owners} out of --features: undecided features keep every node some feature "
            "choice brings"
        )
    return (
        f'it is under if-feature "{cut(expression)}" (module {module}), which is false: '
        f"{states} ({where}); {remedy}"
    )
