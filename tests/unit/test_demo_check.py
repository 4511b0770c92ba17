"""Issue 8.2: the demo's data is stamped relative to when it runs, and its self-check tells
rows that ClickHouse dropped by TTL apart from rows the pipeline lost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from yangkey.catalog import load_catalog
from yangkey.demo.pipeline import DemoResult, check, current_ttl, invoked_as, query_commands
from yangkey.demo.sample import generate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
TWO_DAYS = 2 * 86400


def _times(expected: dict[tuple[str, int, str], str]) -> list[datetime]:
    return [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in expected.values()]


def test_sample_is_stamped_within_the_last_hours() -> None:
    now = datetime.now(UTC)
    data = generate(nodes=2, interfaces=3, rounds=2)
    times = _times(data.expected.current)
    assert min(times) >= now - timedelta(hours=2)
    assert max(times) <= now + timedelta(minutes=5)


def test_sample_is_deterministic_for_a_given_start() -> None:
    start = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = generate(nodes=2, interfaces=3, rounds=2, start=start)
    assert first.records == generate(nodes=2, interfaces=3, rounds=2, start=start).records
    assert min(_times(first.expected.current)) > start
    assert generate(nodes=2, interfaces=3, rounds=2).records == generate(2, 3, 2).records


def test_current_ttl_follows_the_ddl() -> None:
    # Compacted topics keep every key for ever; others expire with the topic's retention.
    ttl = current_ttl(load_catalog(EXAMPLES).topics)
    assert ttl[1043] == TWO_DAYS
    assert 1042 not in ttl
    assert 3001 not in ttl
    assert ttl[2001] == 30 * 86400


def _nothing_stored(start: datetime) -> DemoResult:
    data = generate(nodes=1, interfaces=2, rounds=0, start=start)
    return DemoResult(
        records=len(data.records),
        produced={},
        rejected=0,
        ingested={},
        current=[],
        partitions=[],
        dead_letters=[],
        expected=data.expected,
        ttl={1043: TWO_DAYS},
    )


def test_check_tells_expired_rows_from_lost_ones() -> None:
    start = datetime(2026, 11, 20, 10, tzinfo=UTC)
    result = _nothing_stored(start)
    problems, expired = check(result, now=start + timedelta(days=3))
    assert len(expired) == 1
    assert expired[0].startswith("pe1.nyc 1043 ")
    lost = [p for p in problems if p.startswith("lost current state: ")]
    assert len(lost) == len(result.expected.current) - 1
    assert not any(" 1043 " in p for p in lost)


@pytest.mark.parametrize("age", [timedelta(hours=1), timedelta(days=2) - timedelta(minutes=1)])
def test_rows_within_their_ttl_are_lost_not_expired(age: timedelta) -> None:
    start = datetime(2026, 11, 20, 10, tzinfo=UTC)
    result = _nothing_stored(start)
    problems, expired = check(result, now=start + age)
    assert expired == []
    assert sum(p.startswith("lost current state: ") for p in problems) == len(
        result.expected.current
    )


def test_the_printed_queries_name_the_program_a_shell_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make demo`` runs ``.venv/bin/yangkey``, which no PATH names: the commands the demo
    prints must start with that path, or ``yangkey`` when PATH finds this very program."""
    program = tmp_path / "venv" / "bin" / "yangkey"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert invoked_as(".venv/bin/yangkey") == ".venv/bin/yangkey"
    assert invoked_as("yangkey") == "yangkey"
    assert invoked_as(str(tmp_path / "my dir" / "yangkey")) == f"'{tmp_path}/my dir/yangkey'"
    monkeypatch.setenv("PATH", str(program.parent))
    assert invoked_as(str(program)) == "yangkey"
    state = query_commands(Path("store"), "pe1", invoked_as(".venv/bin/yangkey"))[0]
    assert state.startswith(".venv/bin/yangkey state --embedded store --node pe1")
