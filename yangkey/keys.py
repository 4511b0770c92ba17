"""Phase 3: the concrete XPaths of a notification's instances, and so its message key (draft
sections 3.1.1 and 3.1.2.3; the key format itself is :class:`yangkey.messages.MessageKey`).

:class:`KeyDeriver` runs the compiled branches' walkers (:mod:`yangkey.walker`) over a
decoded push-update, or over the trees of a yang-patch's edits (:mod:`yangkey.patch`), and
sorts and de-duplicates what they found into a :class:`DerivedKey`.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from yangkey.compiled import CompiledStep, CompiledSubscription
from yangkey.diagnosis import no_instance
from yangkey.errors import EmptyUpdate, NoMatchError, NotificationError, YangkeyError
from yangkey.messages import encode_key
from yangkey.native import walker as native_walker
from yangkey.notifications import Notification, Wanted
from yangkey.patch import edit_plan, edit_tree, edits_xpaths
from yangkey.values import node_name_problem
from yangkey.walker import compile_walker


def _sorted_unique(found: list[str]) -> tuple[str, ...]:
    """Sorted by code point (str ordering), duplicates dropped; sorts in place."""
    found.sort()
    if len(set(found)) != len(found):
        return tuple(dict.fromkeys(found))
    return tuple(found)


class DerivedKey(NamedTuple):
    # A NamedTuple: built once per notification, and cheaper to build than a frozen dataclass.
    node: str
    subscription_id: int
    xpaths: tuple[str, ...]
    """All concrete XPaths, sorted and de-duplicated."""
    branch_xpaths: tuple[tuple[str, ...], ...]
    """Per compiled branch (same order), its concrete XPaths; empty for unmatched branches."""

    @property
    def key(self) -> bytes:
        # xpaths are sorted and unique already and the node was checked: no MessageKey.of checks.
        return encode_key(self.node, self.subscription_id, self.xpaths)

    def branch_key(self, index: int) -> bytes:
        xpaths = self.branch_xpaths[index]
        if not xpaths:
            raise NoMatchError("no matching instances in this branch")
        return encode_key(self.node, self.subscription_id, xpaths)


def _merge_wanted(a: Wanted | None, b: Wanted | None) -> Wanted | None:
    if a is None or b is None:
        return None
    merged = dict(a)
    for member, below in b.items():
        merged[member] = _merge_wanted(merged[member], below) if member in merged else below
    return merged


def _branch_wanted(steps: tuple[CompiledStep, ...]) -> Wanted:
    """What a branch's walker reads: each step's member, below a list step its key leaves,
    at every step the leaves its data filters compare; a leaf or leaf-list target whole."""
    below: Wanted | None = None
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        level: Wanted | None = None
        if step.kind in ("list", "container"):
            level = {}
            for slot in step.keys:
                if slot.member and not slot.positional:
                    prefix, colon, name = slot.member.rpartition(":")
                    level[(prefix if colon else step.module, name)] = None
            for data_filter in step.filters:
                module, _, name = data_filter.qualified_member.partition(":")
                level[(module, name)] = None
            if index + 1 < len(steps):
                after = steps[index + 1]
                member = (after.module, after.name)
                level[member] = _merge_wanted(level[member], below) if member in level else below
        below = level
    root: Wanted = {}
    if steps:
        root[(steps[0].module, steps[0].name)] = below
    return root


_derived_key = partial(tuple.__new__, DerivedKey)
"""DerivedKey from one tuple of its fields, in C (the NamedTuple's __new__ is Python)."""


class KeyDeriver:
    """Phase 3 for one compiled subscription."""

    __slots__ = ("branches", "compiled", "native", "plans", "single", "walkers", "wanted")

    def __init__(self, compiled: CompiledSubscription) -> None:
        self.compiled = compiled
        self.branches = compiled.branches
        self.walkers = tuple(compile_walker(branch) for branch in compiled.branches)
        self.plans = tuple(edit_plan(branch) for branch in compiled.branches)
        self.single = self.walkers[0] if len(self.walkers) == 1 else None
        """The walker of a one-branch subscription (derive's hot path)."""
        wanted: Wanted | None = {}
        for branch in compiled.branches:
            wanted = _merge_wanted(wanted, _branch_wanted(branch.steps))
        assert wanted is not None  # a merge of dicts is a dict
        self.wanted: Wanted = wanted
        """What the walkers read (:func:`yangkey.notifications.decode`'s ``wanted``)."""
        self.native = native_walker(compiled)
        """The same walkers compiled natively (:func:`yangkey.native.keys`), or None."""

    def instances(self, notification: Notification) -> list[list[str]]:
        """Concrete XPaths per branch (unsorted, may repeat)."""
        per_branch: list[list[str]] = []
        for plan, walk in zip(self.plans, self.walkers, strict=True):
            found: list[str] = []
            if notification.kind == "push-update":
                walk(notification.data, found)
            else:
                edits_xpaths(plan, walk, notification.edits, found)
            per_branch.append(found)
        return per_branch

    def derive(
        self,
        notification: Notification,
        *,
        node: str | None = None,
        default_node: str | None = None,
        subscription_id: int | None = None,
    ) -> DerivedKey:
        """The key of one notification. ``node``/``subscription_id`` override what it carries;
        ``default_node`` is used only when it carries no node name."""
        node_name = node or notification.node or default_node
        sub_id = notification.subscription_id if subscription_id is None else subscription_id
        walk = self.single
        if (
            walk is not None
            and notification.kind == "push-update"
            and node_name
            and sub_id is not None
            and node_name_problem(node_name) is None
        ):
            # The hot path: one branch, one data tree, a valid node and id.
            found: list[str] = []
            try:
                walk(notification.data, found)
            except YangkeyError as exc:
                raise exc.with_source(notification.source) from None
            if found:
                every = _sorted_unique(found)
                return _derived_key((node_name, sub_id, every, (every,)))
            return self._derive(notification, node_name, sub_id, [found])
        return self._derive(notification, node_name, sub_id)

    def _derive(
        self,
        notification: Notification,
        node_name: str | None,
        sub_id: int | None,
        per_branch: list[list[str]] | None = None,
    ) -> DerivedKey:
        source = notification.source
        if not node_name:
            raise NotificationError(
                "no node name: the notification has no hostname, sysName or "
                "network-node-manifest name; give one with --default-node (produce) or "
                "--override-node (key, keys)",
                source=source,
            )
        problem = node_name_problem(node_name)
        if problem is not None:
            raise NotificationError(f"node name {node_name!r} {problem}", source=source)
        if sub_id is None:
            raise NotificationError(
                "no subscription id in the notification; give one with "
                "--override-subscription-id (key, keys)",
                source=source,
            )
        if per_branch is None:
            try:
                per_branch = self.instances(notification)
            except YangkeyError as exc:
                raise exc.with_source(source) from None
        if not any(per_branch):
            if notification.empty:
                raise EmptyUpdate(
                    "empty update: the push-update carries no data (a heartbeat?)"
                    if notification.kind == "push-update"
                    else "empty update: the yang-patch has no edit",
                    source=source,
                )
            only = self.branches[0] if len(self.branches) == 1 else None
            if only is not None and only.open_slots == 0 and only.target == "container":
                per_branch = [[only.template]]
            else:
                raise self._no_instance(notification).with_source(source) from None
        if len(per_branch) == 1:
            every = _sorted_unique(per_branch[0])
            branch_xpaths: tuple[tuple[str, ...], ...] = (every,)
        else:
            branch_xpaths = tuple(_sorted_unique(found) for found in per_branch)
            every = tuple(sorted({x for found in branch_xpaths for x in found}))
        return DerivedKey(node_name, sub_id, every, branch_xpaths)

    def _no_instance(self, notification: Notification) -> YangkeyError:
        """Why no branch found an instance (:func:`yangkey.diagnosis.no_instance`)."""
        if notification.kind == "push-update":
            trees: list[list[Any]] = [[notification.data]] * len(self.branches)
            carried = [str(member) for member in notification.data]
        else:
            trees = []
            for plan in self.plans:
                found = []
                for edit in notification.edits:
                    try:
                        tree = edit_tree(plan, edit)
                    except YangkeyError:
                        continue  # the walkers read it without error: never seen
                    if tree is not None:
                        found.append(tree)
                trees.append(found)
            carried = [
                "target " + "".join(f"/{step.module}:{step.name}" for step in edit.target)
                for edit in notification.edits
            ]
        return no_instance(self.branches, trees, carried)
