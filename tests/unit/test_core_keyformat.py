"""SPEC 2.1 (message key format) and 2.2 (literal quoting), on the pure functions."""

from __future__ import annotations

import pytest

from yangkey.errors import NoMatchError, NotificationError, YangkeyError
from yangkey.messages import MessageKey
from yangkey.xpath import parse_path, parse_union, quote, split_outside_quotes

IF = "/ietf-interfaces:interfaces/interface"


# ---------------------------------------------------------------------------- MessageKey.of


def test_core_key_three_fields_lf_no_trailing_lf() -> None:
    key = MessageKey.of("router-nyc-01", 1042, [f"{IF}[name='eth0']"]).encode()
    assert key == b"router-nyc-01\n1042\n/ietf-interfaces:interfaces/interface[name='eth0']"
    assert key.count(b"\n") == 2
    assert not key.endswith(b"\n")


def test_core_key_is_utf8_bytes() -> None:
    key = MessageKey.of("nœud-é", 7, [f"{IF}[name='αβγ']"]).encode()
    assert isinstance(key, bytes)
    assert key == "nœud-é\n7\n/ietf-interfaces:interfaces/interface[name='αβγ']".encode()


def test_core_key_subscription_id_decimal() -> None:
    key = MessageKey.of("n", 4294967295, ["/m:a"]).encode()
    assert key.split(b"\n")[1] == b"4294967295"


def test_core_key_sorted_by_code_point_not_locale() -> None:
    # Code point order: 'B' (0x42) < 'Z' < 'a' (0x61) < 'z' < 'é' (0xe9) < 'ž' (0x17e).
    # Locale collation would interleave upper and lower case and put é next to e.
    names = ["z", "é", "a", "B", "ž", "Z", "e"]
    key = MessageKey.of("n", 1, [f"{IF}[name='{n}']" for n in names]).encode()
    xpaths = key.decode().split("\n")[2].split(" | ")
    assert [x.split("'")[1] for x in xpaths] == ["B", "Z", "a", "e", "z", "é", "ž"]


def test_core_key_sort_is_by_whole_string_code_points() -> None:
    # A shorter path sorts before its extensions; '[' (0x5b) sorts after '/' (0x2f).
    xpaths = [f"{IF}[name='a']", IF + "/x", IF]
    key = MessageKey.of("n", 1, xpaths).encode()
    assert key.decode().split("\n")[2] == f"{IF} | {IF}/x | {IF}[name='a']"


def test_core_key_deduplicates_xpaths() -> None:
    x = f"{IF}[name='eth0']"
    key = MessageKey.of("n", 1, [x, x, f"{IF}[name='eth1']", x]).encode()
    assert key.decode().split("\n")[2] == f"{x} | {IF}[name='eth1']"


def test_core_key_separator_is_space_pipe_space() -> None:
    key = MessageKey.of("n", 1, ["/m:b", "/m:a"]).encode()
    assert key == b"n\n1\n/m:a | /m:b"


def test_core_key_empty_xpaths_is_no_match() -> None:
    with pytest.raises(NoMatchError):
        MessageKey.of("n", 1, []).encode()


@pytest.mark.parametrize("node", ["", "a\nb"])
def test_core_key_rejects_empty_or_multiline_node(node: str) -> None:
    with pytest.raises(NotificationError):
        MessageKey.of(node, 1, ["/m:a"]).encode()


# ------------------------------------------------------------------------- MessageKey.parse


def test_core_parse_key_fields() -> None:
    parsed = MessageKey.parse(b"router-nyc-01\n1042\n/m:a[k='1'] | /m:a[k='2']")
    assert parsed.node == "router-nyc-01"
    assert parsed.subscription_id == 1042
    assert parsed.xpaths == ("/m:a[k='1']", "/m:a[k='2']")


@pytest.mark.parametrize(
    "value",
    [
        "a | b",  # the separator itself inside a value
        "x\ny",  # LF inside a value: split on the first two LFs only
        "it's",  # single quote -> "..."
        'say "hi"',  # double quote -> '...'
        "it's \"both\" | here",  # both -> concat(...), plus a separator
        "[a] (b) | 'c'",  # brackets and parentheses in a value
        "|",
        " | ",
        "",
    ],
)
def test_core_parse_compose_round_trip_tricky_values(value: str) -> None:
    xpaths = sorted({f"{IF}[name={quote(value)}]", f"{IF}[name='plain']"})
    key = MessageKey.of("node | with pipe", 5, xpaths).encode()
    parsed = MessageKey.parse(key)
    assert parsed.node == "node | with pipe"
    assert parsed.subscription_id == 5
    assert list(parsed.xpaths) == xpaths


def test_core_parse_key_lf_in_value_keeps_three_fields() -> None:
    key = MessageKey.of("n", 9, [f"{IF}[name='line1\nline2']"]).encode()
    parsed = MessageKey.parse(key)
    assert parsed.node == "n"
    assert parsed.xpaths == (f"{IF}[name='line1\nline2']",)


def test_core_parse_key_accepts_str() -> None:
    assert MessageKey.parse("n\n1\n/m:a").xpaths == ("/m:a",)


@pytest.mark.parametrize("bad", [b"only-one-field", b"n\n1", b"n\nabc\n/m:a"])
def test_core_parse_key_rejects_malformed(bad: bytes) -> None:
    with pytest.raises(YangkeyError):
        MessageKey.parse(bad)


# ------------------------------------------------------------------------------ quoting 2.2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("eth0", "'eth0'"),
        ("", "''"),
        ("it's", '"it\'s"'),
        ('say "hi"', "'say \"hi\"'"),
        ("a'b\"c", "concat('a',\"'\",'b\"c')"),
        ("'\"", "concat(\"'\",'\"')"),
        ("x'y'z\"", "concat('x',\"'\",'y',\"'\",'z\"')"),
    ],
)
def test_core_quote_rules(value: str, expected: str) -> None:
    assert quote(value) == expected


@pytest.mark.parametrize("value", ["plain", "it's", 'd"q', "a'b\"c", "'\"'\"", "''", '""'])
def test_core_quote_parses_back(value: str) -> None:
    path = parse_path(f"/m:list[k={quote(value)}]")
    (predicate,) = path.steps[0].predicates
    assert predicate.value == value


def test_core_split_outside_quotes_respects_quotes_brackets_parens() -> None:
    text = "/m:a[k='x | y'] | /m:b[k=concat('p',\"'\",' | q')] | /m:c[k=\"|\"]"
    assert split_outside_quotes(text, " | ") == [
        "/m:a[k='x | y']",
        "/m:b[k=concat('p',\"'\",' | q')]",
        '/m:c[k="|"]',
    ]


def test_core_parse_union_splits_top_level_pipe_only() -> None:
    paths = parse_union("/m:a[k='1|2']|/m:b | /m:c[k=\"x|y\"]")
    assert [p.text for p in paths] == ["/m:a[k='1|2']", "/m:b", '/m:c[k="x|y"]']


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "/m:a | ", "m:a", "//m:a", "/m:a[@k='1']", "/m:a[contains(k,'x')]",
     "/m:a[k='unterminated]", "/m:a[k>'1']"],
)
def test_core_parse_union_rejects(bad: str) -> None:
    with pytest.raises(YangkeyError):
        parse_union(bad)


def test_core_parse_union_error_position_points_into_whole_union() -> None:
    text = "/m:a[k='x'] | /m:b[@x='1']"
    with pytest.raises(YangkeyError) as info:
        parse_union(text, source="--xpath")
    assert info.value.position is not None
    assert info.value.position.column == text.index("@") + 1
    assert "--xpath" in str(info.value)
    caret_line = info.value.snippet().splitlines()[-1]
    assert caret_line.index("^") - 2 == text.index("@")
