"""Issue 10 — bad input: each way in ends in one clean error (CLI) or one dead-letter record
(pipeline), and nothing else is lost. One section per item of the issue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_one_error, run, write

from yangkey.catalog import build_catalog, load_catalog
from yangkey.config import load_subscriptions_file, parse_subscriptions
from yangkey.errors import ConfigError, InputError, NotificationError, TopicError, YangkeyError
from yangkey.keys import KeyDeriver
from yangkey.messages import HEADER_SOURCE, KeyedMessage, MessageKey, Rejection
from yangkey.notifications import decode
from yangkey.producer import MessageBuilder, ProducerKnobs
from yangkey.schema import SchemaContext
from yangkey.spark.transform import Tally, outgoing
from yangkey.templates import compile_subscription
from yangkey.topics import check_collisions
from yangkey.values import canon_decimal, canon_integer, canon_string
from yangkey.xmlsafe import parse_xml

TESTS = Path(__file__).resolve().parents[1]
EXAMPLE = TESTS.parent / "examples" / "subscriptions.yaml"
IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_ENV = "urn:ietf:params:xml:ns:yang:ietf-yp-notification"
NS_NC = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NS_YP = "urn:ietf:params:xml:ns:yang:ietf-yang-push"
NS_TM = "urn:ietf:params:xml:ns:yang:ietf-telemetry-message"
ETH0 = '{"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}'


def env(data: str = ETH0, *, hostname: str = '"r1"', sub_id: str = "1", sequence: str = "7") -> str:
    """A JSON envelope with every field spliced in as raw JSON text."""
    return (
        '{"ietf-yp-notification:envelope": {"event-time": "2026-11-20T10:00:00Z", '
        f'"hostname": {hostname}, "sequence-number": {sequence}, "contents": '
        f'{{"ietf-yang-push:push-update": {{"id": {sub_id}, "datastore-contents": {data}}}}}}}}}'
    )


def env_xml(hostname: str = "r1", sub_id: str = "1", sequence: str = "7", extra: str = "") -> str:
    return (
        f'<envelope xmlns="{NS_ENV}"><event-time>2026-11-20T10:00:00Z</event-time>'
        f"<hostname>{hostname}</hostname>{extra}<sequence-number>{sequence}</sequence-number>"
        f'<contents><push-update xmlns="{NS_YP}"><id>{sub_id}</id><datastore-contents>'
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name></interface></interfaces>'
        "</datastore-contents></push-update></contents></envelope>"
    )


def key_error(tmp_path: Path, content: str | bytes, *needles: str, name: str = "n.json") -> str:
    return assert_one_error(run("key", "--xpath", IF, write(tmp_path, name, content)), *needles)


def config_error(text: str | bytes, tmp_path: Path) -> ConfigError:
    path = write(tmp_path, "subs.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_subscriptions_file(path)
    assert "\n" not in info.value.message()
    return info.value


SUBSCRIPTION = f"subscriptions:\n  - id: 1\n    xpath: {IF}\n"


# ----------------------------------------------------- 1. numbers are ASCII digits, in range


@pytest.mark.parametrize("sub_id", ['"²"', '"١٠٤٢"', '"1_0"', '" 1"', "-1", "4294967296", "1e3"])
def test_badinput_subscription_id_not_ascii_uint32(tmp_path: Path, sub_id: str) -> None:
    key_error(tmp_path, env(sub_id=sub_id), "n.json", "subscription id")


@pytest.mark.parametrize(
    "sequence", ['"١"', "-5", "1e20", "4294967296", '"x"', '"' + "1" * 5000 + '"']
)
def test_badinput_sequence_number_not_ascii_uint32(tmp_path: Path, sequence: str) -> None:
    key_error(tmp_path, env(sequence=sequence), "sequence-number")


@pytest.mark.parametrize("sequence", ["١", "-5", "+5", "1" * 5000, "0" * 5000 + "7" * 11])
def test_badinput_xml_sequence_number_not_ascii(tmp_path: Path, sequence: str) -> None:
    key_error(tmp_path, env_xml(sequence=sequence), "sequence-number", name="n.xml")


def test_badinput_keys_bad_line_costs_only_itself(tmp_path: Path) -> None:
    lines = [env(), env(sub_id='"²"'), env(sub_id='"١٠٤٢"'), env(hostname='"r2"')]
    path = write(tmp_path, "batch.jsonl", "\n".join(lines) + "\n")
    result = run("keys", "--xpath", IF, path)
    assert result.exit_code == 1
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [doc.get("line") for doc in out] == [None, 2, 3, None]
    assert [doc.get("node") for doc in out] == ["r1", None, None, "r2"]
    assert "subscription id" in out[1]["error"]
    assert result.stderr == f"error: 2 line(s) of {path} rejected (notification 2)\n"


def test_badinput_integer_and_decimal_values_ascii_only() -> None:
    assert canon_integer("+007") == "7"
    for text in ("١٠", "1_000", "²"):
        with pytest.raises(NotificationError):
            canon_integer(text)
    with pytest.raises(NotificationError):
        canon_decimal("١.5")


def test_badinput_parse_key_subscription_id_ascii_in_range() -> None:
    assert MessageKey.parse(b"n\n7\n/a:b").subscription_id == 7
    for line in ("١٠", "4294967296", "-1", "+1"):
        with pytest.raises(YangkeyError):
            MessageKey.parse(f"n\n{line}\n/a:b")


@pytest.mark.parametrize("value", ['"1042"', "true", "1.0", "4294967296"])
def test_badinput_config_id_strict_uint32(tmp_path: Path, value: str) -> None:
    error = config_error(f"subscriptions:\n  - id: {value}\n    xpath: {IF}\n", tmp_path)
    assert "subscriptions.0.id" in error.reason


def test_badinput_key_subscription_id_option_is_uint32(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", env())
    too_big = run("key", "--xpath", IF, "--override-subscription-id", "4294967296", path)
    assert too_big.exit_code == 2
    ok = run("key", "--xpath", IF, "--override-subscription-id", "4294967295", path)
    assert ok.stdout_bytes == f"r1\n4294967295\n{IF}[name='eth0']".encode()


# ------------------------------------------------------------ 2. no LF in an XML node name


@pytest.mark.parametrize(
    "document",
    [
        env_xml(hostname="pe1&#10;evil"),
        env_xml(hostname="pe1\nevil"),
        f'<notification xmlns="{NS_NC}"><eventTime>2026-11-20T10:00:00Z</eventTime>'
        f"<hostname>pe1&#10;x</hostname>"
        f'<push-update xmlns="{NS_YP}"><id>1</id><datastore-contents>'
        f'<interfaces xmlns="{NS_IF}"><interface><name>eth0</name></interface></interfaces>'
        "</datastore-contents></push-update></notification>",
        f'<message xmlns="{NS_TM}"><network-node-manifest><name>pe1&#10;x</name>'
        "</network-node-manifest><payload>"
        f'<notification xmlns="{NS_NC}"><push-update xmlns="{NS_YP}"><id>1</id>'
        f'<datastore-contents><interfaces xmlns="{NS_IF}"><interface><name>eth0</name>'
        "</interface></interfaces></datastore-contents></push-update></notification>"
        "</payload></message>",
    ],
    ids=["envelope-ref", "envelope-raw", "netconf", "telemetry-manifest"],
)
def test_badinput_xml_node_name_with_line_feed(tmp_path: Path, document: str) -> None:
    key_error(tmp_path, document, "line feed", name="n.xml")
    builder = MessageBuilder(build_catalog(parse_subscriptions(SUBSCRIPTION)))
    result = builder.build(document.encode(), "raw@0:5")
    assert isinstance(result, Rejection), "a 4-line key would reach the data topic"
    assert "line feed" in result.reason


def test_badinput_override_node_name_checked() -> None:
    note = decode(env().encode(), "n", {})
    with pytest.raises(NotificationError, match="line feed"):
        MessageKey.of("a\nb", 1, ["/x:y"]).encode()
    deriver = KeyDeriver(compile_subscription(IF, SchemaContext.cached(())))
    with pytest.raises(NotificationError, match="line feed"):
        deriver.derive(note, node="a\nb")
    with pytest.raises(NotificationError, match="line feed"):
        deriver.derive(decode(env(hostname="null").encode(), "n", {}), default_node="a\nb")


# --------------------------------------------------------------- 3. the subscriptions file


def test_badinput_subscriptions_not_utf8(tmp_path: Path) -> None:
    error = config_error(b"subscriptions:\n  - id: 1\n    node: caf\xe9\n", tmp_path)
    assert "not UTF-8" in error.reason
    path = write(tmp_path, "latin1.yaml", b"organisation_prefix: caf\xe9\n")
    assert_one_error(run("catalog", "show", "--subscriptions", path), "latin1.yaml", "UTF-8")


@pytest.mark.parametrize("opening", ["[", "{a: ", "- "])
def test_badinput_subscriptions_deep_nesting(tmp_path: Path, opening: str) -> None:
    started = time.monotonic()
    # PyYAML scans a run of '[' in quadratic time unless stopped early: 5,000 took ~1 s.
    error = config_error(opening * 200_000, tmp_path)
    assert time.monotonic() - started < 5
    assert "nested deeper than" in error.reason


def test_badinput_subscriptions_alias_bomb_refused_fast(tmp_path: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    started = time.monotonic()
    error = config_error("\n".join(levels) + "\n", tmp_path)
    assert time.monotonic() - started < 5
    assert "aliases" in error.reason
    assert error.position is not None and error.position.line == 2


def test_badinput_subscriptions_file_size_bounded(tmp_path: Path) -> None:
    error = config_error("#" * (8 * 1024 * 1024) + "\nsubscriptions: []\n", tmp_path)
    assert "limit" in error.reason


# ---------------------------------------------------------------------------- 4. ranges


@pytest.mark.parametrize(
    "retention", ["99999999999999999999999w", "-86400", "0", "true", "1.5", "'٣d'", "'0s'"]
)
def test_badinput_retention_range(tmp_path: Path, retention: str) -> None:
    for text in (
        f"defaults:\n  retention: {retention}\n" + SUBSCRIPTION,
        SUBSCRIPTION + f"    retention: {retention}\n",
    ):
        assert "retention" in config_error(text, tmp_path).reason


def test_badinput_retention_century_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "subs.yaml", SUBSCRIPTION + "    retention: 5200w\n")
    result = run("catalog", "show", "--json", "--subscriptions", path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["topics"][0]["retention_seconds"] == 5200 * 604800


@pytest.mark.parametrize(
    ("field", "value"),
    [("generation", "4294967296"), ("generation", "0"), ("partitions", "true")],
)
def test_badinput_subscription_numbers_in_column_range(
    tmp_path: Path, field: str, value: str
) -> None:
    error = config_error(SUBSCRIPTION + f"    {field}: {value}\n", tmp_path)
    assert f"subscriptions.0.{field}" in error.reason


# ------------------------------------------------------------------------- 7. topic names


@pytest.mark.parametrize("name", ["bad topic", "a/b", "a`b", "a\nb", "", "..", "x" * 250, "é"])
def test_badinput_dead_letter_and_single_topic_are_topic_names(tmp_path: Path, name: str) -> None:
    quoted = json.dumps(name)
    error = config_error(f"dead_letter_topic: {quoted}\n" + SUBSCRIPTION, tmp_path)
    assert "dead_letter_topic" in error.reason
    error = config_error(f"topic_policy:\n  single_topic: {quoted}\n" + SUBSCRIPTION, tmp_path)
    assert "topic_policy.single_topic" in error.reason
    with pytest.raises(ConfigError):
        ProducerKnobs(single_topic=name)


def test_badinput_max_length_at_most_kafka_limit(tmp_path: Path) -> None:
    error = config_error("topic_policy:\n  max_length: 250\n" + SUBSCRIPTION, tmp_path)
    assert "max_length" in error.reason
    assert run("topic", "--xpath", IF, "--max-length", "250").exit_code == 2
    assert run("topic", "--xpath", IF, "--max-length", "249").exit_code == 0


def test_badinput_collision_folds_dot_and_underscore() -> None:
    check_collisions([("a-b.c", "/m:b.c"), ("a-b.c", "/m:b.c")])
    with pytest.raises(TopicError, match=r"'\.' and '_' are alike"):
        check_collisions([("a-b.c", "/m:b.c"), ("a-b_c", "/m:b_c")])


def test_badinput_dead_letter_topic_cannot_be_a_data_topic() -> None:
    text = "dead_letter_topic: if-interfaces-interface\n" + SUBSCRIPTION
    with pytest.raises(TopicError, match="dead-letter"):
        build_catalog(parse_subscriptions(text))


# ------------------------------------------------------------------ 8. one line, always


def test_badinput_libxml2_message_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        parse_xml(b"<a>\x00</a>", "n.xml")
    assert "\n" not in info.value.reason
    key_error(tmp_path, b"<a>\x00</a>", "malformed XML", name="n.xml")


def test_badinput_error_message_never_breaks_the_line() -> None:
    error = InputError("reason\nmore\r\u2028end", source="file\nname")
    assert error.message() == "file\\nname: reason\\nmore\\r\\u2028end"


@pytest.mark.needs("spark")
def test_badinput_produce_error_not_wrapped_at_80_columns(tmp_path: Path) -> None:
    missing = str(tmp_path / ("long-" * 30 + ".yaml"))
    result = run("produce", "--subscriptions", missing, "--input", missing, "--dry-run")
    # a missing subscriptions file is a usage error (exit 2), its line unwrapped
    assert result.exit_code == 2, result.output
    assert any(missing in line for line in result.stderr.splitlines()), result.stderr


# ------------------------------------------------------------------- 9. unbounded input


def test_badinput_key_refuses_devices(tmp_path: Path) -> None:
    assert_one_error(run("key", "--xpath", IF, "/dev/zero"), "/dev/zero", "not a regular file")
    assert_one_error(run("keys", "--xpath", IF, "/dev/zero"), "/dev/zero", "not a regular file")
    assert_one_error(run("key", "--xpath", IF, str(tmp_path)), "a directory")


def test_badinput_fifo_without_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    yangkey = Path(sys.executable).parent / "yangkey"
    for command in ("key", "keys"):
        done = subprocess.run(
            [str(yangkey), command, "--xpath", IF, str(fifo)],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        assert done.returncode == 1
        assert done.stderr.startswith("error: ") and "not a regular file" in done.stderr


def test_badinput_notification_size_capped(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", env())
    assert_one_error(run("key", "--xpath", IF, "--max-bytes", "100", path), "limit of 100")
    assert run("key", "--xpath", IF, "--max-bytes", "100000", path).exit_code == 0
    assert_one_error(run("key", "--xpath", IF, "--max-bytes", "100", "-", input=env()), "stdin")
    assert run("key", "--xpath", IF, "-", input=env()).exit_code == 0


def test_badinput_keys_long_line_reported_and_skipped(tmp_path: Path) -> None:
    lines = [env(), env(data='{"x": "' + "y" * 5000 + '"}'), env(hostname='"r3"')]
    path = write(tmp_path, "b.jsonl", "\n".join(lines))
    result = run("keys", "--xpath", IF, "--max-bytes", "1000", path)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [doc.get("node") for doc in out] == ["r1", None, "r3"]
    assert out[1]["line"] == 2 and "longer than the limit of 1000" in out[1]["error"]


def test_badinput_pipeline_notification_size_capped() -> None:
    text = "limits:\n  max_notification_bytes: 300\n" + SUBSCRIPTION
    builder = MessageBuilder(build_catalog(parse_subscriptions(text)))
    assert isinstance(builder.build(env().encode(), "a:1"), list)
    result = builder.build(env(data='{"x": "' + "y" * 300 + '"}').encode(), "a:2")
    assert isinstance(result, Rejection) and "limit of 300" in result.reason


# ------------------------------------------------ 10. two different inputs, one key: refused


def test_badinput_wide_json_number_as_string_key(tmp_path: Path) -> None:
    for wide in ("1000000000000000000000000000001", "1e30", "1.0"):
        data = '{"ietf-interfaces:interfaces": {"interface": [{"name": ' + wide + "}]}}"
        key_error(tmp_path, env(data=data), "JSON number")
    with pytest.raises(NotificationError):
        canon_string(1e30)
    assert canon_string(5) == "5"


@pytest.mark.parametrize(
    "document",
    [
        env().replace('"hostname": "r1"', '"hostname": "pe1", "hostname": "evil"'),
        env().replace('"hostname": "r1"', '"hostname":"pe1","hostname":"evil"').replace(" ", ""),
        env(data='{"ietf-interfaces:interfaces": {"interface": [{"name": "eth0", "name": "x"}]}}'),
    ],
    ids=["spaced", "compact", "in-data"],
)
def test_badinput_duplicate_json_members(tmp_path: Path, document: str) -> None:
    key_error(tmp_path, document, "more than once")


def test_badinput_unique_members_with_any_spelling_accepted(tmp_path: Path) -> None:
    spaced = json.dumps(json.loads(env()), indent=2)
    path = write(tmp_path, "ok.json", spaced)
    assert run("key", "--xpath", IF, path).stdout_bytes == f"r1\n1\n{IF}[name='eth0']".encode()


def test_badinput_duplicate_xml_header_elements(tmp_path: Path) -> None:
    document = env_xml(extra="<hostname>evil</hostname>")
    key_error(tmp_path, document, "<hostname> appears more than once", name="n.xml")


def change(target: str, operation: str = "merge", value: Any = None) -> str:
    edit: dict[str, Any] = {"edit-id": "e1", "operation": operation, "target": target}
    if value is not None:
        edit["value"] = value
    return json.dumps(
        {
            "ietf-yp-notification:envelope": {
                "hostname": "r1",
                "contents": {
                    "ietf-yang-push:push-change-update": {
                        "id": 1,
                        "datastore-changes": {"yang-patch": {"patch-id": "p", "edit": [edit]}},
                    }
                },
            }
        }
    )


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        (change("/ietf-interfaces:interfaces/interface=eth%zz", "delete"), "two hex digits"),
        (change("/ietf-interfaces:interfaces/interface=eth%FF", "delete"), "not UTF-8"),
        (change("/ietf-interfaces:interfaces/interface=eth0", "frobnicate"), "frobnicate"),
        (
            change(
                "/ietf-interfaces:interfaces/interface=eth0",
                value={"ietf-interfaces:interface": [{"name": "eth9"}]},
            ),
            "eth9",
        ),
    ],
    ids=["bad-escape", "not-utf8", "operation", "value-names-other-entry"],
)
def test_badinput_yang_patch_strict(tmp_path: Path, document: str, needle: str) -> None:
    key_error(tmp_path, document, needle)


def test_badinput_yang_patch_percent_decoding_still_works(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", change("/ietf-interfaces:interfaces/interface=a%2Fb%C3%A9"))
    result = run("key", "--xpath", IF, path)
    assert result.stdout_bytes == f"r1\n1\n{IF}[name='a/bé']".encode()


@pytest.mark.parametrize("name", [" r1", "r1 ", "r1\t", "r\x01"])
def test_badinput_node_name_whitespace_same_rule_in_json_and_xml(tmp_path: Path, name: str) -> None:
    key_error(tmp_path, env(hostname=json.dumps(name)), "hostname")
    if name.isprintable() or "\t" in name:
        key_error(tmp_path, env_xml(hostname=name), "hostname", name="n.xml")


# --------------------------------------------------------------- 11. learning is explicit


def telemetry(sub_id: int, xpath_filter: str) -> bytes:
    return json.dumps(
        {
            "ietf-telemetry-message:message": {
                "network-node-manifest": {"name": "tm-1"},
                "telemetry-message-metadata": {
                    "yang-push-subscription": {"id": sub_id, "xpath-filter": xpath_filter}
                },
                "payload": json.loads(env(sub_id=str(sub_id)).replace('"hostname": "r1", ', "")),
            }
        }
    ).encode()


def test_badinput_learning_off_by_default() -> None:
    catalog = build_catalog(parse_subscriptions(SUBSCRIPTION))
    result = MessageBuilder(catalog).build(telemetry(77, IF), "t:1")
    assert isinstance(result, Rejection)
    assert "learning is off" in result.reason and "learn: true" in result.reason
    assert catalog.learned == ()


def test_badinput_learning_bounded() -> None:
    text = "learn: true\nlimits:\n  max_learned_subscriptions: 2\n" + SUBSCRIPTION
    catalog = build_catalog(parse_subscriptions(text))
    builder = MessageBuilder(catalog)
    for sub_id in (70, 71, 70, 71):
        assert isinstance(builder.build(telemetry(sub_id, IF), f"t:{sub_id}"), list)
    refused = builder.build(telemetry(72, IF), "t:72")
    assert isinstance(refused, Rejection) and "limit of 2 learned" in refused.reason
    assert sorted(entry.id for entry in catalog.learned) == [70, 71]
    # Same filter, different ids: compiled once, shared.
    first, second = catalog.learned
    assert first.compiled is second.compiled


def test_badinput_learn_is_a_strict_bool(tmp_path: Path) -> None:
    assert parse_subscriptions("learn: true\n").learn is True
    assert parse_subscriptions("").learn is False
    assert "learn" in config_error("learn: 'yes please'\n", tmp_path).reason


# ----------------------------------------- issue 14: the catalog compiles, walkers are lazy


def test_badinput_catalog_builds_no_walker(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []

    class Recording:
        def __init__(self, compiled: object) -> None:
            built.append(compiled)

    monkeypatch.setattr("yangkey.entries.KeyDeriver", Recording)
    catalog = load_catalog(EXAMPLE)
    assert built == []
    assert run("ddl", "generate", "--subscriptions", str(EXAMPLE)).exit_code == 0
    assert built == []
    entry = catalog.entries[0]
    assert entry.deriver is entry.deriver
    assert built == [entry.compiled]


# ----------------------------------------- the pipeline: input = keyed + dead-lettered


def test_badinput_pipeline_every_input_keyed_or_dead_lettered() -> None:
    catalog = build_catalog(
        parse_subscriptions("limits:\n  max_notification_bytes: 2000\n" + SUBSCRIPTION)
    )
    bad = [
        env(sub_id='"²"'),
        env(sub_id='"١٠٤٢"'),
        env(sequence="1e20"),
        env_xml(hostname="pe1&#10;evil"),
        env().replace('"hostname": "r1"', '"hostname": "pe1", "hostname": "evil"'),
        env(data='{"ietf-interfaces:interfaces": {"interface": [{"name": 1e30}]}}'),
        change("/ietf-interfaces:interfaces/interface=eth%zz", "delete"),
        change("/ietf-interfaces:interfaces/interface=eth0", "frobnicate"),
        env(data='{"x": "' + "y" * 3000 + '"}'),
        telemetry(99, IF).decode(),
        "\x00garbage",
    ]
    good = [env(), env(hostname='"r2"'), env_xml(hostname="r3")]
    records = [(raw.encode(), f"in:{n}") for n, raw in enumerate([*good, *bad], start=1)]
    tally = Tally()
    messages: list[KeyedMessage] = list(outgoing(records, MessageBuilder(catalog), "dlq", tally))
    dead = [m for m in messages if m.topic == "dlq"]
    keyed = [m for m in messages if m.topic != "dlq"]
    assert tally.records == len(records)
    assert tally.rejections == len(dead) == len(bad)
    assert tally.records == len({m.header(HEADER_SOURCE) for m in dead}) + len(good)
    assert Counter(m.value for m in dead) == Counter(raw for raw, _ in records[len(good) :])
    assert [m.key.split(b"\n")[0] for m in keyed if m.key] == [b"r1", b"r2", b"r3"]
    assert all(m.header("yangkey-error") for m in dead)


def test_badinput_one_topic_spec_type() -> None:
    from yangkey.clickhouse.ddl import DdlOptions, render_ddl  # noqa: PLC0415 - edges lazily
    from yangkey.kafka.config import TopicSpec, topic_configs  # noqa: PLC0415

    catalog = load_catalog(EXAMPLE)
    spec = catalog.topic("netops-stats-sys-system-clock")
    assert type(spec) is TopicSpec
    assert topic_configs(spec)["retention.ms"] == str(30 * 86400 * 1000)
    assert "retention.ms" not in topic_configs(TopicSpec("plain"))
    assert render_ddl([spec], DdlOptions())


@pytest.mark.needs("spark")
def test_badinput_produce_subscriptions_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.yaml", b"organisation_prefix: caf\xe9\n")
    result = run("produce", "--subscriptions", path, "--input", path, "--dry-run")
    assert_one_error(result, "latin1.yaml", "not UTF-8")


@pytest.mark.parametrize("operation", [[1], {"merge": 1}, 5, None])
def test_badinput_yang_patch_operation_not_a_string(operation: Any) -> None:
    """An operation that is an array or an object (unhashable) is a clean rejection, not a
    TypeError from the set lookup."""
    patch = {"patch-id": "p", "edit": [{"edit-id": "1", "operation": operation, "target": IF}]}
    raw = json.dumps(
        {
            "ietf-yp-notification:envelope": {
                "hostname": "r1",
                "sequence-number": 1,
                "contents": {
                    "ietf-yang-push:push-change-update": {
                        "id": 1,
                        "datastore-changes": {"ietf-yang-patch:yang-patch": patch},
                    }
                },
            }
        }
    ).encode()
    with pytest.raises(NotificationError, match="yang-patch operation"):
        decode(raw, "p.json", {})


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_badinput_xml_entities_refused_in_every_encoding(encoding: str) -> None:
    # parse_xml skips its entity walk when no 0x26 byte can be an '&': entity declarations and
    # references must still be refused whatever the encoding, and predefined ones still read.
    declared = '<!DOCTYPE n [<!ENTITY x "evil">]><n>&x;</n>'.encode(encoding)
    with pytest.raises(InputError, match="DTD or entity"):
        parse_xml(declared, "doc.xml")
    with pytest.raises(InputError, match="malformed XML"):
        parse_xml("<n>&x;</n>".encode(encoding), "doc.xml")
    assert parse_xml("<n>a&amp;b</n>".encode(encoding), "doc.xml").text == "a&b"


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-7"]
)
def test_badinput_xml_dtd_refused_behind_an_xml_declaration(encoding: str) -> None:
    # parse_xml asks the parsed document for its DTD only when its first bytes could hide one
    # from the byte scan: an XML declaration (which can name any encoding: UTF-7 spells '<!'
    # '+ADwAIQ-'), a BOM, 16- or 32-bit code units. Those documents are still refused.
    prolog = f'<?xml version="1.0" encoding="{encoding}"?>'
    with pytest.raises(InputError, match="DTD or entity"):
        parse_xml((prolog + '<!DOCTYPE n [<!ENTITY x "evil">]><n/>').encode(encoding), "doc.xml")
    assert parse_xml((prolog + "<n>a</n>").encode(encoding), "doc.xml").text == "a"
    if encoding != "utf-7":
        return
    # Python writes '<!' as is in UTF-7: the same DTD with no '<!' byte left
    hidden = b'<?xml version="1.0" encoding="UTF-7"?>+ADwAIQ-DOCTYPE n [+ADwAIQ-ENTITY x "e">]><n/>'
    assert b"<!" not in hidden
    with pytest.raises(InputError, match="DTD or entity"):
        parse_xml(hidden, "doc.xml")
