"""What Grafana and its ClickHouse plugin do to a panel's SQL before ClickHouse runs it.

Grafana cannot run here, so the dashboard tests replay its three steps, as the sources of
grafana/clickhouse-datasource 4.20 and Grafana's template service do them:

1. the plugin's front end, ``applyConditionalAll``: ``$__conditionalAll(cond, $var)`` becomes
   ``1=1`` when the variable's value is *All* (``$__all``) or empty, else ``cond``;
2. Grafana's template service: ``$var``, ``${var}`` and ``${var:singlequote}`` replaced by the
   selected values (``singlequote``: each value in ``'...'``, ``'`` written ``\\'``, joined by
   ``,``; the plugin's default format joins a multi-value the same way, unescaped);
3. the plugin's back end (``pkg/macros``): ``$__timeFilter(c)`` -> ``c >= toDateTime(from) AND
   c <= toDateTime(to)``, ``$__timeInterval(c)`` -> ``toStartOfInterval(toDateTime(c),
   INTERVAL n second)``, ``$__interval_s``, ``$__fromTime`` / ``$__toTime``.

Anything left starting with ``$`` is an error of the dashboard (an unknown macro or
variable), so :func:`interpolate` refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

ALL = "$__all"


@dataclass(frozen=True)
class Selection:
    """The dashboard state a query runs in."""

    start: datetime
    end: datetime
    interval_seconds: int
    variables: Mapping[str, Sequence[str]]
    """Variable name -> selected values (``[ALL]`` for All)."""


def _call_end(sql: str, open_paren: int) -> int:
    """Index of the parenthesis closing the one at ``open_paren`` (quotes respected)."""
    depth = 0
    quote = ""
    i = open_paren
    while i < len(sql):
        ch = sql[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'`\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise AssertionError(f"unbalanced macro call in {sql[open_paren - 20 : open_paren + 40]!r}")


def _split_args(text: str) -> list[str]:
    args, depth, start, quote = [], 0, 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'`\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
    args.append(text[start:])
    return [a.strip() for a in args]


def _expand(sql: str, name: str, expand: object) -> str:
    marker = f"$__{name}("
    while (at := sql.find(marker)) >= 0:
        end = _call_end(sql, at + len(marker) - 1)
        args = _split_args(sql[at + len(marker) : end])
        sql = sql[:at] + expand(args) + sql[end + 1 :]  # type: ignore[operator]
    return sql


def conditional_all(sql: str, variables: Mapping[str, Sequence[str]]) -> str:
    def expand(args: list[str]) -> str:
        assert len(args) == 2, args
        found = re.search(r"(?<=\$\{)\w+(?=\})|(?<=\$)\w+", args[1])
        assert found, args
        values = variables[found.group(0)]
        return "1=1" if not values or list(values) == [ALL] else args[0]

    return _expand(sql, "conditionalAll", expand)


_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)(?::(\w+))?\}")


def replace_variables(sql: str, variables: Mapping[str, Sequence[str]]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        fmt = match.group(3)
        if name not in variables:
            return match.group(0)  # a macro ($__timeFilter): the back end's
        values = list(variables[name])
        assert values != [ALL], f"${name} is All: only $__conditionalAll may see it"
        if fmt == "singlequote":
            return ",".join("'" + v.replace("'", "\\'") + "'" for v in values)
        assert fmt is None, f"format {fmt} is not emulated"
        return "'" + "','".join(values) + "'" if len(values) > 1 else values[0]

    return _VARIABLE.sub(replace, sql)


def expand_macros(sql: str, selection: Selection) -> str:
    start = int(selection.start.timestamp())
    end = int(selection.end.timestamp())
    seconds = max(selection.interval_seconds, 1)
    sql = _expand(
        sql,
        "timeFilter",
        lambda a: f"{a[0]} >= toDateTime({start}) AND {a[0]} <= toDateTime({end})",
    )
    sql = _expand(
        sql,
        "timeInterval",
        lambda a: f"toStartOfInterval(toDateTime({a[0]}), INTERVAL {seconds} second)",
    )
    sql = sql.replace("$__interval_s", str(seconds))
    sql = sql.replace("$__fromTime", f"toDateTime({start})")
    return sql.replace("$__toTime", f"toDateTime({end})")


def interpolate(sql: str, selection: Selection) -> str:
    """``sql`` as ClickHouse receives it from Grafana in ``selection``."""
    sql = conditional_all(sql, selection.variables)
    sql = replace_variables(sql, selection.variables)
    sql = expand_macros(sql, selection)
    left = re.findall(r"\$\{?\w+", sql)
    assert not left, f"not expanded: {left}"
    return sql
