"""Write the example YANG-Push data set as JSON lines (one notification per line, JSON or XML).

python examples/generate.py --nodes 4 --out notifications.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yangkey.sample import generate, iter_jsonl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--interfaces", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3, help="on-change rounds per node")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, help="output file (default: stdout)")
    args = parser.parse_args()
    data = generate(args.nodes, args.interfaces, args.rounds, args.seed)
    out = args.out.open("wb") if args.out else sys.stdout.buffer
    with out:
        out.writelines(iter_jsonl(data.records))
    print(f"{len(data.records)} notifications, {data.expected.bad} bad", file=sys.stderr)


if __name__ == "__main__":
    main()
