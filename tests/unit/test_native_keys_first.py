"""Issue 33: the JSON push-update's walk finds a member by its first name (walk.rs
``lookup_first``: a JSON document's parse refuses any member named twice, so the scan stops at
the plain member, or once both spellings were seen) and answers as the reference's
``dict.get(plain)``, else ``dict.get(qualified)``, a null as absent, reads them.

Every arrangement of a plain and a module-qualified spelling (absent, null, a value), in either
order, with other members before, between and after them, at each place the walk looks a member
up: a list step (``interface``), an entry's key (``name``) and a filtered leaf (``type``). Where
the reference keys the notification the native pass must answer itself (no fallback in
disguise) with the reference's answer.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from native_helpers import reference, same

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

yangkey_native = pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

IF = "/ietf-interfaces:interfaces/interface"
TYPED = "/ietf-interfaces:interfaces/interface[type='iana-if-type:ethernetCsmacd']"
ETHERNET = "iana-if-type:ethernetCsmacd"

ABSENT = object()


def envelope(interfaces: Any) -> bytes:
    body = {
        "event-time": "2026-11-20T10:00:00Z",
        "sequence-number": 3,
        "hostname": "pe1",
        "contents": {
            "ietf-yang-push:push-update": {
                "id": 7,
                "datastore-contents": {"ietf-interfaces:interfaces": interfaces},
            }
        },
    }
    return orjson.dumps({"ietf-yp-notification:envelope": body})


def arrangements(
    name: str, module: str, plain_values: list[Any], qualified_values: list[Any]
) -> list[list[tuple[str, Any]]]:
    """Members holding ``name`` plainly and ``module:name`` (each absent, null or a value), in
    either order, with filler members before, between and after them."""
    found = []
    for plain, qualified in itertools.product(plain_values, qualified_values):
        spelled = [(name, plain), (f"{module}:{name}", qualified)]
        spelled = [(k, v) for k, v in spelled if v is not ABSENT]
        for order in itertools.permutations(spelled):
            for fill in ("none", "before", "between", "after"):
                members = list(order)
                filler = [("description", "d"), ("oper-status", "up")]
                if fill == "before":
                    members = filler + members
                elif fill == "between":
                    members = members[:1] + filler + members[1:]
                elif fill == "after":
                    members = members + filler
                found.append(members)
    return found


KEY_CASES = arrangements("name", "ietf-interfaces", [ABSENT, None, "a"], [ABSENT, None, "b"])
LIST_CASES = arrangements(
    "interface", "ietf-interfaces", [ABSENT, None, [{"name": "p"}]], [ABSENT, None, {"name": "q"}]
)
TYPE_CASES = arrangements(
    "type", "ietf-interfaces", [ABSENT, None, ETHERNET, "iana-if-type:other"], [None, ETHERNET]
)


def check(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    text: str,
    interfaces: Any,
) -> str:
    deriver, _ = derivers[text]
    raw = envelope(interfaces)
    ns = fx_schema.index.by_namespace
    answered = same(decoder, deriver, raw, ns, None)
    if reference(deriver, raw, ns, None)[0] == "ok":
        assert answered == "native", raw
    return answered


@pytest.mark.parametrize("members", KEY_CASES, ids=str)
def test_native_keys_first_key_spellings(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    members: list[tuple[str, Any]],
) -> None:
    """An entry's key leaf spelled plainly, qualified, both (either first), null or absent;
    a second entry keyed plainly."""
    entry = dict(members)
    check(decoder, derivers, fx_schema, IF, {"interface": [entry, {"name": "z"}]})


@pytest.mark.parametrize("members", LIST_CASES, ids=str)
def test_native_keys_first_list_spellings(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    members: list[tuple[str, Any]],
) -> None:
    """The list member itself spelled plainly, qualified, both, null or absent."""
    check(decoder, derivers, fx_schema, IF, dict(members))


@pytest.mark.parametrize("members", TYPE_CASES, ids=str)
def test_native_keys_first_filter_spellings(
    decoder: Any,
    derivers: dict[str, tuple[KeyDeriver, Any]],
    fx_schema: SchemaContext,
    members: list[tuple[str, Any]],
) -> None:
    """A filtered leaf (``[type=...]``) spelled plainly, qualified, both, null or absent: the
    entry passes or not as the spelling the reference reads says."""
    entry = {"name": "a", **dict(members)}
    check(decoder, derivers, fx_schema, TYPED, {"interface": [entry, {"name": "z"}]})


def test_native_keys_first_many_entries(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """1,000 entries mixing every key arrangement: one answer, the reference's."""
    entries = [dict(KEY_CASES[i % len(KEY_CASES)]) for i in range(1000)]
    for i, entry in enumerate(entries):  # distinct instances where a key is read
        for spelling in ("name", "ietf-interfaces:name"):
            if isinstance(entry.get(spelling), str):
                entry[spelling] += str(i)
    assert check(decoder, derivers, fx_schema, IF, {"interface": entries}) in ("native", "python")


OCTETS = "/ietf-interfaces:interfaces/interface/statistics/in-octets"
STATISTICS_CASES = arrangements(
    "statistics",
    "ietf-interfaces",
    [ABSENT, None, {"in-octets": 5}],
    [ABSENT, None, {"in-octets": 6}],
)


def yang_patch(edits: list[dict[str, Any]]) -> bytes:
    changes = {"yang-patch": {"patch-id": "p", "edit": edits}}
    body = {"ietf-yang-push:push-change-update": {"id": 7, "datastore-changes": changes}}
    envelope = {
        "event-time": "2026-11-20T10:00:00Z",
        "sequence-number": 3,
        "hostname": "pe1",
        "contents": body,
    }
    return orjson.dumps({"ietf-yp-notification:envelope": envelope})


def test_native_keys_first_in_yang_patch_values(
    decoder: Any, derivers: dict[str, tuple[KeyDeriver, Any]], fx_schema: SchemaContext
) -> None:
    """A JSON yang-patch's edit values walked below their entry (``statistics``) in every
    spelling: each edit alone, then all of them in one patch, as the reference reads them."""
    deriver, _ = derivers[OCTETS]
    ns = fx_schema.index.by_namespace
    edits = []
    for index, members in enumerate(STATISTICS_CASES):
        entry = {"name": f"e{index}", **dict(members)}
        edits.append(
            {
                "edit-id": str(index),
                "operation": "merge",
                "target": f"/ietf-interfaces:interfaces/interface=e{index}",
                "value": {"ietf-interfaces:interface": [entry]},
            }
        )
    answers = []
    for raw in [yang_patch([edit]) for edit in edits] + [yang_patch(edits)]:
        answers.append(same(decoder, deriver, raw, ns, None))
        if reference(deriver, raw, ns, None)[0] == "ok":
            assert answers[-1] == "native", raw
    assert answers.count("native") >= len(edits) // 2, answers
