"""Phase 2: subscription XPath + YANG schema -> one compiled branch per union member.

Draft section 3.1.2.2. Each branch is resolved to its schema node (yangson); the walk from root
to target skips choice and case and writes the module name on the first step and wherever the
module changes (RFC 7951 style). Every list on the path gets one predicate per key leaf in
``key`` statement order: pinned when the subscription gives a literal, otherwise an open
``'%s'`` placeholder with an extraction spec. Predicates on non-key leaves stay as Phase 3 data
filters and are reported as warnings.

The compiled branch (:mod:`yangkey.compiled`) also carries everything Phase 3 needs (JSON
member names, canonicalizers, rendering pieces) so that no schema lookup happens per
notification.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from yangkey.compiled import (
    Branch,
    CompiledStep,
    CompiledSubscription,
    DataFilter,
    KeylessPolicy,
    KeySlot,
    StepKind,
    TargetKind,
)
from yangkey.errors import FilterError, Position, SchemaError, YangkeyError
from yangkey.modules import ModuleIndex
from yangkey.schema import SchemaContext
from yangkey.subtree import normalize_subtree
from yangkey.values import Canon, canon_string, literal_canon
from yangkey.xpath import LocationPath, Predicate, Step, absolute_union, parse_union, quote

if TYPE_CHECKING:
    from yangson.schemanode import InternalNode, LeafListNode, ListNode, SchemaNode, TerminalNode

# yangson (0.25 s of imports) is imported inside the functions that walk the schema, so that a
# compiled subscription loaded from the on-disk cache keys notifications without it; so is
# yangkey.canon_types, which only compiling needs.


def _module_of_prefix(
    prefix: str, index: ModuleIndex, namespaces: Mapping[str, str] | None, what: str
) -> str:
    if namespaces and prefix in namespaces:
        return index.module_for_namespace(namespaces[prefix])
    if prefix in index.modules:
        return prefix
    owners = index.by_prefix.get(prefix, [])
    if len(owners) == 1:
        return owners[0]
    if len(owners) > 1:
        raise SchemaError(
            f"{what}: prefix {prefix!r} is ambiguous (modules {', '.join(sorted(owners))}); "
            "use module names or give the prefix-to-namespace map"
        )
    raise SchemaError(f"{what}: unknown prefix or module {prefix!r}")


def _step_modules(
    path: LocationPath, index: ModuleIndex, namespaces: Mapping[str, str] | None
) -> list[str]:
    modules: list[str] = []
    current: str | None = None
    for step in path.steps:
        if step.prefix is not None:
            current = _module_of_prefix(step.prefix, index, namespaces, path.text)
        elif current is None:
            raise FilterError(
                f"the first step {step.name!r} must be module-qualified (module:{step.name})",
                source=path.text,
            )
        modules.append(current)
    return modules


def _kind(node: SchemaNode) -> StepKind:
    from yangson.schemanode import InternalNode, LeafListNode, ListNode  # noqa: PLC0415

    if isinstance(node, ListNode):
        return "list"
    if isinstance(node, LeafListNode):
        return "leaf-list"
    if isinstance(node, InternalNode):
        return "container"
    return "leaf"


def _member(module: str, name: str, parent_module: str | None) -> str:
    return name if module == parent_module else f"{module}:{name}"


def _leaf_child(node: InternalNode, name: str, module: str) -> TerminalNode | None:
    from yangson.schemanode import TerminalNode  # noqa: PLC0415

    child = node.get_data_child(name, module)
    return child if isinstance(child, TerminalNode) else None


def _not_data(parent: InternalNode, name: str, module: str) -> str | None:
    """Why ``module:name`` under ``parent`` is no data node to subscribe to, when it is a
    notification or an RPC/action of the schema: with the data node to subscribe to instead,
    the list keyed like the notification's leaves (``alarm-notification`` -> ``alarm``), else
    the module's top-level data nodes."""
    from yangson.schemanode import (  # noqa: PLC0415
        InternalNode,
        ListNode,
        NotificationNode,
        RpcActionNode,
    )

    child = parent.get_child(name, module)
    if isinstance(child, RpcActionNode):
        return "it is an RPC or action, not a data node: it has no data to subscribe to"
    if not isinstance(child, NotificationNode):
        return None
    leaves = {grandchild.name for grandchild in child.children}
    root: SchemaNode = parent
    while root.parent is not None:
        root = root.parent
    best: list[tuple[int, bool, str]] = []
    pending: list[tuple[SchemaNode, str]] = [(root, "")]
    while pending:
        node, path = pending.pop()
        if not isinstance(node, InternalNode):
            continue
        for data in node.data_children():
            if data.ns != module and not path:
                continue
            written = (
                f"{path}/{data.name if path and data.ns == node.ns else f'{data.ns}:{data.name}'}"
            )
            if isinstance(data, ListNode) and data.keys and {k for k, _ in data.keys} <= leaves:
                shared = len(leaves & {c.name for c in data.data_children()})
                # A tie (alarm and shelved-alarm carry the same leaves) goes to the list the
                # notification is named after (alarm-notification).
                best.append((shared, name.startswith(f"{data.name}-"), written))
            pending.append((data, written))
    best.sort(reverse=True)
    if best and (len(best) == 1 or best[0][:2] > best[1][:2]):
        suggestion = best[0][2]
    else:
        tops = [
            f"/{module}:{data.name}"
            for data in (root.data_children() if isinstance(root, InternalNode) else ())
            if data.ns == module
        ]
        if not tops:
            return "it is a notification, not a data node; YANG-Push subscribes to data nodes"
        suggestion = " or ".join(tops[:5])
    return f"it is a notification, not a data node; subscribe to {suggestion} instead"


class _BranchCompiler:
    def __init__(
        self,
        path: LocationPath,
        modules: list[str],
        root: SchemaNode,
        schema: SchemaContext,
        namespaces: Mapping[str, str] | None,
        keyless: KeylessPolicy,
    ) -> None:
        self.path = path
        self.modules = modules
        self.root = root
        self.schema = schema
        self.namespaces = namespaces
        self.keyless = keyless
        self.warnings: list[str] = []
        self.positional: list[bool] = []

    def predicate_module(self, predicate: Predicate, default: str) -> str:
        if predicate.prefix is None:
            return default
        return _module_of_prefix(
            predicate.prefix, self.schema.index, self.namespaces, self.path.text
        )

    def literal(self, leaf: TerminalNode | None, canon: Canon, text: str, what: str) -> str:
        """Canonical form of a literal in the subscription. An identityref literal may carry an
        XML or YANG prefix (``ianaift:ethernetCsmacd``); keys carry the module name."""
        from yangson import datatype as dt  # noqa: PLC0415

        datatype = leaf.type if leaf is not None else None
        while isinstance(datatype, dt.LeafrefType):
            datatype = datatype.ref_type
        if isinstance(datatype, dt.IdentityrefType) and ":" in text:
            prefix, _, name = text.partition(":")
            if prefix not in self.schema.index.modules:
                module = _module_of_prefix(prefix, self.schema.index, self.namespaces, what)
                text = f"{module}:{name}"
        return literal_canon(canon, text, what)

    def compile(self) -> Branch:
        from yangson.schemanode import InternalNode, LeafListNode, ListNode  # noqa: PLC0415

        node: SchemaNode = self.root
        steps: list[CompiledStep] = []
        pieces: list[str] = [""]
        extractions: list[str] = []
        extraction_prefix = ""
        schema_path = ""
        topic_parts: list[str] = []
        parent_module: str | None = None
        target: TargetKind = "container"
        for position, (step, module) in enumerate(zip(self.path.steps, self.modules, strict=True)):
            if not isinstance(node, InternalNode):
                raise self.unknown(step, module, schema_path, "it has no children")
            child = node.get_data_child(step.name, module)
            if child is None:
                raise self.unknown(step, module, schema_path, _not_data(node, step.name, module))
            node = child
            is_last = position == len(self.path.steps) - 1
            kind = _kind(node)
            written = f"/{_member(module, step.name, parent_module)}"
            schema_path += written
            topic_parts.append(
                written[1:]
                if module == parent_module
                else f"{self.schema.module_prefix(module)}:{step.name}"
            )
            pieces[-1] += written
            extraction_prefix += written
            keys: tuple[KeySlot, ...] = ()
            filters: tuple[DataFilter, ...] = ()
            if isinstance(node, ListNode):
                keys, filters = self.list_predicates(node, step, module, pieces, extraction_prefix)
                for slot in keys:
                    if slot.pinned is None:
                        extractions.append(
                            f"{extraction_prefix}/{slot.member}"
                            if not slot.positional
                            else f"{extraction_prefix}/position()"
                        )
                extraction_prefix += "".join(
                    f"[{slot.member}={quote(slot.pinned)}]"
                    for slot in keys
                    if slot.pinned is not None
                )
            elif isinstance(node, LeafListNode):
                if not is_last:
                    raise self.unknown(step, module, schema_path, "a leaf-list has no children")
                keys = (self.leaf_list_slot(node, step, module, pieces),)
                if keys[0].pinned is None:
                    extractions.append(".")
            elif step.predicates:
                filters = self.filters(node, step, module, set())
            if is_last:
                target = kind
            steps.append(
                CompiledStep(
                    module=module,
                    name=step.name,
                    kind=kind,
                    member=_member(module, step.name, parent_module),
                    qualified_member=f"{module}:{step.name}",
                    keys=keys,
                    filters=filters,
                )
            )
            parent_module = module
        open_after = [False] * (len(steps) + 1)
        for index in range(len(steps) - 1, -1, -1):
            open_after[index] = open_after[index + 1] or any(
                slot.pinned is None for slot in steps[index].keys
            )
        return Branch(
            xpath=self.path.text,
            template=pieces[0]
            + "".join(
                ("%s" if positional else "'%s'") + piece
                for positional, piece in zip(self.positional, pieces[1:], strict=True)
            ),
            extractions=tuple(extractions),
            target=target,
            schema_path=schema_path,
            topic_base="/".join(topic_parts).replace(":", "-").replace("/", "-"),
            steps=tuple(steps),
            pieces=tuple(pieces),
            positional=tuple(self.positional),
            open_after=tuple(open_after),
        )

    def unknown(
        self, step: Step, module: str, parent_path: str, why: str | None = None
    ) -> SchemaError:
        where = parent_path or "the schema root"
        reason = f"unknown node {module}:{step.name} under {where}"
        why = why or self.schema.why_missing(module, step.name, self.modules)
        if why:
            reason = f"{module}:{step.name} under {where}: {why}"
        return SchemaError(
            reason,
            source=self.path.text,
            position=Position.in_text(self.path.text, step.offset),
            text=self.path.text,
        )

    def list_predicates(
        self,
        node: ListNode,
        step: Step,
        module: str,
        pieces: list[str],
        extraction_prefix: str,
    ) -> tuple[tuple[KeySlot, ...], tuple[DataFilter, ...]]:
        given: dict[str, Predicate] = {}
        for predicate in step.predicates:
            if predicate.position is not None or predicate.name is None:
                continue  # positional [N] means open (docs/design.md#phase-2-templates)
            given.setdefault(predicate.name, predicate)
        slots: list[KeySlot] = []
        key_names = {name for name, _ in node.keys}
        if not node.keys:
            if self.keyless == "position":
                pieces[-1] += "["
                pieces.append("]")
                self.positional.append(True)
                return (KeySlot("", str, None, positional=True),), ()
            raise SchemaError(
                f"list {module}:{step.name} has no key (a config false state list): no template "
                "predicate can identify its entries; subscribe to a parent container, or set the "
                "keyless-list policy to 'position'",
                source=self.path.text,
            )
        from yangkey.canon_types import canon_for  # noqa: PLC0415

        for key_name, key_module in node.keys:
            leaf = _leaf_child(node, key_name, key_module)
            canon = (
                canon_for(leaf.type, key_module, self.schema.index.unique_prefixes)
                if leaf is not None
                else canon_string
            )
            member = _member(key_module, key_name, module)
            pinning = given.get(key_name)
            if pinning is not None and pinning.value is not None:
                self.predicate_module(pinning, module)
                pinned = self.literal(
                    leaf, canon, pinning.value, f"{self.path.text}: key {key_name}"
                )
                pieces[-1] += f"[{member}={quote(pinned)}]"
                slots.append(KeySlot(member, canon, pinned))
            else:
                pieces[-1] += f"[{member}="
                pieces.append("]")
                self.positional.append(False)
                slots.append(KeySlot(member, canon, None))
        filters = self.filters(node, step, module, key_names)
        return tuple(slots), filters

    def filters(
        self, node: SchemaNode, step: Step, module: str, key_names: set[str]
    ) -> tuple[DataFilter, ...]:
        from yangson.schemanode import InternalNode  # noqa: PLC0415

        from yangkey.canon_types import canon_for  # noqa: PLC0415

        result: list[DataFilter] = []
        for predicate in step.predicates:
            if predicate.position is not None or predicate.name in key_names:
                continue
            if predicate.name is None or predicate.value is None:
                raise FilterError(
                    f"[.=...] applies to leaf-lists only, not to {module}:{step.name}",
                    source=self.path.text,
                )
            leaf_module = self.predicate_module(predicate, module)
            leaf = (
                _leaf_child(node, predicate.name, leaf_module)
                if isinstance(node, InternalNode)
                else None
            )
            if leaf is None:
                raise SchemaError(
                    f"predicate [{predicate.name}=...] names no leaf of {module}:{step.name}",
                    source=self.path.text,
                )
            canon = canon_for(leaf.type, leaf_module, self.schema.index.unique_prefixes)
            value = self.literal(
                leaf, canon, predicate.value, f"{self.path.text}: {predicate.name}"
            )
            self.warnings.append(
                f"{self.path.text}: predicate [{predicate.name}={quote(predicate.value)}] is on "
                f"non-key leaf {predicate.name} of {module}:{step.name}; it does not enter the key "
                "template and filters instances in Phase 3"
            )
            result.append(
                DataFilter(
                    member=_member(leaf_module, predicate.name, module),
                    qualified_member=f"{leaf_module}:{predicate.name}",
                    canon=canon,
                    value=value,
                )
            )
        return tuple(result)

    def leaf_list_slot(
        self, node: LeafListNode, step: Step, module: str, pieces: list[str]
    ) -> KeySlot:
        from yangkey.canon_types import canon_for  # noqa: PLC0415

        canon = canon_for(node.type, module, self.schema.index.unique_prefixes)
        for predicate in step.predicates:
            if predicate.name is None and predicate.value is not None:
                pinned = self.literal(node, canon, predicate.value, f"{self.path.text}: value")
                pieces[-1] += f"[.={quote(pinned)}]"
                return KeySlot("", canon, pinned)
            if predicate.position is None:
                raise FilterError(
                    f"a leaf-list accepts only [.='value'] predicates ({module}:{step.name})",
                    source=self.path.text,
                )
        pieces[-1] += "[.="
        pieces.append("]")
        self.positional.append(False)
        return KeySlot("", canon, None)


def compile_subscription(
    filter_text: str,
    schema: SchemaContext,
    *,
    subtree: bool = False,
    namespaces: Mapping[str, str] | None = None,
    keyless: KeylessPolicy = "reject",
    source: str = "subscription",
) -> CompiledSubscription:
    """Phases 1 and 2 for one subscription filter (XPath union, or subtree XML)."""
    warnings: list[str] = []
    if subtree:
        xpath = normalize_subtree(filter_text, schema.index, source)
    else:
        xpath, relative = absolute_union(filter_text)
        warnings.extend(relative)
    try:
        paths = parse_union(xpath, source)
        step_modules = [_step_modules(path, schema.index, namespaces) for path in paths]
        modules = tuple(sorted({m for mods in step_modules for m in mods}))
        built = schema.built(modules)
        root = built.model.schema
        branches: list[Branch] = []
        warnings.extend(built.warnings())
        for path, mods in zip(paths, step_modules, strict=True):
            compiler = _BranchCompiler(path, mods, root, schema, namespaces, keyless)
            branches.append(compiler.compile())
            warnings.extend(compiler.warnings)
    except YangkeyError as exc:
        # Errors of an XPath subscription point into its text; a subtree filter's XPath is
        # ours, so name the filter's input and keep the branch in the reason.
        if subtree:
            raise exc.within(source) from None
        raise
    unique: dict[tuple[str, tuple[tuple[str, str], ...]], Branch] = {}
    for branch in branches:
        # Branches differing only in non-key filters are different subscriptions.
        filters = tuple((f.member, f.value) for step in branch.steps for f in step.filters)
        unique.setdefault((branch.template, filters), branch)
    return CompiledSubscription(
        xpath=xpath,
        branches=tuple(unique.values()),
        warnings=tuple(warnings),
        modules=modules,
        left_out=built.left_out,
    )
