"""Phase 3's walkers (draft section 3.1.2.3): one Python function generated per compiled branch
that descends a decoded data tree along the branch and records the concrete XPath of every
instance it finds. Descending, each list step reads its key leaves from the entry it is in,
which is the draft's upward ``ancestor-or-self`` walk done on the way down: O(nodes x depth), no
schema lookup, no XPath evaluation per notification. The source is registered in
:mod:`linecache` (tracebacks and ``yangkey compile --show-walker`` show it).

A second variant (:func:`compile_entries_walker`) records each instance's value and keys too:
the instance feed (:mod:`yangkey.instances`) reads the same walk, so its paths and the message
key's agree by construction.
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable
from typing import Any, NoReturn

from yangkey.compiled import Branch, CompiledStep, KeySlot
from yangkey.errors import NotificationError
from yangkey.values import canon_string
from yangkey.xpath import quote


class _Deleted:
    """The key that marks the node a delete/remove edit names: it exists, but carries no data
    below it. Not a str, so no decoded document can hold it (a JSON member could be any
    string, "\\u0000deleted" included)."""

    __slots__ = ()


DELETED = _Deleted()


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
            "DELETED": DELETED,
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
