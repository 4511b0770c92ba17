"""Issue 33: the native key's XPath sort on inputs made of ordered runs (native/src/keytext.rs).

A router lists its interfaces by number, so the rendered XPaths arrive as a few ascending runs
in code-point order (``.../0'`` .. ``.../9'``, then ``.../10'`` .. ``.../99'``, ...) that
interleave; the sort merges such runs (a stable merge sort that finds them) instead of
partitioning. Every answer must be the reference's byte for byte, for the JSON push-update,
the JSON yang-patch, the XML push-update and the XML yang-patch: numbered names at 1, 10, 100,
1,000 and 5,000 instances (5,000 distinct targets: more than the yang-patch target cache keeps),
runs ascending and descending, runs whose names repeat across runs (the dedup after the merge),
runs that tie on the sort's 8-byte word past the common prefix and differ later, runs sharing
prefixes of every length, runs differing in the last byte only, and several branches.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

import pytest
from native_helpers import same
from test_native_key_order import IF, THREE, raw_of
from test_native_keys_spare import site, top
from test_native_patch_xml import NS_IF, xml_change
from test_native_xml_keys import same as xml_same

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

SHAPES = ["json", "yang-patch", "xml", "xml-patch"]


def raw(shape: str, names: list[str]) -> bytes:
    """A notification of one interface entry (or one merge edit) per name, in that order."""
    if shape != "xml-patch":
        return raw_of(shape, names)
    edits = "".join(
        f"<edit><edit-id>{index}</edit-id><operation>merge</operation>"
        f"<target>{IF}={escape(quote(name, safe=''))}</target><value>"
        f'<interface xmlns="{NS_IF}"><name>{escape(name)}</name></interface></value></edit>'
        for index, name in enumerate(names)
    )
    return xml_change(edits, "envelope", 7)


def check(
    shape: str, names: list[str], decoder: Any, derivers: Any, schema: SchemaContext
) -> None:
    """The native answer for ``names`` is there and is the reference's."""
    deriver: KeyDeriver = derivers[IF][0]
    ns = schema.index.by_namespace
    data = raw(shape, names)
    if shape.startswith("xml"):
        answered = xml_same(decoder, deriver, data, ns, None)
    else:
        answered = same(decoder, deriver, data, ns, None)
    assert answered == "native", (shape, len(names), names[:4])


def numbered(count: int, head: str = "GigabitEthernet0/0/") -> list[str]:
    """Names numbered as a router numbers them: ascending runs by digit count."""
    return [f"{head}{i}" for i in range(count)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("count", [1, 10, 100, 1000])
def test_native_key_runs_numbered(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str, count: int
) -> None:
    """Numbered names in router order, reversed (descending runs), rotated (a run split),
    and every name twice in two passes (repeats one run apart)."""
    names = numbered(count)
    half = count // 2
    for listed in (names, names[::-1], names[half:] + names[:half], names + names):
        check(shape, listed, decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_runs_many(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """5,000 numbered names (more distinct targets than the target cache keeps), in router
    order and shuffled runs of 250, with some repeated far apart."""
    names = numbered(5000, "ge-")
    rng = random.Random(5)
    chunks = [names[i : i + 250] for i in range(0, len(names), 250)]
    rng.shuffle(chunks)
    shuffled = [name for chunk in chunks for name in chunk]
    check(shape, names, decoder, derivers, fx_schema)
    check(shape, shuffled + names[::97], decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_runs_word_ties(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Runs of names that tie on the 8 bytes past their common prefix and differ later (or
    in their last byte, or in length only), ascending runs interleaved, some names in two
    runs."""
    rng = random.Random(9)
    for length in (0, 1, 7, 8, 9, 16, 17, 40):
        head = "p" * length
        tails = [f"{head}{'w' * 8}{i:03d}" for i in range(60)]
        tails += [f"{head}{'w' * 8}{'z' * 5}{c}" for c in "0129AZaz"]
        tails += [f"{head}{'w' * 8}", f"{head}{'w' * 7}", f"{head}{'w' * 9}"]
        ordered = sorted(set(tails))
        runs = [ordered[i::4] for i in range(4)]  # four ascending runs, interleaved
        merged = [name for run in runs for name in run]
        descending = [name for run in runs for name in run[::-1]]
        repeated = merged + rng.sample(ordered, 10)
        for listed in (merged, descending, repeated, runs[0] + runs[0]):
            check(shape, listed, decoder, derivers, fx_schema)


@pytest.mark.parametrize("shape", SHAPES)
def test_native_key_runs_prefixes(
    decoder: Any, derivers: Any, fx_schema: SchemaContext, shape: str
) -> None:
    """Two interleaved ascending runs of names sharing a prefix of every length 0..40 and
    differing in one last byte, some repeated."""
    for length in range(41):
        head = "".join(chr(ord("a") + i % 26) for i in range(length))
        ordered = [head + c for c in "0123456789ABCDEFéz"]
        listed = ordered[::2] + ordered[1::2] + ordered[3:5]
        check(shape, listed, decoder, derivers, fx_schema)


def test_native_key_runs_branches(
    decoder: Any, derivers: Any, fx_schema: SchemaContext
) -> None:
    """Three branches, each branch's XPaths arriving as interleaved ascending runs."""
    deriver: KeyDeriver = derivers[THREE][0]
    ns = fx_schema.index.by_namespace
    for count in (3, 12, 40):
        racks = list(range(count))
        runs = racks[::3] + racks[1::3] + racks[2::3]
        sites = [site(f"s{i}", *runs) for i in (10, 2, 1, 20)]
        codes = runs + runs[:5]
        for raw_bytes in (top(sites, codes), top(sites[::-1]), top(codes=codes)):
            assert same(decoder, deriver, raw_bytes, ns, None) == "native", raw_bytes[:80]
