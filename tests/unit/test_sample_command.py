"""``yangkey sample``: the demo's data set as a file, with its expected outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from yangkey.cli import main


def _sample(tmp_path: Path, *args: str) -> tuple[list[bytes], dict[str, object]]:
    tmp_path.mkdir(exist_ok=True)
    out, expected = tmp_path / "n.jsonl", tmp_path / "expected.json"
    result = CliRunner().invoke(
        main, ["sample", "-o", str(out), "--expected", str(expected), *args]
    )
    assert result.exit_code == 0, result.output
    return out.read_bytes().splitlines(), json.loads(expected.read_text())


@pytest.mark.parametrize(
    "count", [18, 19, 35, 1001, pytest.param(20_000, marks=pytest.mark.slow)]
)
def test_count_is_exact_and_the_expected_outcome_matches_the_file(
    tmp_path: Path, count: int
) -> None:
    lines, expected = _sample(tmp_path, "--count", str(count))
    assert len(lines) == expected["notifications"] == count
    assert expected["rejected"] == 4
    current = expected["current_state"]
    assert isinstance(current, list)
    nodes = {row["node"] for row in current}
    # every node's counters, addresses, inventory, clock and DNS keys are expected
    assert {row["subscription_id"] for row in current} == {1042, 1043, 1100, 2001, 2002, 3001}
    assert len({(r["node"], r["subscription_id"], r["xpaths"]) for r in current}) == len(current)
    # every node's own name appears in the data it sends
    text = b"\n".join(lines)
    assert all(node.encode() in text for node in nodes)


def test_same_seed_same_bytes_other_seed_other_data(tmp_path: Path) -> None:
    first, _ = _sample(tmp_path / "a", "--count", "500", "--seed", "3")
    again, _ = _sample(tmp_path / "b", "--count", "500", "--seed", "3")
    other, _ = _sample(tmp_path / "c", "--count", "500", "--seed", "4")
    assert first == again != other


def test_default_is_the_demo_data_set_and_addresses_stay_valid(tmp_path: Path) -> None:
    lines, _ = _sample(tmp_path)
    assert len(lines) == 68
    many, _ = _sample(tmp_path / "many", "--count", "10000")
    ips = [json.loads(line) for line in many if b'"ietf-ip:ipv4"' in line]
    assert len(ips) > 254  # nodes past the documentation range get other valid addresses
    for document in ips:
        update = document["ietf-yp-notification:envelope"]["contents"]
        interface = update["ietf-yang-push:push-update"]["datastore-contents"][
            "ietf-interfaces:interfaces"
        ]["interface"][0]
        octets = interface["ietf-ip:ipv4"]["address"][0]["ip"].split(".")
        assert all(0 <= int(o) <= 255 for o in octets), octets


def test_too_small_a_count_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["sample", "--count", "17", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2
    result = CliRunner().invoke(
        main, ["sample", "--count", "20", "--interfaces", "40", "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 2 and "--count" in result.output
