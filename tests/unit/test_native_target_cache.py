"""Issue 33: the table of parsed yang-patch targets (native/src/targetcache.rs: one flat table
per thread of slots probed at most 8 far, the entries' bytes and key values in chunks, their
steps the first of every notification's, a target kept in a notification pending until it
ends; emptied at a notification's start past 4,096 entries; targets over 256 bytes or of more
than 16 steps or keys not kept). A cache is
invisible when right, so each case here is built to key the wrong entry when it is wrong:
targets equal but for their last byte or one byte inside, near the 256-byte bound; more than
4,096 distinct targets in one notification and across several; targets of up to 16 steps and
more; escaped keys (``%2F``, ``%25``, ``%2C``) and composite keys; one target many times; and
every target of one hash (the test hook ``YANGKEY_NATIVE_TARGET_HASH=constant``, read when a
thread's table is made: the cases run in a thread of their own), where only the compare of
the bytes tells entries apart and the probe's bound leaves most targets unkept.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from test_native_patch_cache import check, patch_raw
from test_native_patch_native import edit
from test_native_patch_xml import module_namespaces

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"
SITE = "/yk-test:top/site"
FLOW = "/yk-test:top/flow"


def if_value(name: str) -> dict[str, Any]:
    return {"ietf-interfaces:interface": [{"name": name, "enabled": True}]}


def padded(length: int, last: str, at: int | None = None) -> str:
    """An interface target of ``length`` bytes whose key ends in ``last`` (with ``at``: the
    byte at that offset of the target is ``last`` instead, the end an ``x``)."""
    head = f"{IF}=eth%2F"
    body = "e" * (length - len(head) - 1)
    target = head + body + "x"
    if at is None:
        return target[:-1] + last
    return target[:at] + last + target[at + 1 :]


def near_bound() -> list[str]:
    """Targets of 240 to 258 bytes, equal but for their last byte, or for one byte at each
    sixteen-byte step of the compare (both sides of each step's edge)."""
    targets = []
    for length in (240, 247, 248, 255, 256, 257, 258):
        targets += [padded(length, c) for c in "abc"]
    for at in range(len(f"{IF}=eth%2F"), 256, 7):
        targets += [padded(256, "q", at), padded(255, "r", at)]
    return list(dict.fromkeys(targets))


class Case:
    """A subscription's deriver and the context a check needs."""

    def __init__(self, decoder: Any, schema: SchemaContext, xpath: str, shape: str) -> None:
        self.decoder = decoder
        self.deriver = KeyDeriver(compile_subscription(xpath, schema))
        self.ns = schema.index.by_namespace
        self.namespaces = module_namespaces(schema)
        self.shape = shape
        self.entry = "keys" if shape == "json" else "keys_xml"

    def answer(self, edits: list[dict[str, Any]]) -> str:
        raw = patch_raw(self.shape, edits, self.namespaces)
        return check(self.decoder, self.deriver, raw, self.ns, self.entry)


def if_edits(targets: list[str], with_value: bool = True) -> list[dict[str, Any]]:
    def name(target: str) -> str:
        from urllib.parse import unquote  # noqa: PLC0415

        return unquote(target.partition("=")[2])

    return [
        edit("merge", t, if_value(name(t))) if with_value and n % 2 else edit("delete", t)
        for n, t in enumerate(targets)
    ]


def rounds(case: Case, targets: list[str], single: bool = True) -> list[str]:
    """``targets`` in one notification, reversed, and (``single``) one per notification,
    twice over: the second round answered from the table."""
    answered = []
    for _ in range(2):
        answered.append(case.answer(if_edits(targets)))
        answered.append(case.answer(if_edits(targets[::-1])))
        if single:
            answered += [case.answer(if_edits([t])) for t in targets]
    return answered


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_target_cache_near_the_length_bound(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Targets near 256 bytes equal but for one byte (the last, or one inside at each step of
    the compare): each keys its own entry."""
    answered = rounds(Case(decoder, fx_schema, IF, shape), near_bound())
    assert set(answered) == {"native"}, answered


def test_native_target_cache_beyond_its_bound_in_one_notification(
    decoder: Any, fx_schema: SchemaContext
) -> None:
    """5,000 distinct targets in one notification (the table fills at 4,096 and stays full
    while it is read), again, and then a notification of the first and last ones."""
    case = Case(decoder, fx_schema, IF, "json")
    targets = [f"{IF}=e{n:04}%2F{n % 7}" for n in range(5000)]
    answered = rounds(case, targets, single=False)
    answered.append(case.answer(if_edits(targets[:300] + targets[-300:])))
    assert set(answered) == {"native"}, answered


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_target_cache_escapes_and_composite_keys(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Escaped key values (``%2F``, ``%25``, ``%2C``: a comma in a value against a real one)
    and three-part keys, each target also repeated in one notification."""
    case = Case(decoder, fx_schema, FLOW, shape)
    targets = [
        f"{FLOW}=yk-test%3Atcp,80,true",
        f"{FLOW}=yk-test%3Atcp,81,true",
        f"{FLOW}=yk-test%3Atcp,80,false",
        f"{FLOW}=yk-aug:sctp,9,false",
        f"{FLOW}=yk-aug:sctp,9,true",
        f"{FLOW}=yk-test%3Audp,0080,true",
    ]
    edits = [edit("delete", t) for t in targets]
    answered = [case.answer(edits), case.answer(edits * 3), case.answer(edits[::-1] * 2)]
    answered += [case.answer([e]) for e in edits] * 2
    sites = Case(decoder, fx_schema, f"{SITE}/rack", shape)
    names = ["a%2Fb", "a%25b", "a%2Cb", "a,b", "a%2C", "%2Cb", "a%2F%2F", "a%252F", "ab%2F"]
    site_edits = [edit("delete", f"{SITE}={name}/rack={n}") for n, name in enumerate(names)]
    site_edits += [edit("delete", f"{SITE}={name}/rack=7") for name in names]
    for _ in range(2):
        answered.append(sites.answer(site_edits))
        answered.append(sites.answer(site_edits[::-1] + site_edits))
        answered += [sites.answer([e]) for e in site_edits]
    assert "native" in answered, answered
    assert set(answered) <= {"native", "python"}, answered


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_target_cache_many_steps(decoder: Any, fx_schema: SchemaContext, shape: str) -> None:
    """Targets of 14 to 18 steps (past 16 not kept), equal but for a key of their second
    step or their last segment."""
    case = Case(decoder, fx_schema, f"{SITE}/rack", shape)
    targets = []
    for extra in range(11, 16):
        for site in ("s%2F1", "s%2F2"):
            for rack in ("1", "2"):
                beyond = "".join(f"/descr{n}" for n in range(extra))
                targets.append(f"{SITE}={site}/rack={rack}{beyond}")
                targets.append(f"{SITE}={site}/yk-test:rack={rack}{beyond}x")
    targets += [f"{SITE}=s%2F{n}/rack={n}" for n in range(3)]
    edits = [edit("delete", t) for t in targets]
    answered = [case.answer(edits), case.answer(edits[::-1])]
    answered += [case.answer([e]) for e in edits] * 2
    assert "native" in answered, answered


def in_a_thread(run: Callable[[], list[str]]) -> list[str]:
    """``run``'s answers, called in a thread of its own (a thread's first yang-patch makes its
    table, reading the test hook then)."""
    result: list[list[str]] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(run())
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_target_cache_every_target_one_hash(
    decoder: Any, fx_schema: SchemaContext, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every target of one hash (the test hook): the first eight kept share one run of slots,
    the rest parsed each time; only the compare of the bytes tells them apart."""
    monkeypatch.setenv("YANGKEY_NATIVE_TARGET_HASH", "constant")
    case = Case(decoder, fx_schema, IF, shape)
    flows = Case(decoder, fx_schema, FLOW, shape)
    short = [f"{IF}=eth%2F{n}" for n in range(12)] + [f"{IF}=e{n}" for n in range(3)]

    middle = [padded(256, "q", at) for at in (45, 100, 161, 239)]
    middle += [padded(length, "q", 45) for length in (200, 240, 247)]
    flow = [edit("delete", f"{FLOW}=yk-test%3Atcp,{p},true") for p in (80, 81, 8, 0)]
    # one thread (a table of its own) each: eight targets at most are kept in a run
    answered = in_a_thread(lambda: rounds(case, short))
    answered += in_a_thread(lambda: rounds(case, middle) + rounds(case, near_bound()[:12]))
    answered += in_a_thread(
        lambda: [flows.answer(flow), flows.answer(flow[::-1]), flows.answer(flow * 2)]
    )
    assert set(answered) == {"native"}, answered


@pytest.mark.parametrize("shape", ["json", "xml"])
def test_native_target_cache_steps_shared_across_notifications(
    decoder: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """A kept target's steps serve the next notifications (lent by the table, not copied):
    a target parsed after one answered from the table reuses its first steps (a keyed one,
    whose value the table holds), is kept in its turn and answered from the table later, and
    a target kept twice in one notification; each a notification of its own or together."""
    case = Case(decoder, fx_schema, f"{SITE}/rack", shape)
    first = [f"{SITE}=x%2F{n}/rack=1" for n in range(3)]
    then = [f"{SITE}=x%2F{n}/rack={r}" for n in range(3) for r in (2, 30, 1)]
    other = [f"{SITE}=y%2C{n}/rack=4" for n in range(3)]

    def delete(targets: list[str]) -> list[dict[str, Any]]:
        return [edit("delete", t) for t in targets]

    answered = []
    for turn in range(2):
        answered.append(case.answer(delete(first)))
        answered.append(case.answer(delete(then)))
        answered += [case.answer(delete([t, t])) for t in then + other]
        answered.append(case.answer(delete(other + then[::-1] + first)))
        # a kept target, then a new one of its first step (reused from the kept one's), then
        # the new one alone (answered from the table, its first step's value kept anew)
        for n, kept in enumerate(first):
            new = f"{SITE}=x%2F{n}/rack={50 + turn}"
            answered.append(case.answer(delete([kept, new])))
            answered.append(case.answer(delete([new])))
            answered.append(case.answer(delete([first[-1 - n], new, kept])))
    assert set(answered) == {"native"}, answered
