"""Issue 33: the native yang-patch's reading of each edit (native/src/patchwalk.rs's
``edits``: its members target, operation and value, the operation one of RFC 8072's) and the
target cache's hit (native/src/patchtarget.rs's ``Targets::cached``: one hash of the bytes
and one compare, after the parse's check of the leading ``/``). Its
answers must stay the reference's: targets that are a kept target's bytes less or more a byte
(no leading ``/``, a doubled one, a trailing one, one byte other at every place), cached and
not, edits whose members come in every order, go missing, come with others, are mistyped, or
repeat across two edits of one target, every operation and unknown ones, in notifications of
1 and 1,000 edits; JSON and XML yang-patch (the same parse serves both). Written as the guard
of attempted speed-ups of these two (none kept: see the commit message).

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from test_native_patch_cache import check, patch_raw, value
from test_native_patch_native import change, edit
from test_native_patch_xml import module_namespaces

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"
KEPT = f"{IF}=eth%2F0"
OPERATIONS = ["create", "delete", "insert", "merge", "move", "replace", "remove", "patch", ""]


def near(target: str) -> list[str]:
    """``target`` less its leading ``/``, with it doubled, and one byte other at each place."""
    out = [target[1:], "/" + target, target + "/"]
    for at in range(len(target)):
        other = "x" if target[at] != "x" else "y"
        out.append(target[:at] + other + target[at + 1 :])
    return out


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_patch_edits_near_a_kept_target(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Each target a byte off a kept one, after it (kept) and again (itself kept if good):
    never answered as the kept one; the leading ``/`` still required."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    entry = "keys" if shape == "json" else "keys_xml"

    def raw(targets: list[str]) -> bytes:
        edits = [edit("delete", t) for t in targets]
        return patch_raw(shape, edits, namespaces)

    assert check(decoder, deriver, raw([KEPT]), ns, entry) == "native"
    answered = []
    for other in near(KEPT):
        for _ in range(2):
            answered.append(check(decoder, deriver, raw([other]), ns, entry))
            answered.append(check(decoder, deriver, raw([KEPT, other]), ns, entry))
            answered.append(check(decoder, deriver, raw([other, KEPT]), ns, entry))
    # the one without its '/' is the reference's error
    assert check(decoder, deriver, raw([KEPT[1:]]), ns, entry) == "python"
    assert "native" in answered and "python" in answered


def members_every_way() -> list[list[tuple[str, Any]]]:
    """An edit's members: every order of the four, each one missing, one repeated in a
    second edit of the same target, other members, a non-string target or operation."""
    full = [
        ("edit-id", "e1"),
        ("operation", "merge"),
        ("target", KEPT),
        ("value", value("eth/0")),
    ]
    ways = [list(order) for order in itertools.permutations(full)]
    ways += [[m for m in full if m[0] != name] for name, _ in full]
    ways.append([*full, ("note", "x"), ("point", "/y")])
    ways.append([("target", 7), *full[:2], full[3]])
    ways.append([full[0], ("operation", None), *full[2:]])
    ways.append([*full[:3], ("value", [1])])
    return ways


@pytest.mark.parametrize("cached", [False, True])
def test_native_patch_edits_members_every_way(
    decoder: Any, fx_schema: SchemaContext, cached: bool
) -> None:
    """Edits' members in every order, missing, other, mistyped, and every operation, the
    target kept (seen before) or not (a fresh one): the reference's answer each time."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    answered = []
    for index, way in enumerate(members_every_way()):
        target = KEPT if cached else f"{IF}=fresh{index}%2F{cached}"
        item = dict((n, target if n == "target" and v == KEPT else v) for n, v in way)
        if cached:
            check(decoder, deriver, change([edit("delete", KEPT)]), ns, "keys")
        answered.append(check(decoder, deriver, change([item]), ns, "keys"))
        # as the second of two edits (the first kept), and a member repeated across edits
        second = change([edit("remove", KEPT), item])
        answered.append(check(decoder, deriver, second, ns, "keys"))
    for operation in OPERATIONS:
        for target in (KEPT, f"{IF}=op-{operation}"):
            one = change([edit(operation, target, value("eth/0"))])
            answered.append(check(decoder, deriver, one, ns, "keys"))
    assert "native" in answered and "python" in answered


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_patch_edits_thousand_edits(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """1,000 edits of distinct targets, then the same again (all kept), then again with one
    byte other in the last key of one of them (not kept) and one without its ``/``."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    entry = "keys" if shape == "json" else "keys_xml"
    names = [f"ge0/{index}" for index in range(1000)]
    targets = [f"{IF}={name.replace('/', '%2F')}" for name in names]

    def raw(targets: list[str]) -> bytes:
        edits = [edit("merge", t, value(n)) for t, n in zip(targets, names, strict=True)]
        return patch_raw(shape, edits, namespaces)

    assert check(decoder, deriver, raw(targets), ns, entry) == "native"
    assert check(decoder, deriver, raw(targets), ns, entry) == "native"
    other = list(targets)
    other[500] = other[500][:-1] + "9"
    check(decoder, deriver, raw(other), ns, entry)
    other[700] = other[700][1:]
    assert check(decoder, deriver, raw(other), ns, entry) == "python"
