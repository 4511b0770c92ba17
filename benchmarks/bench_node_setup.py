"""A Spark task's transform over data where every node is new, against the same data again.

bench_spark_produce.py's ``mixed`` data (the demo mix) has 16 records per node: each node's
first records find no state of the builder's for that node. Here one range of the data goes
through :func:`yangkey.spark.lines.transform` (the task's line loop) with a fresh builder
(``cold``: every node new), then again through the same builder (``warm``), round after round.
Printed: CPU µs per record both ways and the garbage collector's collections and time in the
round (per-node state it had to walk).

    python benchmarks/bench_node_setup.py --count 200000 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_spark_produce import subscriptions, write_input

from yangkey.spark.lines import transform
from yangkey.spark.source.splitting import FileRange
from yangkey.spark.transform import BuilderSpec, Tally


class Collections:
    """The garbage collector's collections per generation and their time."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.counts[info["generation"]] += 1

    def take(self) -> str:
        text = f"gc {'/'.join(map(str, self.counts))} in {self.seconds * 1e3:.0f} ms"
        self.counts, self.seconds = [0, 0, 0], 0.0
        return text


def one_pass(path: Path, builder: Any) -> float:
    """CPU µs per record of the line loop over the whole file."""
    key, records = FileRange(str(path), 0, path.stat().st_size, 1, "lines").read()
    del key
    tally = Tally()
    started = time.process_time()
    for _ in transform(records, builder, "dead-letter", tally):
        pass
    return (time.process_time() - started) * 1e6 / max(1, tally.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200_000, help="notifications")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", choices=["periodic", "mixed"], default="mixed")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-node-setup-"))
    try:
        data = work / "in.jsonl"
        write_input(data, args.count, args.seed, args.data)
        spec = BuilderSpec.from_file(subscriptions(work, "bench-node", 6))
        spec.builder()  # the schema, cached for the process
        collections = Collections()
        for round_ in range(1, args.rounds + 1):
            builder = spec.builder()
            cold = one_pass(data, builder)
            warm = one_pass(data, builder)
            print(
                f"round {round_}: cold {cold:.2f} µs/record, warm {warm:.2f} µs/record;"
                f" {collections.take()}; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
