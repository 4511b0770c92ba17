"""Why a notification yields no instance: the kind and the reason of its rejection.

Phase 3's walkers (:mod:`yangkey.keys`) say only *that* no branch matched: they pass over
what does not fit, to stay cheap. When a notification ends without any instance, this walks
its data again along each branch, interpreted and slowly (rejections only), and names which
of these it is, so that a data-loss bug can be told from noise
(:data:`yangkey.errors.ERROR_KINDS`):

* ``empty-update`` (:class:`~yangkey.errors.EmptyUpdate`): a push-update without data, a
  yang-patch without edits (a heartbeat; decided by the caller, before the branches);
* ``shape`` (:class:`~yangkey.errors.ShapeError`): on the subscribed path, data in a shape
  RFC 7951 does not allow: a container sent as an array or a string, a list entry that is no
  object, a member not module-qualified where RFC 7951 section 4 wants it;
* ``filtered-out`` (:class:`~yangkey.errors.FilteredOutError`): instances on the path, each
  contradicting a key or a non-key filter the subscription pins;
* ``no-match`` (:class:`~yangkey.errors.NoMatchError`): data, none of it on the subscribed
  path.

A shape error is named before a filtered-out instance: it loses data, a filter does not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from yangkey.compiled import Branch, CompiledStep
from yangkey.errors import FilteredOutError, NoMatchError, ShapeError, YangkeyError
from yangkey.xpath import quote

_EXAMPLES = 3
"""Shape problems and top-level members named in one reason, at most."""


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return f"a string {value[:40]!r}"
    if value is True or value is False:
        return "a boolean"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _text(canon: Any, value: Any) -> str:
    try:
        return str(canon(value))
    except YangkeyError:
        return repr(value)


@dataclass
class _Findings:
    shapes: list[str] = field(default_factory=list)
    filtered: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(path, condition) -> entries it ruled out."""
    examples: dict[tuple[str, str], str] = field(default_factory=dict)
    """(path, condition) -> the value of the first entry it ruled out."""

    def shape(self, problem: str) -> None:
        if problem not in self.shapes:
            self.shapes.append(problem)

    def filter(self, path: str, condition: str, found: str) -> None:
        self.filtered[(path, condition)] += 1
        self.examples.setdefault((path, condition), found)


def _member(node: dict[str, Any], step: CompiledStep, path: str, findings: _Findings) -> Any:
    """The step's value in ``node``, as the walkers look it up; a member that is there under
    another qualification is a shape problem."""
    value = node.get(step.member)
    if value is None and step.member != step.qualified_member:
        value = node.get(step.qualified_member)
    if value is None and step.member != step.name and step.name in node:
        findings.shape(
            f"member {step.name!r} under {path or '/'} should be {step.member!r} (RFC 7951"
            " section 4: the module name on the top level and wherever the module changes)"
        )
    return value


def _contradiction(step: CompiledStep, entry: dict[str, Any]) -> tuple[str, str] | None:
    """(condition, value found) of the first pinned key or filter ``entry`` contradicts."""
    for slot in step.keys:
        if slot.pinned is None or slot.positional:
            continue
        raw = entry.get(slot.member)
        if raw is None:
            raw = entry.get(f"{step.module}:{slot.member}")
        if raw is not None and _text(slot.canon, raw) != slot.pinned:
            return f"[{slot.member}={quote(slot.pinned)}]", _text(slot.canon, raw)
    for data_filter in step.filters:
        raw = entry.get(data_filter.member)
        if raw is None:
            raw = entry.get(data_filter.qualified_member)
        if raw is not None and _text(data_filter.canon, raw) != data_filter.value:
            found = _text(data_filter.canon, raw)
            return f"[{data_filter.member}={quote(data_filter.value)}]", found
    return None


def _walk(
    steps: Sequence[CompiledStep], index: int, node: Any, path: str, findings: _Findings
) -> None:
    if type(node) is not dict:
        return
    step = steps[index]
    here = f"{path}/{step.member}"
    value = _member(node, step, path, findings)
    if value is None:
        return
    last = index == len(steps) - 1
    if step.kind == "list":
        for entry in value if type(value) is list else [value]:
            if type(entry) is not dict:
                if entry not in ("", None):  # an empty XML element carries nothing
                    findings.shape(
                        f"an entry of list {here} is {_json_type(entry)}; RFC 7951 encodes a list"
                        " entry as an object"
                    )
                continue
            contradiction = _contradiction(step, entry)
            if contradiction is not None:
                findings.filter(here, *contradiction)
            elif not last:
                _walk(steps, index + 1, entry, here, findings)
    elif step.kind == "container":
        if type(value) is not dict:
            if value != "":  # an empty XML container decodes as ""
                findings.shape(
                    f"{here} is {_json_type(value)}; RFC 7951 encodes a container as an object"
                )
            return
        contradiction = _contradiction(step, value)
        if contradiction is not None:
            findings.filter(here, *contradiction)
        elif not last:
            _walk(steps, index + 1, value, here, findings)
    elif step.kind == "leaf-list" and step.keys and step.keys[0].pinned is not None:
        slot = step.keys[0]
        condition = f"[.={quote(step.keys[0].pinned)}]"
        for item in value if type(value) is list else [value]:
            findings.filter(here, condition, _text(slot.canon, item))


def no_instance(
    branches: Sequence[Branch], trees: Sequence[Iterable[Any]], carried: Sequence[str]
) -> NoMatchError:
    """The rejection of a notification in which no branch found an instance.

    ``trees``: per branch, the data trees its walker read (the push-update's data, or one
    tree per yang-patch edit that follows the branch); ``carried``: what the notification
    carries instead (top-level members, edit targets), named when nothing was on the path.
    """
    findings = _Findings()
    for branch, branch_trees in zip(branches, trees, strict=True):
        for tree in branch_trees:
            _walk(branch.steps, 0, tree, "", findings)
    if findings.shapes:
        problems = findings.shapes[:_EXAMPLES]
        more = len(findings.shapes) - len(problems)
        return ShapeError(
            "data in a shape RFC 7951 does not allow: "
            + "; ".join(problems)
            + (f"; and {more} more" if more else "")
        )
    if findings.filtered:
        parts = []
        for (path, condition), count in findings.filtered.most_common(_EXAMPLES):
            example = findings.examples[(path, condition)]
            entries = "entry" if count == 1 else "entries"
            parts.append(
                f"{count} {entries} of {path} contradict {condition} (first: {quote(example)})"
            )
        return FilteredOutError(
            "every instance was filtered out by the subscription: " + "; ".join(parts)
        )
    paths = " | ".join(branch.schema_path for branch in branches)
    named = ", ".join(carried[:_EXAMPLES]) + (", ..." if len(carried) > _EXAMPLES else "")
    return NoMatchError(
        f"no data on the subscribed path {paths}"
        + (f" (the notification carries {named})" if named else "")
    )
