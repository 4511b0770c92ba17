"""Sweep a vendor model set: every keyed list path, enumerated with pyang, compiled by yangkey.

A manual check on models you fetch (they are never committed). For a model directory
(``--models DIR``, repeatable; every directory under it that holds ``.yang`` files goes on the
search path), pyang loads every module and lists the path of every keyed list in the data
trees, augments included, written as a subscription would be (module name on the first step
and where the module changes). Each path is then compiled through ``compile_subscription``,
the function behind ``yangkey compile``, with the computed YANG library (in one process, one
schema per module set, no disk cache). Prints the number of paths, how many compiled, and the
failures grouped by reason (first 160 characters), with one example path each.

    python benchmarks/sweep_models.py --models /work/fetched/srlinux [--limit N] [--json OUT]

To compare with another checkout, run it with that checkout first on ``PYTHONPATH`` from a
directory that has no ``yangkey`` package (``cd /tmp``): the path enumeration is pyang's, the
same for both.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import orjson


def model_dirs(roots: list[str]) -> list[str]:
    found: dict[str, None] = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*.yang")):
            found[str(path.parent)] = None
    return list(found)


def keyed_list_paths(dirs: list[str]) -> tuple[list[str], int]:
    """Every keyed list path of every module in ``dirs`` (pyang's view of the trees), and the
    number of keyless list paths."""
    from pyang import context, repository  # noqa: PLC0415

    repo = repository.FileRepository(os.pathsep.join(dirs), use_env=False)
    ctx = context.Context(repo)
    ctx.lax_quote_checks = True
    ctx.lax_xpath_checks = True
    modules = []
    names: set[str] = set()
    for directory in dirs:
        for path in sorted(Path(directory).glob("*.yang")):
            text = path.read_text(encoding="utf-8", errors="replace")
            header = re.search(r"^\s*(module|submodule)\s+([\w.-]+)", text, re.MULTILINE)
            if header is None or header.group(1) != "module" or header.group(2) in names:
                continue
            names.add(header.group(2))
            module = ctx.add_module(str(path), text)
            if module is not None:
                modules.append(module)
    ctx.validate()
    paths: dict[str, None] = {}
    keyless: dict[str, None] = {}

    def walk(node: Any, prefix: str, parent_module: str | None) -> None:
        for child in getattr(node, "i_children", []):
            keyword = child.keyword
            if keyword in ("rpc", "action", "notification", "input", "output"):
                continue
            module = child.i_module.i_modulename
            if keyword in ("choice", "case"):
                walk(child, prefix, parent_module)
                continue
            if keyword not in ("container", "list"):
                continue
            step = child.arg if module == parent_module else f"{module}:{child.arg}"
            path = f"{prefix}/{step}"
            if keyword == "list":
                (paths if child.search_one("key") is not None else keyless)[path] = None
            walk(child, path, module)

    for module in modules:
        walk(module, "", None)
    return list(paths), len(keyless)


def modules_of(path: str) -> frozenset[str]:
    return frozenset(re.findall(r"/([\w.-]+):", path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", action="append", required=True, metavar="DIR")
    parser.add_argument("--limit", type=int, default=0, help="compile only the first N paths")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="compile the paths of every Nth module set only (sorted by name): a sample of a "
        "family whose sets take long to build with an older checkout",
    )
    parser.add_argument("--json", metavar="OUT", help="write every path and its outcome here")
    parser.add_argument(
        "--keyless",
        choices=("reject", "position"),
        default="position",
        help="policy for keyless lists above a keyed one (default: position, so that only "
        "other causes fail)",
    )
    args = parser.parse_args()
    os.environ["YANGKEY_SCHEMA_CACHE"] = "off"
    import yangkey  # noqa: PLC0415 - after the environment is set
    from yangkey.errors import YangkeyError  # noqa: PLC0415
    from yangkey.modules import default_search_path  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415
    from yangkey.templates import compile_subscription  # noqa: PLC0415

    dirs = model_dirs(args.models)
    started = time.perf_counter()
    paths, keyless = keyed_list_paths(dirs)
    print(f"yangkey from {Path(yangkey.__file__).parent}", file=sys.stderr)
    print(
        f"{len(paths)} keyed list paths, {keyless} keyless "
        f"({time.perf_counter() - started:.0f} s with pyang)"
    )
    if args.limit:
        paths = paths[: args.limit]
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for path in paths:
        groups[modules_of(path)].append(path)
    if args.every > 1:
        chosen = sorted(groups, key=sorted)[:: args.every]
        groups = defaultdict(list, {group: groups[group] for group in chosen})
        print(f"sample: every {args.every}th module set, {sum(map(len, groups.values()))} paths")
    search_path = default_search_path(dirs)
    outcomes: dict[str, str] = {}
    reasons: Counter[str] = Counter()
    examples: dict[str, str] = {}
    started = time.perf_counter()
    for group in groups.values():
        schema = SchemaContext(search_path)  # one schema per module set, then let go
        unbuilt: str | None = None
        for path in group:
            if unbuilt is not None:  # the module set does not build: no use trying again
                outcomes[path] = unbuilt
                reasons[unbuilt] += 1
                continue
            try:
                compile_subscription(path, schema, keyless=args.keyless)
                outcomes[path] = "ok"
            except YangkeyError as exc:
                reason = re.sub(r"\s+", " ", exc.reason)[:160]
                outcomes[path] = reason
                reasons[reason] += 1
                examples.setdefault(reason, path)
                if reason.startswith(("cannot build a schema", "cannot parse YANG module")):
                    unbuilt = reason
            except Exception as exc:  # a traceback is a finding too
                reason = f"TRACEBACK {type(exc).__name__}: {exc}"[:160]
                outcomes[path] = reason
                reasons[reason] += 1
                examples.setdefault(reason, path)
    passed = sum(1 for outcome in outcomes.values() if outcome == "ok")
    print(
        f"{passed} of {len(outcomes)} compile ({100 * passed / max(1, len(outcomes)):.1f}%), "
        f"{len(groups)} module sets, {time.perf_counter() - started:.0f} s"
    )
    for reason, count in reasons.most_common(25):
        print(f"{count:6d}  {reason}\n        e.g. {examples[reason]}")
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(outcomes, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
