"""Cold and warm ``yangkey compile`` of one path: wall time, CPU time and peak RSS.

Issue 30 item 6: a new module set on a collector should not cost minutes (IOS-XR
``ipv4-bgp-oper`` took 86-98 s and 295 MB cold). Every run is a fresh process, as a user
starts ``yangkey compile``:

* ``cold``: an empty schema cache (index, model and compiled subscription are built);
* ``warm``: the cache the cold run wrote.

Each setting runs for this checkout and, when there is one, a baseline checkout in the same
run: ``--baseline DIR`` (a directory holding a ``yangkey`` package), else the ``main`` branch of
this repository, exported with ``git archive`` to a temporary directory. The two must compile
the path to the same templates and topics.

    python benchmarks/bench_compile.py                        # a generated module set
    python benchmarks/bench_compile.py --models /work/fetched/xr/vendor/cisco/xr/2521 \\
        --path /Cisco-IOS-XR-ipv4-bgp-oper:bgp/instances/instance

Without ``--models`` it generates a large synthetic set (so it runs anywhere): an operational
module whose submodule defines groupings used several times over, with leaves typed by
ietf-inet-types and ietf-yang-types (patterns), ``when`` expressions, a typedef module, and
1,500 unrelated modules in the directory (the index reads them all). Goal: cold at most 10 s
and 300 MB for the largest vendor set. On a loaded machine compare CPU, not wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Runs the CLI in-process and writes its own CPU time and peak RSS, so that the figures are
#: this process's alone.
RUNNER = """
import json, os, resource, sys
import yangkey
from yangkey.cli import main
try:
    main(sys.argv[1:], prog_name="yangkey")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(os.environ["BENCH_REPORT"], "w") as stream:
    json.dump({"cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
               "code": code, "package": os.path.dirname(yangkey.__file__)}, stream)
"""


def synthetic(directory: Path, groupings: int = 120, leaves: int = 40, uses: int = 3) -> str:
    """Write the generated module set; return the path to compile."""
    types = [
        "inet:ipv6-address",
        "inet:ip-address",
        "inet:ipv4-prefix",
        "yang:mac-address",
        "bx-types:label",
        "uint32",
        "yang:counter64",
        "inet:domain-name",
    ]
    (directory / "bx-types.yang").write_text(
        'module bx-types {\n  namespace "urn:bx:types";\n  prefix bx-types;\n'
        "  typedef label { type string { pattern '[a-z][a-z0-9-]{0,62}'; length \"1..63\"; } }\n"
        "}\n"
    )
    body = []
    for g in range(groupings):
        lines = [
            f"  grouping group-{g} {{",
            f"    container c-{g} {{",
            f"      when \"../name != 'none-{g}'\";",
            f"      list entry-{g} {{",
            "        key addr;",
            "        leaf addr { type inet:ipv6-address; }",
        ]
        lines += [
            f"        leaf l-{i} {{ type {types[(g + i) % len(types)]}; }}" for i in range(leaves)
        ]
        lines += ["      }", "    }", "  }"]
        body.append("\n".join(lines))
    (directory / "bx-oper-sub1.yang").write_text(
        "submodule bx-oper-sub1 {\n  belongs-to bx-oper { prefix bx; }\n"
        "  import ietf-inet-types { prefix inet; }\n  import ietf-yang-types { prefix yang; }\n"
        "  import bx-types { prefix bx-types; }\n" + "\n".join(body) + "\n}\n"
    )
    used = "\n".join(
        f"        container u{u}-g{g} {{ uses group-{g}; }}"
        for g in range(groupings)
        for u in range(uses)
    )
    (directory / "bx-oper.yang").write_text(
        'module bx-oper {\n  namespace "urn:bx:oper";\n  prefix bx;\n'
        "  include bx-oper-sub1;\n  import ietf-inet-types { prefix inet; }\n"
        "  container oper {\n    container instances {\n      list instance {\n"
        "        key name;\n        leaf name { type string; }\n"
        f"{used}\n      }}\n    }}\n  }}\n}}\n"
    )
    for n in range(1500):
        (directory / f"bx-filler-{n:04d}.yang").write_text(
            f'module bx-filler-{n:04d} {{\n  namespace "urn:bx:filler:{n}";\n'
            f'  prefix f{n};\n  revision 2026-01-01 {{ description "filler"; }}\n'
            f"  container c{n} {{ leaf x {{ type string; }} }}\n}}\n"
        )
    return "/bx-oper:oper/instances/instance/u0-g0/c-0/entry-0"


def export_main(target: Path) -> Path | None:
    """``yangkey`` of the ``main`` branch into ``target``, or None without git or a main."""
    try:
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "main", "yangkey"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return target


def run(
    source: Path, args: list[str], cache: Path, workdir: Path
) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one fresh ``yangkey`` process."""
    report = workdir / "report.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(source),
        "YANGKEY_SCHEMA_CACHE": str(cache),
        "BENCH_REPORT": str(report),
    }
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        env=env,
        cwd=workdir,  # not the repository: PYTHONPATH decides which yangkey runs
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    figures = json.loads(report.read_text())
    if figures["code"] not in (0, None) or result.returncode != 0:
        raise SystemExit(f"{source}: yangkey compile failed: {result.stderr.strip()[-500:]}")
    if Path(figures["package"]).resolve() != (source / "yangkey").resolve():
        raise SystemExit(f"ran yangkey from {figures['package']}, not from {source}")
    return wall, figures["cpu"], figures["rss_mb"], result.stdout


def templates(stdout: str) -> list[tuple[str, str]]:
    document = json.loads(stdout)
    return [(b["template"], b["topic"]) for b in document["branches"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        metavar="DIR",
        help="a model directory (repeatable; every subdirectory with .yang "
        "files goes on the search path); default: a generated set",
    )
    parser.add_argument("--path", help="the XPath to compile (required with --models)")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="a directory holding the baseline yangkey package (default: the "
        "main branch of this repository, if git has one)",
    )
    parser.add_argument("--runs", type=int, default=1, help="cold and warm runs per checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as temporary:
        tmp = Path(temporary)
        if args.models:
            if not args.path:
                parser.error("--path is required with --models")
            xpath = args.path
            dirs = sorted({str(p.parent) for d in args.models for p in Path(d).rglob("*.yang")})
            what = f"{', '.join(args.models)} ({len(dirs)} directories)"
        else:
            generated = tmp / "models"
            generated.mkdir()
            xpath = synthetic(generated)
            dirs = [str(generated)]
            what = (
                "a generated module set (bx-oper: 120 groupings of 40 leaves, each used 3 "
                "times; 1,500 modules in the directory)"
            )
        cli = ["compile", "--json", *(a for d in dirs for a in ("--yang-dir", d)), "--xpath", xpath]
        checkouts = [("current", REPO)]
        baseline = Path(args.baseline) if args.baseline else export_main(tmp / "main")
        if baseline is not None:
            checkouts.append(("baseline", baseline))
        print(f"{what}\npath {xpath}\nload average {os.getloadavg()[0]:.1f}\n")
        results: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
        outputs: dict[str, list[tuple[str, str]]] = {}
        for name, source in checkouts:
            results[name] = {"cold": [], "warm": []}
            for index in range(args.runs):
                cache = tmp / f"cache-{name}-{index}"
                wall, cpu, rss, stdout = run(source, cli, cache, tmp)
                results[name]["cold"].append((wall, cpu, rss))
                outputs[name] = templates(stdout)
                wall, cpu, rss, _ = run(source, cli, cache, tmp)
                results[name]["warm"].append((wall, cpu, rss))
        if len(outputs) == 2 and outputs["current"] != outputs["baseline"]:
            raise SystemExit(f"the checkouts disagree: {outputs}")
        print(f"{'checkout':10} {'setting':6} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
        medians: dict[tuple[str, str], tuple[float, float, float]] = {}
        for name, settings in results.items():
            for setting, runs in settings.items():
                wall, cpu, rss = (statistics.median(r[i] for r in runs) for i in range(3))
                medians[(name, setting)] = (wall, cpu, rss)
                print(f"{name:10} {setting:6} {wall:8.2f} {cpu:8.2f} {rss:12.0f}")
        if "baseline" in results:
            print()
            for setting in ("cold", "warm"):
                base, current = medians[("baseline", setting)], medians[("current", setting)]
                print(
                    f"{setting}: baseline / current = {base[1] / current[1]:.1f}x CPU, "
                    f"{base[0] / current[0]:.1f}x wall, {base[2] / current[2]:.2f}x RSS"
                )
        cold = medians[("current", "cold")]
        verdict = "meets" if cold[1] <= 10 and cold[2] <= 300 else "misses"
        print(
            f"\ncurrent cold: {cold[1]:.2f} s CPU, {cold[2]:.0f} MB: {verdict} the goal "
            "(<= 10 s, <= 300 MB)"
        )


if __name__ == "__main__":
    main()
