"""``yangkey keys`` with a subscriptions file (issue 34.6): each line keyed with the
subscription of its id, as ``produce`` keys it; without --xpath, --subtree or --subscriptions,
the example subscriptions that ``yangkey sample`` streams."""

from __future__ import annotations

from pathlib import Path

import orjson
from cli_helpers import run, write

from yangkey.demo.sample import generate, iter_jsonl


def _sample() -> tuple[bytes, object]:
    data = generate(interfaces=3, seed=7)
    return b"".join(iter_jsonl(data.records)), data.expected


def test_sample_piped_into_keys_is_keyed_with_the_sample_s_own_subscriptions() -> None:
    lines, expected = _sample()
    result = run("keys", input=lines)
    documents = [orjson.loads(line) for line in result.stdout.splitlines()]
    errors = [d for d in documents if "error" in d]
    keyed = [d for d in documents if "key" in d]
    # only the generator's deliberately bad notifications are rejected (produce dead-letters
    # the same ones); every message key the pipeline ends with comes out of keys
    assert len(errors) == expected.bad == 4, errors  # type: ignore[attr-defined]
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("error: 4 line(s) of <stdin> rejected")
    assert "example subscriptions" in result.stderr.splitlines()[0]
    found = {(d["node"], d["subscription_id"], " | ".join(d["xpaths"])) for d in keyed}
    assert found == set(expected.current)  # type: ignore[attr-defined]
    assert {d["subscription_id"] for d in keyed} == {1042, 1043, 1100, 2001, 2002, 3001}
    assert all(d["topics"] and d["key"].split("\n")[0] == d["node"] for d in keyed)


def test_a_subscriptions_file_keys_by_id_and_names_an_unknown_one(tmp_path: Path) -> None:
    subscriptions = write(
        tmp_path,
        "subscriptions.yaml",
        "organisation_prefix: lab\n"
        "subscriptions:\n"
        "  - id: 1042\n"
        "    xpath: /ietf-interfaces:interfaces/interface\n",
    )
    lines, _ = _sample()
    result = run("keys", "--subscriptions", subscriptions, input=lines)
    documents = [orjson.loads(line) for line in result.stdout.splitlines()]
    keyed = [d for d in documents if "key" in d]
    assert keyed and {d["subscription_id"] for d in keyed} == {1042}
    assert {t for d in keyed for t in d["topics"]} == {"lab-if-interfaces-interface"}
    unknown = [d for d in documents if "unknown subscription id 1043" in d.get("error", "")]
    assert unknown and "the catalog has 1042" in unknown[0]["error"]
    assert "example subscriptions" not in result.stderr


def test_one_subscription_or_a_file_not_both() -> None:
    both = run("keys", "--xpath", "/ietf-interfaces:interfaces/interface", "-s", __file__)
    assert both.exit_code == 2 and "not both" in both.stderr
    prefix = run("keys", "--prefix", "netops", input=b"")
    assert prefix.exit_code == 2 and "--prefix shapes the subscription of --xpath" in prefix.stderr
