"""Phase 3: the concrete XPaths of a notification's instances, and so its message key (draft
sections 3.1.1 and 3.1.2.3; the key format itself is :class:`yangkey.messages.MessageKey`).

:class:`KeyDeriver` walks a decoded data tree with the compiled branches. Descending along the
branch, each list step reads its key leaves from the entry it is in, which is the draft's upward
``ancestor-or-self`` walk done on the way down: O(nodes x depth), no schema lookup, no XPath
evaluation per notification.
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, NoReturn

from yangkey.diagnosis import no_instance
from yangkey.errors import EmptyUpdate, NoMatchError, NotificationError, YangkeyError
from yangkey.messages import encode_key
from yangkey.notifications import Edit, Notification, TargetStep, Wanted
from yangkey.templates import Branch, CompiledStep, CompiledSubscription, KeySlot
from yangkey.values import canon_string, node_name_problem
from yangkey.xpath import quote


class _Deleted:
    """The key that marks the node a delete/remove edit names: it exists, but carries no data
    below it. Not a str, so no decoded document can hold it (a JSON member could be any
    string, "\\u0000deleted" included)."""

    __slots__ = ()


_DELETED = _Deleted()


def lookup(node: dict[str, Any], step: CompiledStep) -> Any:
    value = node.get(step.member)
    if value is None and step.member != step.qualified_member:
        value = node.get(step.qualified_member)
    return value


def passes_filters(entry: Any, step: CompiledStep) -> bool:
    """Whether ``entry`` agrees with the step's non-key filters. Only a value that contradicts
    a filter rules the entry out (docs/design.md#phase-2-templates): a device that applied the
    filter itself may leave the leaf out (Huawei sends ``statistics`` without ``type``)."""
    if not isinstance(entry, dict):
        return False
    for data_filter in step.filters:
        value = entry.get(data_filter.member)
        if value is None:
            value = entry.get(data_filter.qualified_member)
        if value is not None and data_filter.canon(value) != data_filter.value:
            return False
    return True


def _missing_key(module: str, name: str, member: str) -> NoReturn:
    raise NotificationError(f"an entry of list {module}:{name} has no key leaf {member}")


Walker = Callable[[dict[str, Any], list[str]], None]


class _WalkerSource:
    """Generates one straight-line Python function per branch (compiled once, in Phase 2's
    wake): nested loops over the list steps, key reads and template rendering inlined. This is
    what makes Phase 3 cheap next to the JSON parse itself.

    ``entries``: the variant for the instance feed (:mod:`yangkey.instances`), which appends
    ``(xpath, value, keys)`` for each instance rather than its XPath alone: the instance's
    value and the canonical values of the keys of the lists above it and of its own, in step
    and key order (pinned ones too; positions not). One walker, two outputs: the typed
    instance rows and the message key agree by construction."""

    def __init__(self, branch: Branch, entries: bool = False) -> None:
        self.branch = branch
        self.entries = entries
        self.key_values: list[str] = []
        """The variables holding the canonical key values read so far (the feed's keys)."""
        self.lines: list[str] = ["def walk(node, out):"]
        self.env: dict[str, Any] = {
            "quote": quote,
            "canon_string": canon_string,
            "missing": _missing_key,
            "DELETED": _DELETED,
            "passes": passes_filters,
        }
        self.indent = 1
        self.loops = 0
        self.values: list[str] = []

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def found(self, xpath: str, value: str) -> str:
        """The statement recording one instance: its XPath, or (entries) its XPath, value and
        keys."""
        if not self.entries:
            return f"out.append({xpath})"
        keys = "".join(f"{name}, " for name in self.key_values)
        return f"out.append(({xpath}, {value}, ({keys})))"

    @property
    def skip(self) -> str:
        return "continue" if self.loops else "return"

    def render(self, extra: str | None = None) -> str:
        """An expression building the concrete XPath: one f-string when no value needs the
        double-quote or concat() form (the common case), quote() otherwise. Positional
        placeholders are written bare."""
        values = [*self.values, *([extra] if extra else [])]
        if not values:
            return repr(self.branch.pieces[0])
        for index, piece in enumerate(self.branch.pieces):
            self.env[f"P{index}"] = piece
        bare = self.branch.positional
        pieces = self.branch.pieces

        def literal(piece: str) -> str:
            # The template text inlined as an f-string literal: no global lookup per instance.
            return "f" + repr(piece).replace("{", "{{").replace("}", "}}")

        fast = " ".join(
            [literal(pieces[0])]
            + [
                (f'f"{{{value}}}"' if bare[index] else f"f\"'{{{value}}}'\"")
                + " "
                + literal(pieces[index + 1])
                for index, value in enumerate(values)
            ]
        )
        quoted = [value for index, value in enumerate(values) if not bare[index]]
        if not quoted:
            return fast
        slow = "P0 + " + " + ".join(
            (value if bare[index] else f"quote({value})") + f" + P{index + 1}"
            for index, value in enumerate(values)
        )
        plain = " and ".join(f'"\'" not in {value}' for value in quoted)
        return f"({fast} if {plain} else {slow})"

    def canon(self, slot: KeySlot, name: str, raw: str) -> str:
        if slot.canon is canon_string:
            return f"({raw} if type({raw}) is str else canon_string({raw}))"
        self.env[name] = slot.canon
        return f"{name}({raw})"

    def step_lookup(self, index: int, step: CompiledStep, parent: str) -> str:
        child = f"c{index}"
        self.emit(f"{child} = {parent}.get({step.member!r})")
        if step.member != step.qualified_member:
            self.emit(f"if {child} is None: {child} = {parent}.get({step.qualified_member!r})")
        self.emit(f"if {child} is None: {self.skip}")
        return child

    def deleted_check(self, index: int, node: str) -> None:
        if not self.branch.open_after[index + 1]:
            self.emit(f"if type({node}) is dict and DELETED in {node}:")
            self.emit(f"    {self.found(self.render(), node)}")
            self.emit(f"    {self.skip}")

    def generate(self) -> str:
        """The walker's Python source; the names it uses beyond builtins are in ``self.env``."""
        # repr() keeps the comment on one line whatever the pinned values hold.
        self.lines.insert(0, f"# walker of branch {self.branch.template!r}")
        steps = self.branch.steps
        parent = "node"
        for index, step in enumerate(steps):
            last = index == len(steps) - 1
            child = self.step_lookup(index, step, parent)
            if step.filters:
                self.env[f"S{index}"] = step
            if step.kind == "list":
                entry = f"e{index}"
                self.emit(f"if type({child}) is not list: {child} = [{child}]")
                if any(slot.positional for slot in step.keys):
                    self.emit(f"for p{index}, {entry} in enumerate({child}, 1):")
                else:
                    self.emit(f"for {entry} in {child}:")
                self.indent += 1
                self.loops += 1
                first_read = bool(step.keys) and not step.keys[0].positional
                if not first_read:
                    self.emit(f"if type({entry}) is not dict: continue")
                self.list_keys(index, step, entry)
                if step.filters:
                    self.emit(f"if not passes({entry}, S{index}): continue")
                if last:
                    self.emit(self.found(self.render(), entry))
                else:
                    self.deleted_check(index, entry)
                parent = entry
            elif step.kind == "leaf-list":
                slot = step.keys[0]
                self.emit(f"if type({child}) is not list: {child} = [{child}]")
                self.emit(f"for x in {child}:")
                self.indent += 1
                canon = self.canon(slot, f"K{index}", "x")
                if slot.pinned is not None:
                    self.emit(f"if {canon} == {slot.pinned!r}: {self.found(self.render(), 'x')}")
                else:
                    self.emit(f"v = {canon}")
                    self.emit(self.found(self.render("v"), "x"))
            elif step.kind == "container":
                if step.filters:
                    self.emit(f"if not passes({child}, S{index}): {self.skip}")
                if last:
                    self.emit(self.found(self.render(), child))
                else:
                    self.emit(f"if type({child}) is not dict: {self.skip}")
                    self.deleted_check(index, child)
                parent = child
            else:
                self.emit(self.found(self.render(), child))
        return "\n".join(self.lines) + "\n"

    def list_keys(self, index: int, step: CompiledStep, entry: str) -> None:
        """Every key leaf of the entry is read and canonicalized before any pinned value is
        compared: an entry on the path with a missing or invalid key rejects the notification
        whatever its other keys hold (the reference walker's rule)."""
        pinned: list[tuple[str, str]] = []
        named = [slot for slot in step.keys if not slot.positional]
        # One string key (the usual list): its read and canonicalization are one type check
        # on the hot path. With more keys, every key is read before any is canonicalized.
        merged = len(named) == 1 and named[0].canon is canon_string
        for number, slot in enumerate(step.keys):
            if slot.positional:
                self.values.append(f"str(p{index})")
                continue
            raw = f"v{index}_{number}" if merged else f"r{index}_{number}"
            if number == 0:
                # Only a dict takes a string subscript among decoded values (a list, string,
                # number or null raises TypeError); try is free in 3.11 unless it raises, so
                # this is the entry type check at no cost, and a subscript is cheaper than .get.
                self.emit("try:")
                self.emit(f"    {raw} = {entry}[{slot.member!r}]")
                self.emit("except KeyError:")
                self.emit(f"    {raw} = None")
                self.emit("except TypeError:")
                self.emit("    continue")
            else:
                self.emit(f"{raw} = {entry}.get({slot.member!r})")
            indent = ""
            if merged:
                self.emit(f"if type({raw}) is not str:")
                indent = "    "
            # A redundantly qualified member (lenient RFC 7951) is looked up only when the
            # plain one is absent: no cost on the hot path.
            self.emit(f"{indent}if {raw} is None:")
            self.emit(f"{indent}    {raw} = {entry}.get({step.module + ':' + slot.member!r})")
            self.emit(
                f"{indent}    if {raw} is None: "
                f"missing({step.module!r}, {step.name!r}, {slot.member!r})"
            )
            if merged:
                self.emit(f"{indent}{raw} = canon_string({raw})")
        for number, slot in enumerate(step.keys):
            if slot.positional:
                continue
            value = f"v{index}_{number}"
            if not merged:
                self.emit(
                    f"{value} = {self.canon(slot, f'K{index}_{number}', f'r{index}_{number}')}"
                )
            self.key_values.append(value)
            if slot.pinned is None:
                self.values.append(value)
            else:
                pinned.append((value, slot.pinned))
        for value, literal in pinned:
            self.emit(f"if {value} != {literal!r}: continue")

    def build(self) -> Any:
        source = self.generate()
        filename = walker_filename(self.branch, source)
        # Registered so tracebacks and pdb show the generated lines; mtime None tells
        # linecache.checkcache the entry has no file behind it to go stale against.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace: dict[str, Any] = dict(self.env)
        exec(compile(source, filename, "exec"), namespace)
        return namespace["walk"]


def walker_filename(branch: Branch, source: str) -> str:
    """A stable pseudo-filename: the same branch gives the same name in every process. The
    schema path has no key values (no quotes or LFs to garble a traceback); the digest of the
    source tells apart branches that differ only in pinned values or filters."""
    digest = hashlib.blake2b(source.encode(), digest_size=4).hexdigest()
    return f"<yangkey-walker {branch.schema_path} {digest}>"


def walker_source(branch: Branch) -> str:
    """The generated Python source of a branch's walker (``yangkey compile --show-walker``)."""
    return _WalkerSource(branch).generate()


def compile_walker(branch: Branch) -> Walker:
    """The Phase 3 matcher of one branch: ``walk(data_tree, out)`` appends concrete XPaths."""
    walker: Walker = _WalkerSource(branch).build()
    return walker


Instance = tuple[str, Any, tuple[str, ...]]
"""An instance an entries walker finds: its concrete XPath, its value, its keys' values."""
EntriesWalker = Callable[[dict[str, Any], list[Instance]], None]


def compile_entries_walker(branch: Branch) -> EntriesWalker:
    """The same walker as :func:`compile_walker`, appending ``(xpath, value, keys)`` of each
    instance (the instance feed's; keys named by :func:`key_members`)."""
    walker: EntriesWalker = _WalkerSource(branch, entries=True).build()
    return walker


def key_members(branch: Branch) -> tuple[str, ...]:
    """``list-member.key-member`` of each key an entries walker reports, in its order."""
    return tuple(
        f"{step.member}.{slot.member}"
        for step in branch.steps
        if step.kind == "list"
        for slot in step.keys
        if not slot.positional
    )


class EditPlan(NamedTuple):
    """What :func:`edit_tree` needs of a branch, worked out once per branch."""

    steps: tuple[CompiledStep, ...]
    path: tuple[tuple[str, str], ...]
    """(module, name) of each step: an edit's target must follow it."""
    named: tuple[tuple[KeySlot, ...], ...]
    """Per step, the key slots a target names (the non-positional ones)."""
    members: tuple[tuple[str, ...], ...]
    """Per step, the member names of ``named``."""
    key_leaf: tuple[bool, ...]
    """Per step, whether it is a key leaf of the list step before it."""
    cacheable: bool
    """The branch ends in a list and filters on no data: an edit whose target names that
    list's entry (keys given) yields XPaths that depend on the target alone, since the value
    can only repeat the keys (checked) or add members no walker reads."""
    found: dict[tuple[TargetStep, ...], tuple[str, ...] | None]
    """Cacheable targets -> their XPaths; None for a target the branch does not follow."""


_FOUND_MAX = 65536


def edit_plan(branch: Branch) -> EditPlan:
    steps = branch.steps
    named = tuple(tuple(slot for slot in step.keys if not slot.positional) for step in steps)
    return EditPlan(
        steps,
        tuple((step.module, step.name) for step in steps),
        named,
        tuple(tuple(slot.member for slot in slots) for slots in named),
        tuple(
            bool(index and any(slot.member == step.member for slot in steps[index - 1].keys))
            for index, step in enumerate(steps)
        ),
        bool(steps) and steps[-1].kind == "list" and not any(step.filters for step in steps),
        {},
    )


def _edits_xpaths(plan: EditPlan, walk: Walker, edits: tuple[Edit, ...], found: list[str]) -> None:
    """Append the XPaths of a notification's edits. A target seen before takes them from the
    plan's cache, its value's keys still checked against the target's as :func:`edit_tree`
    does: inline, as this loop is the whole cost of a warm yang-patch."""
    if not plan.cacheable:
        for edit in edits:
            _edit_xpaths(plan, walk, edit, found)
        return
    cache = plan.found
    last = len(plan.steps) - 1
    step = plan.steps[last]
    member, qualified = step.member, step.qualified_member
    members = plan.members[last]
    for edit in edits:
        target = edit.target
        xpaths = cache.get(target, _MISS)
        if xpaths is _MISS:
            _edit_xpaths(plan, walk, edit, found)
            continue
        if xpaths is None:
            continue
        value = edit.value
        if value is not None and len(target) == last + 1:
            content = value.get(member)
            if content is None and member != qualified:
                content = value.get(qualified)
            keys = target[last].keys
            assert keys is not None  # cached targets name the entry
            if type(content) is list and len(content) > 1:
                _one_entry(step, content)
            for item in content if type(content) is list else (content,):
                if type(item) is dict:
                    for name, key in zip(members, keys, strict=True):
                        given = item.get(name)
                        if given is not None and given != key:
                            _check_value_keys(step, plan.named[last], keys, item)
        found.extend(xpaths)


_MISS: tuple[str, ...] = ("not cached",)  # told apart by identity


def _edit_xpaths(plan: EditPlan, walk: Walker, edit: Edit, found: list[str]) -> None:
    """Append the XPaths of one edit not in the plan's cache; cache them when the target
    allows it."""
    target = edit.target
    last = len(plan.steps) - 1
    keys = target[last].keys if plan.cacheable and len(target) > last else None
    if keys is None:
        tree = edit_tree(plan, edit)
        if tree is not None:
            walk(tree, found)
        return
    cache = plan.found
    tree = edit_tree(plan, edit)
    start = len(found)
    if tree is not None:
        walk(tree, found)  # raises before anything is cached if the target is bad
    if len(cache) >= _FOUND_MAX:
        cache.clear()
    cache[target] = None if tree is None else tuple(found[start:])


def edit_tree(plan: EditPlan, edit: Edit) -> dict[Any, Any] | None:
    """The data an edit describes, as a tree the walker can read; None if it cannot match."""
    steps = plan.steps
    target = edit.target
    depth = min(len(target), len(steps))
    path = plan.path
    for index in range(depth):
        if target[index][:2] != path[index]:
            return None
    root: dict[Any, Any] = {}
    cursor: dict[Any, Any] = root
    value = edit.value if len(target) <= len(steps) else None
    final_index = depth - 1
    for index in range(depth):
        step, tstep = steps[index], target[index]
        final = index == final_index
        kind = step.kind
        if kind == "list":
            named = plan.named[index]
            if tstep.keys is not None:
                if len(tstep.keys) != len(named):
                    raise NotificationError(
                        f"yang-patch target names {len(tstep.keys)} key value(s) for list "
                        f"{step.module}:{step.name}, which has {len(named)}"
                    )
                entry: dict[Any, Any] = dict(zip(plan.members[index], tstep.keys, strict=True))
            else:
                entry = {}
            if final and value is not None:
                content = lookup(value, step)
                if tstep.keys is None:
                    cursor[step.member] = content
                    break
                # A single list entry in XML decodes to a dict, not a one-element list.
                if type(content) is list and len(content) > 1:
                    _one_entry(step, content)
                for item in content if isinstance(content, list) else (content,):
                    if isinstance(item, dict):
                        _check_value_keys(step, named, tstep.keys, item)
                        entry.update(item)
            elif final:
                entry[_DELETED] = True
            cursor[step.member] = [entry]
            cursor = entry
        elif kind == "container":
            if final and value is not None:
                content = lookup(value, step)
                cursor[step.member] = content if isinstance(content, dict) else {}
                break
            container: dict[Any, Any] = {_DELETED: True} if final else {}
            cursor[step.member] = container
            cursor = container
        elif kind == "leaf-list":
            if tstep.keys:
                cursor[step.member] = list(tstep.keys)
            elif value is not None:
                cursor[step.member] = lookup(value, step)
            else:
                break  # deleting a whole leaf-list names no value (its entries are still checked)
        elif not plan.key_leaf[index]:
            # A key leaf is there exactly when the target names the entry's keys: the edit's
            # value never stands in for them.
            content = lookup(value, step) if value is not None else None
            cursor[step.member] = content if content is not None else ""
    return root


def _one_entry(step: CompiledStep, content: list[Any]) -> None:
    """RFC 8072 section 2.5: the value of an edit whose target names a list entry is that one
    entry. Several entries would be merged into one, a member given in each (or spelled with
    and without its module) decided by whichever came last: refuse them."""
    entries = sum(type(item) is dict for item in content)
    if entries > 1:
        raise NotificationError(
            f"yang-patch value holds {entries} entries of list {step.module}:{step.name}, "
            "but its target names one entry"
        )


def _check_value_keys(
    step: CompiledStep,
    named: tuple[KeySlot, ...],
    target_keys: tuple[str, ...],
    item: dict[str, Any],
) -> None:
    """An edit whose value names another list entry than its target (target ``eth0``, value
    ``eth9``) is contradictory: refuse it rather than let either one pick the key."""
    for slot, wanted in zip(named, target_keys, strict=True):
        given = item.get(slot.member)
        # Equal text canonicalizes equally: the canonicalizers run only on a difference.
        if given is not None and given != wanted and slot.canon(given) != slot.canon(wanted):
            raise NotificationError(
                f"yang-patch value names {slot.member} {given!r} but the target names "
                f"{wanted!r} (list {step.module}:{step.name})"
            )


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

    __slots__ = ("branches", "compiled", "plans", "single", "walkers", "wanted")

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

    def instances(self, notification: Notification) -> list[list[str]]:
        """Concrete XPaths per branch (unsorted, may repeat)."""
        per_branch: list[list[str]] = []
        for plan, walk in zip(self.plans, self.walkers, strict=True):
            found: list[str] = []
            if notification.kind == "push-update":
                walk(notification.data, found)
            else:
                _edits_xpaths(plan, walk, notification.edits, found)
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
