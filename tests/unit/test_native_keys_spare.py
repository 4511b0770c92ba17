"""Issue 33: the native JSON key pass keeps its vectors and XPath strings from one
notification to the next (native/src/walk.rs's ``Spare``: one set per thread, emptied after
each pass, strings and vectors past 4,096 not kept). Its answers must stay the reference's
whatever came before on the thread: long XPaths then short ones (a string reused must not keep
the older text), many instances then one (a vector reused must not keep older XPaths), a pass
that stops part way through its instances (the reference answers) then a good one, instances
and XPaths past what is kept, several branches some of them empty, and the same sequences on
several threads at once.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from native_helpers import native_answer, on_threads, reference, same
from test_native_keys import envelope

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
THREE = "/yk-test:top/flow | /yk-test:top/site/rack | /yk-test:top/codes"


def interfaces(*names: str) -> bytes:
    entries = [{"name": name, "enabled": True} for name in names]
    return envelope({"ietf-interfaces:interfaces": {"interface": entries}})


def top(sites: list[dict[str, Any]] | None = None, codes: list[int] | None = None) -> bytes:
    body: dict[str, Any] = {}
    if sites is not None:
        body["site"] = sites
    if codes is not None:
        body["codes"] = codes
    return envelope({"yk-test:top": body})


def site(name: str, *racks: int) -> dict[str, Any]:
    return {"name": name, "rack": [{"id": str(rack)} for rack in racks]}


# (subscription, notification, whether the native pass answers it), in the order sent
SEQUENCE: list[tuple[str, bytes, bool]] = [
    (IF, interfaces(*(f"{'e' * 300}{i}" for i in range(40))), True),
    (IF, interfaces("e"), True),  # a string reused: the older, longer text not kept
    (IF, interfaces("f", "e"), True),
    (IF, interfaces("a'b", 'q"x', "a'\"b"), True),  # quoted three ways
    (IF, interfaces("z"), True),
    (IF, interfaces("ok", "ok2", "longer-name-" * 20), True),
    (IF, envelope({"ietf-interfaces:interfaces": {"interface": [{"name": "ok"}, {}]}}), False),
    (IF, interfaces("after"), True),  # after a pass that stopped with an XPath rendered
    (IF, interfaces(*(f"i{i}" for i in range(5000))), True),  # past the instances kept
    (IF, interfaces("x" * 5000), True),  # an XPath past the length kept
    (IF, interfaces("y"), True),
    (THREE, top([site("s" * 200, *range(30)), site("t", 1, 2)], list(range(25))), True),
    (THREE, top(codes=[3]), True),  # the rack branch empty: its older XPaths not kept
    (THREE, top([site("u", 9)]), True),
    (THREE, top([site("v", 1), {"rack": [{"id": "2"}]}], [1, 2]), False),  # stops
    (THREE, top([site("w", 4)], [7]), True),
    (IF, interfaces("e0"), True),  # another walker after the three-branch one
    (THREE, top(codes=[]), False),  # no instance: the reference answers
    (THREE, top([site("n", 5)]), True),
]


def test_native_keys_spare_sequence(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """Each notification's answer is the reference's whatever the thread sent before (twice
    over: the second pass starts with what the first one's end left)."""
    ns = fx_schema.index.by_namespace
    for _ in range(2):
        for text, raw, native in SEQUENCE:
            deriver, _ = derivers[text]
            answered = same(decoder, deriver, raw, ns, None)
            assert answered == ("native" if native else "python"), (text, raw[:200])


def test_native_keys_spare_threads(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """The sequence on four threads at once, each from another place in it: every answer is
    the reference's (each thread has its own spare vectors)."""
    ns = fx_schema.index.by_namespace
    wanted = [reference(derivers[text][0], raw, ns, None) for text, raw, _ in SEQUENCE]
    failures: list[str] = []

    def run(start: int) -> None:
        for step in range(3 * len(SEQUENCE)):
            index = (start + step * (1 + start)) % len(SEQUENCE)
            text, raw, native = SEQUENCE[index]
            got = native_answer(decoder, derivers[text][0], raw, ns, None)
            if native and got != wanted[index]:
                failures.append(f"thread {start}, {text}, notification {index}")

    on_threads(run)
    assert failures == []
