"""What the native differential tests (tests/unit/test_native_*.py) share: one notification's
answer from a native key entry point (``Decoder.keys`` or ``Decoder.keys_xml``) against the
Python reference's, the public key vectors, and MessageBuilder and ``yangkey keys`` run with
the native pass and without.

A plain module, not fixtures (a fixture imported into a test module is a name ruff sees
redefined): each test module keeps its own module-scoped ``decoder`` and builds the rest from
here. ``tests/unit`` is on ``sys.path`` when its tests run, so they write ``from native_helpers
import ...``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_core_differential import SUBSCRIPTIONS
from test_core_vectors import _vector_file

import yangkey.native_messages
import yangkey.producer
from yangkey import native
from yangkey.catalog import load_catalog
from yangkey.compiled import CompiledSubscription
from yangkey.errors import YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.notifications import decode as python_decode
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
Answer = tuple[Any, ...]
KeysCall = Callable[..., Any]


def derivers_of(schema: SchemaContext) -> dict[str, tuple[KeyDeriver, Any]]:
    """Every subscription of the differential tests: its deriver and its schema root."""
    found: dict[str, tuple[KeyDeriver, Any]] = {}
    for text in SUBSCRIPTIONS:
        compiled = compile_subscription(
            text, schema, keyless="position" if "sample" in text else "reject"
        )
        found[text] = (KeyDeriver(compiled), schema.schema_root(compiled.modules))
    return found


def reference(
    deriver: KeyDeriver,
    raw: bytes,
    ns: dict[str, str],
    default_node: str | None,
    pruned: bool = False,
) -> Answer:
    """The Python path's answer (the decode reading only what the walkers read when
    ``pruned``, as MessageBuilder decodes XML), or the error raised."""
    try:
        wanted = (lambda _note: deriver.wanted) if pruned else None
        note = python_decode(raw, "t", ns, wanted)
        derived = deriver.derive(note, default_node=default_node)
    except YangkeyError as exc:
        return ("error", type(exc).__name__, exc.kind, str(exc))
    branch_keys = tuple(
        derived.branch_key(index) if xpaths else None
        for index, xpaths in enumerate(derived.branch_xpaths)
    )
    return (
        "ok",
        note.subscription_id,
        note.sequence_number,
        note.event_time,
        derived.key,
        branch_keys,
        derived.xpaths,
    )


def native_answer(
    decoder: Any,
    deriver: KeyDeriver,
    raw: bytes,
    ns: dict[str, str],
    default_node: str | None,
    entry: str = "keys",
) -> Answer | None:
    """The answer of ``decoder``'s native key pass ``entry`` (``keys``; ``keys_xml``: the same
    arguments and answer), routed as MessageBuilder routes (node or default node)."""
    assert deriver.native is not None

    def route(subscription_id: int, node: str | None) -> tuple[Any, str, Any] | None:
        assert type(subscription_id) is int
        name = node or default_node
        return None if not name else (deriver.native, name, ("extra", subscription_id))

    found = getattr(decoder, entry)(raw, "t", ns, route, True)
    if found is None:
        return None
    extra, subscription_id, sequence, event_time, key, branch_keys, xpaths = found
    assert extra == ("extra", subscription_id)
    return ("ok", subscription_id, sequence, event_time, key, branch_keys, xpaths)


def same(
    decoder: Any,
    deriver: KeyDeriver,
    raw: bytes,
    ns: dict[str, str],
    default_node: str | None,
    entry: str = "keys",
) -> str:
    """Asserts that the native answer (:func:`native_answer`), when there is one, is the
    reference's, to the type (for anything but a JSON document, the reference's full and
    pruned decode both: the selection prunes XML only); returns which path answered."""
    got = native_answer(decoder, deriver, raw, ns, default_node, entry)
    if got is None:
        return "python"
    for pruned in (False,) if raw.lstrip()[:1] == b"{" else (False, True):
        want = reference(deriver, raw, ns, default_node, pruned)
        assert got == want, (pruned, raw)
        assert [type(v) for v in got] == [type(v) for v in want]
    return "native"


def key_vectors(
    schema: SchemaContext, first: str
) -> Iterator[tuple[dict[str, Any], CompiledSubscription]]:
    """Every public key vector whose notification starts with ``first`` (``{`` or ``<``), its
    subscription compiled against ``schema``; skips the test when the vectors are not found."""
    vectors = _vector_file()
    if not vectors.is_file():
        pytest.skip(f"public vectors not found at {vectors} (set YANGKEY_VECTORS)")
    for line in vectors.read_text(encoding="utf-8").splitlines():
        vector = json.loads(line)
        if vector["kind"] != "key" or not vector["notification"].lstrip().startswith(first):
            continue
        if "subtree" in vector:
            yield vector, compile_subscription(vector["subtree"], schema, subtree=True)
        else:
            yield vector, compile_subscription(vector["xpath"], schema)


def vectors_keyed(decoder: Any, schema: SchemaContext, first: str, entry: str = "keys") -> int:
    """How many public key vectors starting with ``first`` there are; asserts that the native
    pass ``entry`` answers every one, with the reference's answer and the vector's key."""
    ns = schema.index.by_namespace
    answered = 0
    for vector, compiled in key_vectors(schema, first):
        deriver = KeyDeriver(compiled)
        raw = vector["notification"].encode()
        node = vector.get("node")
        assert same(decoder, deriver, raw, ns, node, entry) == "native", vector["id"]
        got = native_answer(decoder, deriver, raw, ns, node, entry)
        assert got is not None and got[4] == vector["expect"].encode(), vector["id"]
        answered += 1
    return answered


# ---------------------------------------------------------------------------- the builder


def builders(knobs: ProducerKnobs | None = None) -> tuple[MessageBuilder, MessageBuilder]:
    """Two fresh builders over the example subscriptions (default node ``dflt``): one with the
    native pass, one without (the reference)."""
    builder = MessageBuilder(load_catalog(EXAMPLES), knobs, default_node="dflt")
    reference = MessageBuilder(load_catalog(EXAMPLES), knobs, default_node="dflt")
    reference.native = False
    return builder, reference


def builder_outputs(
    records: list[bytes], knobs: ProducerKnobs | None, use_native: bool, xml: bool = False
) -> tuple[list[Any], int, MessageBuilder]:
    """Every record's messages or rejection from a fresh builder over the example
    subscriptions, the native pass on or off (JSON and XML); how many records the JSON pass
    (``xml``: the XML pass) answered; and the builder."""
    answered = 0
    real: KeysCall = native.keys_xml if xml else native.keys

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal answered
        found = real(*args, **kwargs)
        answered += found is not None
        return found

    with pytest.MonkeyPatch.context() as patched:
        if xml:
            patched.setattr(yangkey.producer, "native_keys_xml", counting)
        else:
            patched.setattr(yangkey.native_messages, "native_keys_of", lambda: counting)
        builder = MessageBuilder(load_catalog(EXAMPLES), knobs, default_node="dflt")
        builder.native = builder.native and use_native
        outputs = [builder.build(raw, f"demo:{n}") for n, raw in enumerate(records, 1)]
    return outputs, answered, builder


# ---------------------------------------------------------------------------- yangkey keys


def cli_both_ways(
    monkeypatch: pytest.MonkeyPatch, counted: str, args: list[str]
) -> tuple[list[tuple[int, str, str]], list[int]]:
    """``yangkey <args>`` with the native pass, then without (YANGKEY_NATIVE=0): each run's
    exit status, stdout and stderr, and how many times ``native.<counted>`` (``keys`` or
    ``keys_xml``) answered in each."""
    from click.testing import CliRunner  # noqa: PLC0415

    from yangkey.cli import main  # noqa: PLC0415

    answered = 0
    real: KeysCall = getattr(native, counted)

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal answered
        found = real(*args, **kwargs)
        answered += found is not None
        return found

    monkeypatch.setattr(native, counted, counting)
    results, counts = [], []
    for use_native in (True, False):
        if not use_native:
            monkeypatch.setenv(native.ENV_NATIVE, "0")
        native._load.cache_clear()
        try:
            result = CliRunner().invoke(main, args)
        finally:
            native._load.cache_clear()
        results.append((result.exit_code, result.stdout, result.stderr))
        counts.append(answered)
        answered = 0
    return results, counts


def feed_same(decoder: Any, feeds: Any, raw: bytes, ns: dict[str, str]) -> str:
    """Whether the native instance feed headers of ``raw`` (``Decoder.instances`` and
    ``Decoder.keys``' eighth item, ``feeds.walker`` built with feeds) are ``feeds.reference``'s
    (test_native_feed.Feeds); ``native`` when ``instances`` answered, else ``python``."""
    expected = feeds.reference(raw, ns)
    got = decoder.instances(raw, "t", feeds.walker)
    keyed = decoder.keys(raw, "t", ns, lambda *_: (feeds.walker, "pe1", None), False, None, True)
    if keyed is not None:
        assert keyed[7] == expected, (raw, keyed[7], expected)
    if got is None:
        return "python"
    assert got == expected, (raw, got, expected)
    return "native"


def on_threads(run: Callable[[int], None], count: int = 4) -> None:
    """``run(start)`` on ``count`` threads at once (start 0 .. count - 1), all joined."""
    threads = [threading.Thread(target=run, args=(start,)) for start in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
