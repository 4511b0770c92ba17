"""One-shot CLI: ``yangkey key`` on one notification, cold and warm schema cache.

Each run is a fresh process, as a user or a script would start it. Three settings:

* ``no cache``: ``YANGKEY_SCHEMA_CACHE=off``, every run builds the schema (the behaviour before
  the cache);
* ``cold``: an empty cache directory per run (build, then write the cache);
* ``warm``: the cache written by a previous run (load the compiled subscription; yangson is
  not imported).

Prints the best and median wall time and the CPU time (user + system) of each setting, and the
cold/warm ratio. Goal (issue 9): warm < 0.3 s. On a loaded machine compare the CPU figures:
wall time there mostly measures waiting for a core.

    python benchmarks/bench_oneshot.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

XPATH = "/ietf-interfaces:interfaces/interface"
NOTIFICATION = (
    b'{"ietf-yp-notification:envelope": {"event-time": "2026-11-20T10:00:00Z", '
    b'"hostname": "router-nyc-01", "contents": {"ietf-yang-push:push-update": {"id": 1042, '
    b'"datastore-contents": {"ietf-interfaces:interfaces": {"interface": '
    b'[{"name": "eth0"}, {"name": "eth1"}]}}}}}}'
)
EXPECTED = (
    b"router-nyc-01\n1042\n/ietf-interfaces:interfaces/interface[name='eth0'] | "
    b"/ietf-interfaces:interfaces/interface[name='eth1']"
)
YANGKEY = Path(sys.executable).with_name("yangkey")


def run_once(notification: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``yangkey key`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [str(YANGKEY), "key", "--xpath", XPATH, str(notification)],
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0 or result.stdout != EXPECTED:
        raise SystemExit(f"yangkey key failed: {result.stderr.decode()!r} {result.stdout!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(
    label: str, runs: int, notification: Path, env_for_run: dict[str, str] | None, fresh_dir: bool
) -> tuple[float, float]:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        env = dict(os.environ)
        if env_for_run:
            env.update(env_for_run)
        if fresh_dir:
            with tempfile.TemporaryDirectory(prefix="yangkey-bench-cold-") as empty:
                env["YANGKEY_SCHEMA_CACHE"] = empty
                wall, cpu = run_once(notification, env)
        else:
            wall, cpu = run_once(notification, env)
        walls.append(wall)
        cpus.append(cpu)
    print(
        f"{label:9s} wall best {min(walls):.3f} s  median {statistics.median(walls):.3f} s   "
        f"cpu best {min(cpus):.3f} s  median {statistics.median(cpus):.3f} s"
    )
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="yangkey-bench-") as work:
        notification = Path(work) / "notification.json"
        notification.write_bytes(NOTIFICATION)
        cache = Path(work) / "cache"
        print(f"yangkey key --xpath {XPATH} NOTIFICATION, {args.runs} runs each")
        measure("no cache", args.runs, notification, {"YANGKEY_SCHEMA_CACHE": "off"}, False)
        cold_wall, cold_cpu = measure("cold", args.runs, notification, None, True)
        warm_env = {"YANGKEY_SCHEMA_CACHE": str(cache)}
        run_once(notification, {**os.environ, **warm_env})  # fill the cache
        warm_wall, warm_cpu = measure("warm", args.runs, notification, warm_env, False)
        print(
            f"cold/warm: wall {cold_wall / warm_wall:.1f}x, cpu {cold_cpu / warm_cpu:.1f}x; "
            f"warm goal < 0.3 s: wall {'met' if warm_wall < 0.3 else 'NOT met'}, "
            f"cpu {'met' if warm_cpu < 0.3 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
