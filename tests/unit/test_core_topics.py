"""SPEC 2.5 — topic names: prefix, type level, truncation with FNV-1a, collisions."""

from __future__ import annotations

import re

import pytest

from yangkey.catalog import build_catalog, type_level
from yangkey.config import parse_subscriptions
from yangkey.errors import TopicError, YangkeyError
from yangkey.templates import compile_subscription
from yangkey.topics import TopicNamer, validate_prefix

IF = "/ietf-interfaces:interfaces/interface"

LONG = (
    "/yk-long:alpha-bravo-charlie-delta-echo-foxtrot-golf"
    "/hotel-india-juliett-kilo-lima-mike-november"
    "/oscar-papa-quebec-romeo-sierra-tango-uniform"
    "/victor-whiskey-xray-yankee-zulu-one-two-three"
    "/four-five-six-seven-eight-nine-ten-eleven-twelve"
    "/thirteen-fourteen-fifteen-sixteen-seventeen"
)
LONG_LIST = LONG + "/measurement-sample-entry"


def fnv1a_64_reference(data: bytes) -> int:
    """Independent FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3)."""
    value = 0xCBF29CE484222325
    for byte in data:
        value ^= byte
        value = (value * 0x100000001B3) % (1 << 64)
    return value


def test_core_fnv_reference_known_vectors() -> None:
    # Published FNV-1a 64 test vectors, so the reference itself is right.
    assert fnv1a_64_reference(b"") == 0xCBF29CE484222325
    assert fnv1a_64_reference(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64_reference(b"foobar") == 0x85944171F73967E8


def names(xpath: str, schema, **namer) -> list[str]:
    compiled = compile_subscription(xpath, schema)
    topic_namer = TopicNamer(**namer)
    return [topic_namer.name(b) for b in compiled.branches]


# --------------------------------------------------------------------------- steps 1-4


@pytest.mark.parametrize(
    ("xpath", "topic"),
    [
        (IF, "if-interfaces-interface"),
        (f"{IF}/ietf-ip:ipv4/mtu", "if-interfaces-interface-ip-ipv4-mtu"),
        ("/ietf-system:system/clock", "sys-system-clock"),
        ("/ietf-hardware:hardware/component/serial-num", "hw-hardware-component-serial-num"),
        (f"{IF}[name='eth0']/ietf-ip:ipv6/address[ip='::1']",
         "if-interfaces-interface-ip-ipv6-address"),
        ("/ietf-system:system/dns-resolver/search[.='x']", "sys-system-dns-resolver-search"),
        ("/ietf-system:system/clock/timezone-name", "sys-system-clock-timezone-name"),
    ],
)
def test_core_topic_mechanical_names(ietf_schema, xpath: str, topic: str) -> None:
    assert names(xpath, ietf_schema) == [topic]


@pytest.mark.parametrize(
    ("xpath", "topic"),
    [
        ("/yk-test:top/flow", "ykt-top-flow"),
        ("/yk-test:top/site/rack", "ykt-top-site-rack"),
        ("/yk-test:top/item", "ykt-top-item"),  # choice/case not in the name
        ("/yk-test:top/site/yk-aug:ports/port", "ykt-top-site-yka-ports-port"),
    ],
)
def test_core_topic_fixture_names_use_yang_prefix(fx_schema, xpath: str, topic: str) -> None:
    assert names(xpath, fx_schema) == [topic]


def test_core_topic_org_prefix(ietf_schema) -> None:
    assert names(IF, ietf_schema, prefix="netops") == ["netops-if-interfaces-interface"]
    assert names(IF, ietf_schema, prefix="a.b_c-1") == ["a.b_c-1-if-interfaces-interface"]


def test_core_topic_one_per_branch(ietf_schema) -> None:
    assert names(f"{IF}/oper-status | /ietf-system:system/clock", ietf_schema) == [
        "if-interfaces-interface-oper-status", "sys-system-clock",
    ]


def test_core_topic_pinned_and_open_share_topic(ietf_schema) -> None:
    assert names(IF, ietf_schema) == names(f"{IF}[name='eth0']", ietf_schema)
    assert names(IF, ietf_schema) == names(f"{IF}[enabled='true']", ietf_schema)


@pytest.mark.parametrize(
    "prefix", ["net ops", "net/ops", "netöps", "a:b", "", "x*", "a\nb", "tab\t"]
)
def test_core_topic_invalid_prefix(prefix: str) -> None:
    with pytest.raises(TopicError):
        TopicNamer(prefix=prefix)
    with pytest.raises(TopicError):
        validate_prefix(prefix)


@pytest.mark.parametrize("separator", ["", "/", " ", ":"])
def test_core_topic_invalid_separator(separator: str) -> None:
    with pytest.raises(TopicError):
        TopicNamer(separator=separator)


# ------------------------------------------------------------------------- type level


@pytest.mark.parametrize(
    ("subscription_type", "compaction", "level"),
    [
        ("periodic", False, "stats"),
        ("on-change", False, "state-change"),
        ("on-change-sync", False, "state"),
        ("on-change-sync", True, "current-state"),
    ],
)
def test_core_topic_type_levels(subscription_type: str, compaction: bool, level: str) -> None:
    assert type_level(subscription_type, compaction) == level  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("position", "separator", "expected"),
    [
        ("after-prefix", "-", "netops-state-if-interfaces-interface"),
        ("first", "-", "state-netops-if-interfaces-interface"),
        ("last", "-", "netops-if-interfaces-interface-state"),
        ("after-prefix", ".", "netops.state.if-interfaces-interface"),
        ("first", "_", "state_netops_if-interfaces-interface"),
        ("last", "..", "netops..if-interfaces-interface..state"),
    ],
)
def test_core_topic_type_level_position_and_separator(
    ietf_schema, position: str, separator: str, expected: str
) -> None:
    branch = compile_subscription(IF, ietf_schema).branches[0]
    namer = TopicNamer(prefix="netops", separator=separator,
                       type_level_position=position)  # type: ignore[arg-type]
    assert namer.name(branch, level="state") == expected


def test_core_topic_type_level_without_prefix(ietf_schema) -> None:
    branch = compile_subscription(IF, ietf_schema).branches[0]
    assert TopicNamer().name(branch, level="stats") == "stats-if-interfaces-interface"
    assert TopicNamer().name(branch) == "if-interfaces-interface"


def test_core_topic_consumer_regex_selects_level(ietf_schema) -> None:
    namer = TopicNamer(prefix="netops")
    branch = compile_subscription(IF, ietf_schema).branches[0]
    state = namer.name(branch, level="state")
    stats = namer.name(branch, level="stats")
    assert re.match(r"^netops-state-if-.*", state)
    assert not re.match(r"^netops-state-if-.*", stats)


# ---------------------------------------------------------------------------- truncation


def check_truncated(name: str, full: str, template: str, limit: int = 249,
                    trail: str = "") -> None:
    step1 = re.sub(r"\[[^\]]*\]", "", template)  # SPEC 2.5 step 1: strip predicates
    suffix = "-" + format(fnv1a_64_reference(step1.encode("utf-8")), "016x")[:8]
    assert len(full) > limit
    assert len(name) <= limit, len(name)
    assert name.endswith(suffix + trail), (name, suffix)
    body = name[: len(name) - len(suffix) - len(trail)]
    full_body = full[: len(full) - len(trail)] if trail else full
    # Cut at a '-' boundary of the untruncated name, never inside a word.
    assert full_body.startswith(body)
    assert full_body[len(body)] == "-"
    assert not body.endswith("-")
    # And at the last boundary that fits: the next word would not.
    next_dash = full_body.find("-", len(body) + 1)
    next_len = (next_dash if next_dash >= 0 else len(full_body)) + len(suffix) + len(trail)
    assert next_len > limit


def test_core_topic_truncation_fnv_suffix(fx_schema) -> None:
    branch = compile_subscription(LONG_LIST, fx_schema).branches[0]
    full = TopicNamer(max_length=10_000).name(branch)
    assert full == "ykl-" + LONG_LIST.split(":", 1)[1].lstrip("/").replace("/", "-")
    name = TopicNamer().name(branch)
    check_truncated(name, full, branch.template)


def test_core_topic_truncation_hash_uses_module_names_not_prefixes(fx_schema) -> None:
    branch = compile_subscription(LONG_LIST, fx_schema).branches[0]
    name = TopicNamer().name(branch)
    wrong = "-" + format(fnv1a_64_reference(("/ykl:" + LONG_LIST.split(":", 1)[1]).encode()),
                         "016x")[:8]
    right = "-" + format(fnv1a_64_reference(LONG_LIST.encode()), "016x")[:8]
    assert wrong != right
    assert name.endswith(right)


def test_core_topic_truncation_pinned_and_open_same_topic(fx_schema) -> None:
    open_ = compile_subscription(LONG_LIST, fx_schema).branches[0]
    pinned = compile_subscription(LONG_LIST + "[index='7']", fx_schema).branches[0]
    assert TopicNamer().name(open_) == TopicNamer().name(pinned)


def test_core_topic_truncation_with_prefix(fx_schema) -> None:
    branch = compile_subscription(LONG, fx_schema).branches[0]
    full = TopicNamer(prefix="netops", max_length=10_000).name(branch)
    name = TopicNamer(prefix="netops").name(branch)
    assert name.startswith("netops-ykl-alpha-")
    check_truncated(name, full, branch.template)


def test_core_topic_truncation_with_level_last(fx_schema) -> None:
    branch = compile_subscription(LONG, fx_schema).branches[0]
    namer = TopicNamer(prefix="netops", type_level_position="last")
    full = TopicNamer(prefix="netops", type_level_position="last",
                      max_length=10_000).name(branch, level="current-state")
    name = namer.name(branch, level="current-state")
    assert len(name) <= 249
    assert name.endswith("-current-state")
    assert format(fnv1a_64_reference(branch.schema_path.encode()), "016x")[:8] in name
    assert full.startswith(name.rsplit("-", 3)[0])


@pytest.mark.parametrize("limit", [60, 100, 200])
def test_core_topic_truncation_custom_limit(fx_schema, limit: int) -> None:
    branch = compile_subscription(LONG_LIST, fx_schema).branches[0]
    full = TopicNamer(max_length=10_000).name(branch)
    check_truncated(TopicNamer(max_length=limit).name(branch), full, branch.template, limit)


def test_core_topic_exactly_at_limit_not_truncated(ietf_schema) -> None:
    branch = compile_subscription(IF, ietf_schema).branches[0]
    length = len("if-interfaces-interface")
    assert TopicNamer(max_length=length).name(branch) == "if-interfaces-interface"
    assert TopicNamer(max_length=length - 1).name(branch) != "if-interfaces-interface"


def test_core_topic_prefix_leaving_too_little_room(fx_schema) -> None:
    branch = compile_subscription(LONG, fx_schema).branches[0]
    with pytest.raises(TopicError):
        TopicNamer(prefix="p" * 245).name(branch)
    # A long but reasonable prefix still works.
    assert len(TopicNamer(prefix="p" * 200).name(branch)) <= 249


def test_core_topic_distinct_long_paths_distinct_names(fx_schema) -> None:
    a = compile_subscription(LONG_LIST, fx_schema).branches[0]
    b = compile_subscription(LONG + "/summary", fx_schema).branches[0]
    assert TopicNamer().name(a) != TopicNamer().name(b)


# ------------------------------------------------------------------------ collisions


def catalog_text(xpaths: list[str], **extra: str) -> str:
    lines = ["subscriptions:"]
    for number, xpath in enumerate(xpaths, start=1):
        lines += [f"  - id: {number}", f'    xpath: "{xpath}"', "    type: periodic"]
    head = "".join(f"{k}: {v}\n" for k, v in extra.items())
    return head + "\n".join(lines) + "\n"


def test_core_topic_collision_across_catalog(fx_dir: str) -> None:
    text = catalog_text(["/yk-test:a-b/c", "/yk-test:a/b-c"])
    with pytest.raises(TopicError) as info:
        build_catalog(parse_subscriptions(text, "subs.yaml"), yang_dirs=(fx_dir,))
    message = str(info.value)
    assert "ykt-a-b-c" in message
    assert "/yk-test:a-b/c" in message and "/yk-test:a/b-c" in message


def test_core_topic_collision_inside_one_union(fx_dir: str) -> None:
    text = catalog_text(["/yk-test:a-b/c | /yk-test:a/b-c"])
    with pytest.raises(TopicError, match="collision"):
        build_catalog(parse_subscriptions(text, "subs.yaml"), yang_dirs=(fx_dir,))


def test_core_topic_collision_flattened_names_really_equal(fx_schema) -> None:
    # The premise of the collision tests: both paths flatten to the same name.
    assert names("/yk-test:a-b/c", fx_schema) == names("/yk-test:a/b-c", fx_schema) == [
        "ykt-a-b-c"
    ]


def test_core_topic_pinned_and_open_share_topic_in_catalog(ietf_schema) -> None:
    text = catalog_text([IF, f"{IF}[name='eth0']", f"{IF}[enabled='true']"],
                        organisation_prefix="netops")
    catalog = build_catalog(parse_subscriptions(text, "subs.yaml"))
    assert [e.topics for e in catalog.entries] == [("netops-if-interfaces-interface",)] * 3
    assert len(catalog.topics) == 1
    spec = catalog.topics[0]
    assert spec.subscription_ids == (1, 2, 3)
    assert set(spec.templates) == {f"{IF}[name='%s']", f"{IF}[name='eth0']"}


def test_core_topic_same_path_not_a_collision() -> None:
    text = catalog_text(["/ietf-system:system/clock", "/ietf-system:system/clock"])
    catalog = build_catalog(parse_subscriptions(text, "subs.yaml"))
    assert [spec.name for spec in catalog.topics] == ["sys-system-clock"]


def test_core_topic_errors_are_yangkey_errors() -> None:
    assert issubclass(TopicError, YangkeyError)
