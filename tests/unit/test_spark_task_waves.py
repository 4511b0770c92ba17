"""Task count of a batch plan on a local master: full waves of tasks (planning.balanced_split)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from yangkey.spark.config import JobConfig
from yangkey.spark.planning import balanced_split, plan_inputs, task_slots
from yangkey.spark.source.splitting import FileRange

MB = 1 << 20


@pytest.mark.parametrize(
    ("master", "slots"),
    [("local[2]", 2), ("local", 1), ("local[3,2]", 3), ("spark://h:7077", None), ("yarn", None)],
)
def test_task_slots_of_a_master(master: str, slots: int | None) -> None:
    assert task_slots(master) == slots


def test_balanced_split_fills_the_last_wave() -> None:
    # fewer tasks where each grows by at most half, else more
    assert balanced_split(85 * MB, 32 * MB, 2) == -(-85 * MB // 2)  # 3 tasks -> 2 (+33%)
    assert balanced_split(150 * MB, 32 * MB, 2) == -(-150 * MB // 4)  # 5 -> 4 (+17%)
    assert balanced_split(190 * MB, 32 * MB, 4) == -(-190 * MB // 4)  # 6 -> 4 (+48%)
    assert balanced_split(200 * MB, 32 * MB, 4) == 25 * MB  # 7 -> 8: 4 would be +56%
    assert balanced_split(40 * MB, 32 * MB, 3) == -(-40 * MB // 3)  # 2 -> 3: none fewer
    assert balanced_split(100 * MB, 32 * MB, 2) == 25 * MB  # 4 tasks, already full
    assert balanced_split(64 * MB, 32 * MB, 2) == 32 * MB  # 2 tasks, already full
    assert balanced_split(20 * MB, 32 * MB, 2) == 32 * MB  # one task stays one
    assert balanced_split(85 * MB, 32 * MB, None) == 32 * MB  # cluster: unknown slots
    assert balanced_split(85 * MB, 32 * MB, 1) == 32 * MB


def _plan(tmp_path: Path, master: str) -> list[FileRange]:
    data = tmp_path / "in.jsonl"
    if not data.exists():
        data.write_bytes(b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * 60) for i in range(900)))
    config = JobConfig.of(
        subscriptions="s.yaml", inputs=(str(data),), master=master, split_size=25_000, dry_run=True
    )
    plan, remote = plan_inputs(config, {})
    assert not remote
    return [r for r in plan if isinstance(r, FileRange)]


def test_plan_on_two_cores_has_an_even_number_of_tasks(tmp_path: Path) -> None:
    cluster = _plan(tmp_path, "spark://h:7077")
    local = _plan(tmp_path, "local[2]")
    size = (tmp_path / "in.jsonl").stat().st_size
    assert len(cluster) == 3  # 73 kB cut at 25 kB
    assert len(local) == 2  # 36.5 kB each: one wave, each task under 1.5 times 25 kB
    for ranges in (cluster, local):  # contiguous, whole lines, the whole file
        assert ranges[0].start == 0 and ranges[-1].end == size
        assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
