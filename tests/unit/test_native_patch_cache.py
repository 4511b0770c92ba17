"""Issue 33: the native yang-patch key pass keeps the targets it parsed, by their bytes
(native/src/patchtarget.rs's ``Cache``: one map per thread, emptied past 4,096 targets,
targets over 256 bytes not kept), so a target seen in an earlier edit or notification is not
parsed again. Its answers must stay the reference's: the same target shape with other key
values (same length, other escapes, an escaped comma against a real one), a bad target after a
good one of the same shape (the bad one is never kept: bad escapes, a key too many, no module,
no leading ``/``, an unknown node), and more distinct targets than the map keeps, sent again
after it was emptied; JSON and XML yang-patch (the same parse serves both).

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest
from native_helpers import native_answer, reference, same
from test_native_patch_native import change, edit
from test_native_patch_xml import module_namespaces, xml_change, xml_edit

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"

# Targets of one shape and length whose key values differ (a stale answer keys the wrong
# entry, or one key where the reference has two)
SAME_SHAPE = [
    f"{IF}=eth%2F0",
    f"{IF}=eth%2F1",
    f"{IF}=eth%2C1",
    f"{IF}=eth%2F%31",
    f"{IF}=eth0%2F1",
    f"{IF}=ETH%2F0",
    f"{IF}=%C3%BCth0",
    f"{IF}={'e' * 250}%2F0",  # too long to be kept: parsed every time
    f"{IF}={'e' * 250}%2F1",
]

# Bad targets of the shapes above (the reference refuses or does not follow them)
BAD_AFTER_GOOD = [
    f"{IF}=eth%2G0",  # bad escape
    f"{IF}=eth%2",  # escape cut short
    f"{IF}=eth%C3",  # not UTF-8
    f"{IF}=eth,%2F0",  # a key too many
    f"{IF}=eth%2F0,",  # an empty key too many
    "/interfaces/interface=eth%2F0",  # no module
    "ietf-interfaces:interfaces/interface=eth%2F0",  # no leading '/'
    "/ietf-interfaces:interfaces/interfacx=eth%2F0",  # unknown node
    "/ietf-interfaces:interfacex/interface=eth%2F0",  # unknown node
    f"{IF}x=eth%2F0",  # unknown node
    f"{IF}=eth%2F0" + "/name" * 17,  # more steps than a kept target has
]


def value(name: str) -> dict[str, Any]:
    return {"ietf-interfaces:interface": [{"name": name, "enabled": True}]}


def decoded(target: str) -> str:
    return unquote(target.partition("=")[2])


def check(decoder: Any, deriver: KeyDeriver, raw: bytes, ns: dict[str, str], entry: str) -> str:
    """The native answer is the reference's; where the reference raises, the native pass
    answers None (so the error kind and message are the reference's)."""
    want = reference(deriver, raw, ns, "dflt")
    if want[0] == "error":
        assert native_answer(decoder, deriver, raw, ns, "dflt", entry) is None, raw
        return "python"
    return same(decoder, deriver, raw, ns, "dflt", entry)


def json_raw(edits: list[dict[str, Any]]) -> bytes:
    return change(edits)


def patch_raw(shape: str, edits: list[dict[str, Any]], namespaces: dict[str, str]) -> bytes:
    """A yang-patch of ``edits`` in JSON or, ``shape`` "xml", in XML."""
    if shape == "json":
        return change(edits)
    return xml_change("".join(xml_edit(e, namespaces) for e in edits))


@pytest.mark.parametrize("shape", ["json", "xml"])
@pytest.mark.parametrize("text", [IF, f"{IF}/name"])
def test_native_patch_cache_same_shape_other_keys(
    decoder: Any, fx_schema: SchemaContext, shape: str, text: str
) -> None:
    """The same target shape with other key values, one edit per notification and all in one,
    twice over (the second round from the cache): keyed natively, the reference's keys."""
    deriver = KeyDeriver(compile_subscription(text, fx_schema))
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    entry = "keys" if shape == "json" else "keys_xml"

    def raw(targets: list[str], with_value: bool) -> bytes:
        edits = [
            edit("merge", t, value(decoded(t))) if with_value else edit("delete", t)
            for t in targets
        ]
        return patch_raw(shape, edits, namespaces)

    answered = []
    for _ in range(2):
        for with_value in (False, True):
            for target in SAME_SHAPE:
                answered.append(check(decoder, deriver, raw([target], with_value), ns, entry))
            answered.append(check(decoder, deriver, raw(SAME_SHAPE, with_value), ns, entry))
            answered.append(check(decoder, deriver, raw(SAME_SHAPE[::-1], with_value), ns, entry))
    assert set(answered) == {"native"}, answered


@pytest.mark.parametrize("shape", ["json", "xml"])
@pytest.mark.parametrize("bad", BAD_AFTER_GOOD)
def test_native_patch_cache_bad_after_good(
    decoder: Any, fx_schema: SchemaContext, shape: str, bad: str
) -> None:
    """A bad target after good ones of its shape (in earlier notifications, and before it in
    the same one), and again: never taken for a good one; the reference words the error
    (native None) or keys what it keys."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    namespaces = module_namespaces(fx_schema)
    entry = "keys" if shape == "json" else "keys_xml"

    def raw(targets: list[str]) -> bytes:
        edits = [edit("delete", t) for t in targets]
        return patch_raw(shape, edits, namespaces)

    good = f"{IF}=eth%2F0"
    assert check(decoder, deriver, raw([good]), ns, entry) == "native"
    for _ in range(2):
        check(decoder, deriver, raw([bad]), ns, entry)
        check(decoder, deriver, raw([good, bad]), ns, entry)
        check(decoder, deriver, raw([bad, good]), ns, entry)
        assert check(decoder, deriver, raw([good]), ns, entry) == "native"


def test_native_patch_cache_beyond_its_bound(decoder: Any, fx_schema: SchemaContext) -> None:
    """More distinct targets than the cache keeps (4,096), in notifications of 1,000 edits,
    then the first ones again with other values and mixed with new ones: every answer the
    reference's."""
    deriver = KeyDeriver(compile_subscription(IF, fx_schema))
    ns = fx_schema.index.by_namespace
    names = [f"eth{n // 100}%2F{n % 100}" for n in range(5200)]  # unlike in the last bytes
    batches = [names[at : at + 1000] for at in range(0, len(names), 1000)]
    batches += [names[:1000], names[4500:] + names[:500], names[::-9]]
    for batch in batches:
        edits = [
            edit("merge", f"{IF}={name}", value(decoded(f"={name}")))
            if n % 3
            else edit("delete", f"{IF}={name}")
            for n, name in enumerate(batch)
        ]
        assert check(decoder, deriver, json_raw(edits), ns, "keys") == "native"
