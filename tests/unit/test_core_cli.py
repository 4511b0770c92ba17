"""The CLI contract of the core commands (normalize, compile, key, keys, topic, catalog show).

Exit 0 on success; exit 1 with exactly one ``error: …`` line on stderr naming the input and
the reason on bad input (never a traceback); exit 2 on usage errors. ``key`` writes the key
bytes exactly, without a trailing newline.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from cli_helpers import assert_one_error, run, write

TESTS = Path(__file__).resolve().parents[1]
NOTIFICATIONS = TESTS / "fixtures" / "notifications"
FIXTURE_YANG = str(TESTS / "fixtures" / "yang")
EXAMPLE = TESTS.parent / "examples" / "subscriptions.yaml"

IF = "/ietf-interfaces:interfaces/interface"
NS_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
NS_SYS = "urn:ietf:params:xml:ns:yang:ietf-system"
NS_YKT = "urn:example:yangkey:yk-test"

IFACES_KEY = (
    f"router-nyc-01\n1042\n{IF}[name='eth0'] | {IF}[name='eth1'] | {IF}[name='lo']"
).encode()





def envelope(data: str, hostname: str = "r1", sub_id: int = 1) -> str:
    return (
        '{"ietf-yp-notification:envelope": {"event-time": "2026-11-20T10:00:00Z", '
        f'"hostname": {hostname}, "contents": {{"ietf-yang-push:push-update": '
        f'{{"id": {sub_id}, "datastore-contents": {data}}}}}}}}}'
    )


GOOD = envelope('{"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}', '"r1"')


# ------------------------------------------------------------------------------- key


@pytest.mark.parametrize(
    ("fixture", "extra"),
    [
        ("envelope-interfaces.json", []),
        ("envelope-interfaces.xml", []),
        ("netconf-interfaces.xml", ["--override-node", "router-nyc-01"]),
        ("restconf-interfaces.json", ["--override-node", "router-nyc-01"]),
        ("telemetry-interfaces.json", []),
        ("telemetry-interfaces.xml", []),
    ],
)
def test_core_cli_key_every_wrapper_same_bytes(fixture: str, extra: list[str]) -> None:
    result = run("key", "--xpath", IF, *extra, str(NOTIFICATIONS / fixture))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == IFACES_KEY
    assert not result.stdout_bytes.endswith(b"\n")


@pytest.mark.parametrize("fixture", ["yang-patch-interfaces.json", "yang-patch-interfaces.xml"])
def test_core_cli_key_yang_patch(fixture: str) -> None:
    path = str(NOTIFICATIONS / fixture)
    result = run("key", "--xpath", IF, "--override-node", "router-nyc-01", path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (
        f"router-nyc-01\n1042\n{IF}[name='eth0/1'] | {IF}[name='eth1'] | {IF}[name='lo']"
    ).encode()


@pytest.mark.parametrize("fixture", ["envelope-interfaces.json", "envelope-interfaces.xml"])
def test_core_cli_key_ipv6_and_identityref_filter_parity(fixture: str) -> None:
    ipv6 = run("key", "--xpath", f"{IF}/ietf-ip:ipv6/address", str(NOTIFICATIONS / fixture))
    assert ipv6.stdout_bytes == (
        f"router-nyc-01\n1042\n{IF}[name='eth0']/ietf-ip:ipv6/address[ip='2001:db8::1']"
    ).encode()
    ether = run("key", "--xpath", f"{IF}[type='iana-if-type:ethernetCsmacd']/oper-status",
                str(NOTIFICATIONS / fixture))
    assert ether.exit_code == 0, ether.stderr
    assert ether.stdout_bytes == (
        f"router-nyc-01\n1042\n{IF}[name='eth0']/oper-status | {IF}[name='eth1']/oper-status"
    ).encode()


@pytest.mark.parametrize("fixture", ["flows.json", "flows.xml"])
def test_core_cli_key_composite_keys_with_yang_dir(fixture: str) -> None:
    result = run("key", "--yang-dir", FIXTURE_YANG, "--xpath", "/yk-test:top/flow",
                 str(NOTIFICATIONS / fixture))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (
        b"fw-1\n7\n"
        b"/yk-test:top/flow[proto='yk-aug:sctp'][port='4294967295'][enabled='false']"
        b" | /yk-test:top/flow[proto='yk-test:tcp'][port='80'][enabled='true']"
        b" | /yk-test:top/flow[proto='yk-test:udp'][port='53'][enabled='true']"
    )


def test_core_cli_key_utf8_bytes_exact(tmp_path: Path) -> None:
    raw = envelope('{"ietf-interfaces:interfaces": {"interface": [{"name": "é|ü"}]}}', '"nœud"')
    path = write(tmp_path, "n.json", raw)
    result = run("key", "--xpath", IF, path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == f"nœud\n1\n{IF}[name='é|ü']".encode()


def test_core_cli_key_node_and_subscription_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", GOOD)
    result = run(
        "key", "--xpath", IF, "--override-node", "forced", "--override-subscription-id", "99", path
    )
    assert result.stdout_bytes == f"forced\n99\n{IF}[name='eth0']".encode()


def test_core_cli_key_json_document(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", GOOD)
    result = run("key", "--json", "--prefix", "netops", "--xpath",
                 f"{IF} | /ietf-system:system/clock/timezone-name", path)
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    assert document == {
        "key": f"r1\n1\n{IF}[name='eth0']",
        "node": "r1",
        "subscription_id": 1,
        "xpaths": [f"{IF}[name='eth0']"],
        "topics": ["netops-if-interfaces-interface"],
    }


def test_core_cli_key_subtree_file(tmp_path: Path) -> None:
    subtree = write(tmp_path, "f.xml", f'<filter><interfaces xmlns="{NS_IF}"><interface>'
                                       "<name>eth1</name></interface></interfaces></filter>")
    result = run("key", "--subtree", subtree, str(NOTIFICATIONS / "envelope-interfaces.json"))
    assert result.stdout_bytes == f"router-nyc-01\n1042\n{IF}[name='eth1']".encode()


def test_core_cli_key_xml_prefix_namespaces(tmp_path: Path) -> None:
    result = run("key", "--xpath", "/x:interfaces/x:interface[x:name='lo']",
                 "--namespace", f"x={NS_IF}", str(NOTIFICATIONS / "envelope-interfaces.json"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == f"router-nyc-01\n1042\n{IF}[name='lo']".encode()


def test_core_cli_key_keyless_position(tmp_path: Path) -> None:
    raw = envelope('{"yk-test:top": {"sample": [{"reading": "a"}, {"reading": "b"}]}}', '"r"')
    path = write(tmp_path, "s.json", raw)
    rejected = run("key", "--yang-dir", FIXTURE_YANG, "--xpath", "/yk-test:top/sample", path)
    assert_one_error(rejected, "sample")
    accepted = run("key", "--yang-dir", FIXTURE_YANG, "--keyless", "position",
                   "--xpath", "/yk-test:top/sample", path)
    assert accepted.exit_code == 0, accepted.stderr
    assert accepted.stdout_bytes.split(b"\n")[:2] == [b"r", b"1"]


# ---------------------------------------------------------------------- bad input, exit 1


@pytest.mark.parametrize(
    ("name", "content", "needles"),
    [
        ("broken.xml", "<notification><a></notification>", ["malformed XML"]),
        ("broken.json", '{"ietf-yp-notification:envelope": {', ["malformed JSON"]),
        ("dtd.xml", '<!DOCTYPE n [<!ENTITY x SYSTEM "file:///etc/passwd">]><n>&x;</n>',
         ["DTD"]),
        ("empty.json", "", ["empty"]),
        ("missing-key.json",
         envelope('{"ietf-interfaces:interfaces": {"interface": [{"oper-status": "up"}]}}',
                  '"r1"'), ["name"]),
        ("nomatch.json", envelope('{"ietf-system:system": {"contact": "x"}}', '"r1"'),
         ["no data on the subscribed path", "ietf-system:system"]),
        ("no-node.xml",
         '<notification xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0">'
         '<push-update xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-push"><id>1</id>'
         f'<datastore-contents><interfaces xmlns="{NS_IF}"><interface><name>a</name>'
         "</interface></interfaces></datastore-contents></push-update></notification>",
         ["node"]),
    ],
)
def test_core_cli_key_bad_notification(tmp_path: Path, name: str, content: str,
                                       needles: list[str]) -> None:
    path = write(tmp_path, name, content)
    line = assert_one_error(run("key", "--xpath", IF, path), name, *needles)
    assert "root:" not in line


def test_core_cli_key_unreadable_file(tmp_path: Path) -> None:
    assert_one_error(run("key", "--xpath", IF, str(tmp_path / "absent.json")), "absent.json")


@pytest.mark.parametrize("hostname", ["5", "true", '["r1"]'])
def test_core_cli_key_non_string_hostname_one_error_line(tmp_path: Path, hostname: str) -> None:
    raw = envelope('{"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}', hostname)
    path = write(tmp_path, "odd-host.json", raw)
    assert_one_error(run("key", "--xpath", IF, path), "odd-host.json")


def test_core_cli_unknown_node_xpath(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", GOOD)
    assert_one_error(run("key", "--xpath", "/ietf-system:system/clockz/x", path), "clockz")


def test_core_cli_unknown_node_subtree_names_file(tmp_path: Path) -> None:
    subtree = write(tmp_path, "unknown-node.xml",
                    f'<system xmlns="{NS_SYS}"><clockz/></system>')
    assert_one_error(run("compile", "--json", "--subtree", subtree), "unknown-node.xml", "clockz")


def test_core_cli_keyless_list_xpath() -> None:
    assert_one_error(run("compile", "--yang-dir", FIXTURE_YANG, "--xpath", "/yk-test:top/sample"),
                     "sample", "key")


def test_core_cli_keyless_list_subtree_names_file(tmp_path: Path) -> None:
    subtree = write(tmp_path, "keyless.xml", f'<top xmlns="{NS_YKT}"><sample/></top>')
    assert_one_error(run("compile", "--yang-dir", FIXTURE_YANG, "--subtree", subtree),
                     "keyless.xml", "sample")


@pytest.mark.parametrize("command", [["compile", "--json"], ["topic"]])
def test_core_cli_unknown_namespace_subtree(tmp_path: Path, command: list[str]) -> None:
    subtree = write(tmp_path, "unknown-ns.xml", '<w xmlns="urn:example:nowhere"><x/></w>')
    assert_one_error(run(*command, "--subtree", subtree), "unknown-ns.xml",
                     "urn:example:nowhere")


def test_core_cli_dtd_subtree_filter(tmp_path: Path) -> None:
    subtree = write(tmp_path, "lol.xml",
                    '<!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
                    f'<interfaces xmlns="{NS_IF}"><interface><name>&b;</name></interface>'
                    "</interfaces>")
    assert_one_error(run("compile", "--subtree", subtree), "lol.xml", "DTD")


def test_core_cli_malformed_subtree_filter(tmp_path: Path) -> None:
    subtree = write(tmp_path, "bad-filter.xml", "<filter><interfaces></filter>")
    assert_one_error(run("topic", "--subtree", subtree), "bad-filter.xml", "malformed XML")


@pytest.mark.parametrize("command", ["topic", "compile", "key"])
def test_core_cli_invalid_prefix(tmp_path: Path, command: str) -> None:
    path = write(tmp_path, "n.json", GOOD)
    args = ["--xpath", IF, "--prefix", "bad prefix"]
    if command == "key":
        args += ["--json", path]
    assert_one_error(run(command, *args), "'bad prefix'")


def test_core_cli_normalize_errors(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty-filter.xml", "<filter/>")
    assert_one_error(run("normalize", empty), "empty-filter.xml", "empty")
    attribute = write(tmp_path, "attr.xml",
                      f'<interfaces xmlns="{NS_IF}"><interface name="x"/></interfaces>')
    assert_one_error(run("normalize", attribute), "attr.xml", "attribute")


def test_core_cli_unqualified_xpath() -> None:
    assert_one_error(run("topic", "--xpath", "/interfaces/interface"), "interfaces")


def test_core_cli_xpath_syntax_error() -> None:
    assert_one_error(run("compile", "--xpath", f"{IF}[name=='x']"))


# ---------------------------------------------------------------------- usage, exit 2


@pytest.mark.parametrize("command", ["compile", "key", "topic", "keys"])
def test_core_cli_both_filters_is_usage_error(tmp_path: Path, command: str) -> None:
    subtree = write(tmp_path, "f.xml", f'<interfaces xmlns="{NS_IF}"/>')
    args = [command, "--xpath", IF, "--subtree", subtree]
    if command in ("key", "keys"):
        args.append(write(tmp_path, "n.json", GOOD))
    result = run(*args)
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "--xpath" in result.stderr and "--subtree" in result.stderr


# keys without a filter keys with a subscriptions file (test_cli_keys_file.py)
@pytest.mark.parametrize("command", ["compile", "key", "topic"])
def test_core_cli_no_filter_is_usage_error(tmp_path: Path, command: str) -> None:
    args = [command]
    if command == "key":
        args.append(write(tmp_path, "n.json", GOOD))
    result = run(*args)
    assert result.exit_code == 2, (result.exit_code, result.stderr)


def test_core_cli_bad_namespace_option_is_usage_error() -> None:
    assert run("compile", "--xpath", IF, "--namespace", "nonsense").exit_code == 2


def test_core_cli_unknown_option_is_usage_error() -> None:
    assert run("key", "--frobnicate").exit_code == 2


# ------------------------------------------------------------------------------- keys


def test_core_cli_keys_batch_continues_past_bad_line(tmp_path: Path) -> None:
    second = envelope('{"ietf-interfaces:interfaces": {"interface": [{"name": "b"}]}}', '"r2"', 5)
    lines = [GOOD, "{oops", "", second,
             envelope('{"ietf-system:system": {}}', '"r3"')]
    path = write(tmp_path, "batch.jsonl", "\n".join(lines) + "\n")
    result = run("keys", "--xpath", IF, path)
    assert result.exit_code == 1
    out = result.stdout.splitlines()
    assert len(out) == 4  # the blank line is skipped, every other line gives one JSON
    docs = [orjson.loads(line) for line in out]
    assert docs[0]["key"] == f"r1\n1\n{IF}[name='eth0']"
    assert docs[0]["topics"] == ["if-interfaces-interface"]
    assert docs[1]["line"] == 2 and "malformed JSON" in docs[1]["error"]
    assert "batch.jsonl" in docs[1]["error"]
    assert docs[2]["key"] == f"r2\n5\n{IF}[name='b']"
    assert docs[3]["line"] == 5 and docs[3]["kind"] == "no-match"
    err = result.stderr.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "batch.jsonl" in err[0]


def test_core_cli_keys_all_good_exit_zero(tmp_path: Path) -> None:
    result = run("keys", "--xpath", IF, "-", input=GOOD + "\n" + GOOD + "\n")
    assert result.exit_code == 0, result.stderr
    assert [orjson.loads(x)["key"] for x in result.stdout.splitlines()] == [
        f"r1\n1\n{IF}[name='eth0']"
    ] * 2
    assert result.stderr == ""


def test_core_cli_keys_odd_line_does_not_stop_batch(tmp_path: Path) -> None:
    odd = envelope('{"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}', "7")
    path = write(tmp_path, "odd.jsonl", "\n".join([odd, GOOD]) + "\n")
    result = run("keys", "--xpath", IF, path)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception)
    )
    out = result.stdout.splitlines()
    assert len(out) == 2
    assert "error" in orjson.loads(out[0])
    assert orjson.loads(out[1])["key"] == f"r1\n1\n{IF}[name='eth0']"


def test_core_cli_keys_missing_file(tmp_path: Path) -> None:
    assert_one_error(run("keys", "--xpath", IF, str(tmp_path / "gone.jsonl")), "gone.jsonl")


# ------------------------------------------------------------------- compile / topic / misc


def test_core_cli_compile_json_warnings(tmp_path: Path) -> None:
    result = run("compile", "--json", "--xpath", f"{IF}[enabled='true']/oper-status")
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    assert document["branches"][0]["template"] == f"{IF}[name='%s']/oper-status"
    assert len(document["warnings"]) == 1 and "enabled" in document["warnings"][0]


def test_core_cli_compile_table_output() -> None:
    result = run("compile", "--xpath", "/ietf-system:system/clock")
    assert result.exit_code == 0, result.stderr
    assert "sys-system-clock" in result.stdout


def test_core_cli_topic_union_one_per_line() -> None:
    result = run("topic", "--prefix", "netops", "--xpath",
                 f"{IF}/oper-status | /ietf-system:system/clock")
    assert result.stdout == (
        "netops-if-interfaces-interface-oper-status\nnetops-sys-system-clock\n"
    )


def test_core_cli_topic_max_length() -> None:
    result = run("topic", "--max-length", "20", "--xpath", f"{IF}/ietf-ip:ipv4/address")
    assert result.exit_code == 0, result.stderr
    (name,) = result.stdout.splitlines()
    assert len(name) <= 20
    assert name.startswith("if-")


def test_core_cli_normalize_stdin() -> None:
    result = run("normalize", "-", input=f'<system xmlns="{NS_SYS}"><clock/></system>')
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "/ietf-system:system/ietf-system:clock\n"


def test_core_cli_catalog_show_json() -> None:
    result = run("catalog", "show", "--subscriptions", str(EXAMPLE), "--json")
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    topics = {row["subscription_id"]: row["topic"] for row in document["subscriptions"]}
    assert topics[1042] == "netops-current-state-if-interfaces-interface"
    assert topics[2001] == "netops-stats-sys-system-clock"
    assert {t["name"] for t in document["topics"]} == set(topics.values())


def test_core_cli_catalog_show_bad_file(tmp_path: Path) -> None:
    path = write(tmp_path, "subs.yaml", "subscriptions:\n  - id: 1\n    bogus: 2\n")
    assert_one_error(run("catalog", "show", "--subscriptions", path), "subs.yaml", "bogus")
