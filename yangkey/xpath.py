"""The XPath subset of YANG-Push subscriptions: unions of absolute location paths.

``/m:a/b[k='v'][m:k2="w"]/c[.='x'] | /m:d/e[3]`` — union splitting at top level (respecting
brackets, parentheses and quotes), steps with optional prefixes, and predicates of the forms
``[name = literal]``, ``[. = literal]``, ``[N]`` and ``and`` conjunctions of equalities. Anything
else is refused with the position and a caret under it (draft section 3.1.2.2).

A root-relative path (``openconfig-interfaces:interfaces/interface``: how IOS XR and pmacct
report a subscription's filter) is read as the absolute path it means, with a warning
(:func:`absolute_union`).

Literal quoting follows XPath 1.0: ``'v'``; ``"v"`` if v contains ``'``; and
``concat('a',"'",'b')`` when v contains both quote characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from yangkey.errors import FilterError, Position

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def quote(value: str) -> str:
    """An XPath 1.0 string literal for ``value`` (docs/design.md#literal-quoting)."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    pieces: list[str] = []
    for index, part in enumerate(parts):
        if index:
            pieces.append('"\'"')
        if part:
            pieces.append(f"'{part}'")
    return f"concat({','.join(pieces)})"


def split_outside_quotes(text: str, separator: str) -> list[str]:
    """Split ``text`` on ``separator`` where it stands outside quotes and brackets."""
    parts: list[str] = []
    depth = 0
    quote_char = ""
    start = 0
    index = 0
    length = len(text)
    width = len(separator)
    while index < length:
        char = text[index]
        if quote_char:
            if char == quote_char:
                quote_char = ""
        elif char in "'\"":
            quote_char = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += width
            start = index
            continue
        index += 1
    parts.append(text[start:])
    return parts


@dataclass(frozen=True, slots=True)
class Predicate:
    """``[name='value']`` (name may carry a prefix), ``[.='value']`` or positional ``[N]``."""

    prefix: str | None
    name: str | None
    """``None`` for the context node ``.`` (leaf-list value) and for positional predicates."""
    value: str | None
    position: int | None = None


@dataclass(frozen=True, slots=True)
class Step:
    prefix: str | None
    name: str
    predicates: tuple[Predicate, ...]
    offset: int = 0
    """Where the step starts in its branch text, for error carets."""


@dataclass(frozen=True, slots=True)
class LocationPath:
    text: str
    steps: tuple[Step, ...]


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0
        self.start = 0

    def error(self, reason: str, at: int | None = None) -> FilterError:
        offset = self.pos if at is None else at
        return FilterError(
            reason, source=self.source, position=Position.in_text(self.text, offset), text=self.text
        )

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.peek() != char:
            found = self.peek() or "end of input"
            raise self.error(f"expected {char!r}, found {found!r}")
        self.pos += 1

    def name(self) -> tuple[str | None, str]:
        self.skip_space()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            found = self.peek() or "end of input"
            raise self.error(f"expected a node name, found {found!r}")
        self.pos = match.end()
        if self.peek() == ":":
            self.pos += 1
            second = _NAME.match(self.text, self.pos)
            if second is None:
                raise self.error("expected a node name after the prefix")
            self.pos = second.end()
            return match.group(0), second.group(0)
        return None, match.group(0)

    def literal(self) -> str:
        self.skip_space()
        char = self.peek()
        if char in "'\"":
            end = self.text.find(char, self.pos + 1)
            if end < 0:
                raise self.error("unterminated string literal")
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        if self.text.startswith("concat", self.pos):
            self.pos += len("concat")
            self.expect("(")
            parts = [self.literal()]
            self.skip_space()
            while self.peek() == ",":
                self.pos += 1
                parts.append(self.literal())
                self.skip_space()
            self.expect(")")
            return "".join(parts)
        match = re.compile(r"-?\d+(\.\d+)?").match(self.text, self.pos)
        if match is not None:
            # A bare number compares like its string form in YANG-Push filters on keys.
            self.pos = match.end()
            return match.group(0)
        raise self.error("expected a quoted string literal")

    def predicate(self) -> list[Predicate]:
        self.expect("[")
        self.skip_space()
        predicates: list[Predicate] = []
        number = re.compile(r"\d+\s*\]").match(self.text, self.pos)
        if number is not None:
            position = int(self.text[self.pos : number.end() - 1].strip())
            self.pos = number.end()
            return [Predicate(None, None, None, position)]
        while True:
            self.skip_space()
            start = self.pos
            if self.peek() == ".":
                self.pos += 1
                prefix, name = None, None
            else:
                if self.peek() == "@":
                    raise self.error("attribute tests are not supported")
                prefix, name = self.name()
                self.skip_space()
                if self.peek() == "(":
                    raise self.error(f"function {name}() is not supported in a predicate", start)
            self.skip_space()
            if self.peek() != "=":
                raise self.error("only equality predicates [name='value'] are supported")
            self.pos += 1
            predicates.append(Predicate(prefix, name, self.literal()))
            self.skip_space()
            if self.text.startswith("and", self.pos) and not _NAME.match(self.text, self.pos + 3):
                self.pos += 3
                continue
            break
        self.expect("]")
        return predicates

    def path(self) -> LocationPath:
        self.skip_space()
        if self.peek() != "/":
            raise self.error("a subscription path must be absolute (start with '/')")
        steps: list[Step] = []
        while True:
            self.skip_space()
            if self.peek() != "/":
                break
            self.pos += 1
            if self.peek() == "/":
                raise self.error("'//' (descendant axis) is not supported")
            start = self.pos
            prefix, name = self.name()
            predicates: list[Predicate] = []
            self.skip_space()
            while self.peek() == "[":
                predicates.extend(self.predicate())
                self.skip_space()
            steps.append(Step(prefix, name, tuple(predicates), start - self.start))
        self.skip_space()
        if self.pos != len(self.text):
            raise self.error(f"unexpected {self.peek()!r}")
        if not steps:
            raise self.error("empty path")
        return LocationPath(self.text.strip(), tuple(steps))


def absolute_union(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with each branch that starts with a name (``m:a/b``) made absolute
    (``/m:a/b``): the context node of a YANG-Push XPath filter is the root node (RFC 8641,
    ``datastore-xpath-filter``), so a root-relative path has exactly that meaning.
    Returns the union and a warning per branch read so; other branches keep their
    positions, for error carets."""
    parts = split_outside_quotes(text, "|")
    warnings: list[str] = []
    for index, part in enumerate(parts):
        stripped = part.lstrip()
        if _NAME.match(stripped):
            lead = part[: len(part) - len(stripped)]
            parts[index] = f"{lead}/{stripped}"
            shown = stripped.rstrip()
            warnings.append(
                f"root-relative path {shown!r} read as '/{shown}' (absolute, from the "
                "datastore root, as IOS XR and pmacct mean it)"
            )
    return "|".join(parts), tuple(warnings)


def parse_path(text: str, source: str = "xpath") -> LocationPath:
    return _Parser(text, source).path()


def parse_union(text: str, source: str = "xpath") -> list[LocationPath]:
    if not text.strip():
        raise FilterError("empty subscription XPath", source=source)
    paths: list[LocationPath] = []
    offset = 0
    for branch in split_outside_quotes(text, "|"):
        stripped = branch.strip()
        lead = offset + (len(branch) - len(branch.lstrip()))
        if not stripped:
            raise FilterError(
                "empty branch in XPath union",
                source=source,
                position=Position.in_text(text, offset),
                text=text,
            )
        # Parse in place, so that error positions point into the whole union.
        parser = _Parser(text[: lead + len(stripped)], source)
        parser.pos = parser.start = lead
        paths.append(LocationPath(stripped, parser.path().steps))
        offset += len(branch) + 1
    return paths
