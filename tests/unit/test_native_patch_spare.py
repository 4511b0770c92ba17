"""Issue 33: the native yang-patch walk (native/src/patchwalk.rs) renders its XPaths into the
same per-thread spare vectors and strings as the push-update key pass (native/src/walk.rs's
``Spare``, through ``spared``: emptied after each pass, strings and vectors past 4,096 not
kept, a fresh set for a pass inside a pass). Its answers must stay the reference's whatever
came before on the thread, whichever pass left the spare: long XPaths then short ones (a string
reused must not keep the older text), many edits then one (a vector reused must not keep older
XPaths), a pass that stops part way through its edits (the reference answers) then a good one,
a three-branch subscription then a one-branch one (a branch's vector must not reach the next
pass), JSON yang-patch, XML yang-patch, push-update and the instance feed alternately, and the
same sequence on several threads at once.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from native_helpers import feed_same, native_answer, on_threads, reference, same
from test_native_feed import Feeds
from test_native_keys import envelope
from test_native_patch_native import change, edit
from test_native_patch_xml import module_namespaces, xml_change, xml_edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
THREE = "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes"
LONG = "e" * 300


def merges(*names: str) -> list[dict[str, Any]]:
    """One merge edit per interface name, its value the entry."""
    return [
        edit("merge", f"{IF}={name}", {"ietf-interfaces:interface": [{"name": name}]})
        for name in names
    ]


def deletes(*names: str) -> list[dict[str, Any]]:
    return [edit("delete", f"{IF}={name}") for name in names]


def push(*names: str) -> bytes:
    entries = [{"name": name, "enabled": True} for name in names]
    return envelope({"ietf-interfaces:interfaces": {"interface": entries}})


def racks(site: str, *ids: int) -> list[dict[str, Any]]:
    """A merge of a site's racks, and a delete of one code (two of THREE's branches)."""
    value = {"yk-test:site": [{"name": site, "rack": [{"id": str(i)} for i in ids]}]}
    return [
        edit("merge", f"/yk-test:top/site={site}", value),
        edit("delete", "/yk-test:top/codes=3"),
    ]


# What is sent, in order: (subscription, kind, payload). ``json``: a JSON yang-patch's edits;
# ``xml``: the same edits as an XML yang-patch; ``push``: a push-update's bytes; ``feed``: a
# JSON yang-patch's edits through the instance feed (``Decoder.instances`` and
# ``Decoder.keys`` with instances); ``push-feed``: a push-update's bytes through it.
# ``STOPS``: the indices whose native pass must stop.
SEQUENCE: list[tuple[str, str, Any]] = [
    (IF, "json", merges(*(f"{LONG}{i}" for i in range(40)))),
    (IF, "json", merges("a")),  # a long string reused for a short XPath
    (IF, "push", push(*(f"{LONG}p{i}" for i in range(30)))),
    (IF, "json", deletes("b", "c")),  # after the push-update's long strings
    (IF, "xml", merges(*(f"{LONG}x{i}" for i in range(20)))),
    (IF, "json", merges("d")),
    (IF, "xml", deletes("x")),  # after a JSON pass's long strings
    (IF, "push", push("q")),
    # a stop after a few XPaths rendered: the reference answers, none of them kept
    (IF, "json", [*merges(*(f"{LONG}s{i}" for i in range(5))), edit("delete", f"{IF}=z,w")]),
    (IF, "json", merges("after")),
    (IF, "xml", [*deletes(*(f"{LONG}t{i}" for i in range(5))), edit("delete", f"{IF}=z,w")]),
    (IF, "xml", deletes("after-xml")),
    (THREE, "json", racks(LONG, *range(25))),
    (IF, "json", merges("one")),  # one branch after three: no branch's vector carried over
    (THREE, "json", racks("s", 1)),
    (IF, "push", push("p")),
    (THREE, "xml", racks("x" * 100, 1, 2, 3)),
    (IF, "xml", merges("one-xml")),
    (IF, "json", merges(*(f"i{i}" for i in range(5000)))),  # past the strings kept
    (IF, "json", merges("x" * 5000)),  # an XPath past the length kept
    (IF, "json", merges("y")),
    (IF, "feed", merges(*(f"{LONG}f{i}" for i in range(10)))),
    (IF, "json", deletes("g")),  # after the feed's pass
    (IF, "feed", deletes("h")),
    (IF, "push", push("r", "s")),
    (IF, "push-feed", push(*(f"{LONG}q{i}" for i in range(20)))),  # a push-update's feed
    (IF, "feed", deletes("k")),
    (IF, "push-feed", push("t")),
    (IF, "json", merges("u")),
]
STOPS = {8, 10}


def big(index: int) -> bool:
    """The 5,000 edits: once in the sequence is enough."""
    payload = SEQUENCE[index][2]
    return isinstance(payload, list) and len(payload) > 1000


@functools.cache
def _feeds() -> Feeds:
    schema = SchemaContext.cached()
    return Feeds(compile_subscription(IF, schema), schema)


def raw_of(kind: str, payload: Any, schema: SchemaContext) -> bytes:
    if kind in ("push", "push-feed"):
        assert isinstance(payload, bytes)
        return payload
    if kind == "xml":
        namespaces = module_namespaces(schema)
        return xml_change("".join(xml_edit(e, namespaces) for e in payload))
    return change(payload)


def send(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    schema: SchemaContext,
    index: int,
) -> str:
    """The sequence's ``index``-th notification through its pass, checked against the
    reference; which path answered."""
    text, kind, payload = SEQUENCE[index]
    raw = raw_of(kind, payload, schema)
    ns = schema.index.by_namespace
    if kind in ("feed", "push-feed"):
        return feed_same(decoder, _feeds(), raw, ns)
    entry = "keys_xml" if kind == "xml" else "keys"
    return same(decoder, derivers[text][0], raw, ns, "dflt", entry)


def test_native_patch_spare_sequence(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """Each notification's answer is the reference's whatever the thread sent before, native
    but where the pass must stop (twice over: the second round starts with what the first
    one's end left)."""
    for _ in range(2):
        for index in range(len(SEQUENCE)):
            answered = send(decoder, derivers, fx_schema, index)
            wanted = "python" if index in STOPS else "native"
            assert answered == wanted, (index, SEQUENCE[index][:2])


def test_native_patch_spare_alternating(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """Every pair of the sequence's notifications, one right after the other (whichever pass
    left the spare, the next one's answer is the reference's)."""
    for first in range(len(SEQUENCE)):
        for second in range(len(SEQUENCE)):
            if big(first) or big(second):
                continue
            send(decoder, derivers, fx_schema, first)
            answered = send(decoder, derivers, fx_schema, second)
            assert answered == ("python" if second in STOPS else "native"), (first, second)


def test_native_patch_spare_threads(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """The JSON and XML yang-patches and push-updates of the sequence on four threads at
    once, each from another place in it: every native answer is the reference's (each thread
    has its own spare)."""
    ns = fx_schema.index.by_namespace
    picked = [
        (index, text, kind, raw_of(kind, payload, fx_schema))
        for index, (text, kind, payload) in enumerate(SEQUENCE)
        if "feed" not in kind and not big(index)
    ]
    wanted = [reference(derivers[text][0], raw, ns, "dflt") for _, text, _, raw in picked]
    failures: list[str] = []

    def run(start: int) -> None:
        for step in range(3 * len(picked)):
            at = (start + step * (1 + start)) % len(picked)
            index, text, kind, raw = picked[at]
            entry = "keys_xml" if kind == "xml" else "keys"
            got = native_answer(decoder, derivers[text][0], raw, ns, "dflt", entry)
            if (got is None) != (index in STOPS) or (got is not None and got != wanted[at]):
                failures.append(f"thread {start}, notification {index}")

    on_threads(run)
    assert failures == []


# A data filter on a step that reads what edit_tree puts in its node besides the value (the
# next step's member, or a key leaf): the native walk leaves these to the reference
# (patchwalk.rs's ``filters_clash``, skipped for the steps without filters).
CLASHES: list[tuple[str, list[dict[str, Any]]]] = [
    (
        f"/yk-test:top/site[region='{want}']/region",
        [edit("merge", "/yk-test:top/site=p/region", value)],
    )
    for want in ("eu", "us")
    for value in ({"yk-test:region": "us"}, {"region": "eu"})
] + [
    (
        "/yk-test:top/site[region='eu']/rack",
        [edit("merge", "/yk-test:top/site=p/rack=1", {"yk-test:rack": [{"id": "1"}]})],
    ),
    ("/yk-test:top/site[region='eu']/rack", [edit("delete", "/yk-test:top/site=p/rack=1")]),
]


@pytest.mark.parametrize(("text", "edits"), CLASHES)
@pytest.mark.parametrize("kind", ["json", "xml"])
def test_native_patch_filter_clash(
    decoder: Any, fx_schema: SchemaContext, text: str, edits: list[dict[str, Any]], kind: str
) -> None:
    """Whoever answers, the answer is the reference's (twice: the second time after the
    first left the thread's spare)."""
    deriver = KeyDeriver(compile_subscription(text, fx_schema))
    ns = fx_schema.index.by_namespace
    entry = "keys_xml" if kind == "xml" else "keys"
    raw = raw_of(kind, edits, fx_schema)
    for _ in range(2):
        same(decoder, deriver, raw, ns, "dflt", entry)
