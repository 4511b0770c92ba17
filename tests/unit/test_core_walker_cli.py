"""``yangkey compile --show-walker``: the generated Phase 3 walker of each branch, readable."""

from __future__ import annotations

import ast
import json
import linecache

from cli_helpers import assert_one_error, run

from yangkey.keys import KeyDeriver
from yangkey.schema import SchemaContext
from yangkey.templates import compile_subscription

IF = "/ietf-interfaces:interfaces/interface"


def test_core_cli_show_walker_prints_each_branch_source() -> None:
    result = run("compile", "--xpath", f"{IF}[name='eth0']/ietf-ip:ipv4/address | "
                 "/ietf-system:system/clock", "--show-walker")
    assert result.exit_code == 0, result.output
    sources = result.stdout.split("\n# walker of branch ")[1:]
    assert len(sources) == 2
    first, second = sources
    assert first.startswith(repr(f"{IF}[name='eth0']/ietf-ip:ipv4/address[ip='%s']"))
    assert "if v1_0 != 'eth0': continue" in first  # the pinned key, checked in the walker
    assert second.startswith("'/ietf-system:system/clock'")
    for source in sources:
        ast.parse("#" + source)  # valid Python as printed


def test_core_cli_show_walker_json_member_matches_running_walker() -> None:

    result = run("compile", "--xpath", IF, "--show-walker", "--json")
    assert result.exit_code == 0, result.output
    (branch,) = json.loads(result.stdout)["branches"]
    walker = KeyDeriver(compile_subscription(IF, SchemaContext.cached())).walkers[0]
    # What the command prints is the source the running walker was compiled from.
    assert "".join(linecache.getlines(walker.__code__.co_filename)) == branch["walker"]


def test_core_cli_without_show_walker_prints_no_source() -> None:
    result = run("compile", "--xpath", IF, "--json")
    assert "walker" not in json.loads(result.stdout)["branches"][0]
    assert "def walk" not in run("compile", "--xpath", IF).stdout


def test_core_cli_show_walker_bad_xpath_is_one_error_line() -> None:
    assert_one_error(run("compile", "--xpath", "/nope:x", "--show-walker"), "nope")
