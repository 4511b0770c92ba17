"""``if-feature`` expressions (RFC 7950 section 7.20.2), evaluated in three-valued logic.

A feature of a module is *on* or *off* when the YANG library decides it: a device's library
(``--yang-library``) decides every module's features, ``--features MODULE:F1,F2`` (or
``features:`` in the subscriptions file) decides that module's. Without either, a module's
features are *undecided* (``None``): yangkey cannot know which of them the device has.

An expression is evaluated with Kleene's logic (``not None`` is None, ``False and None`` is
False, ``True or None`` is True) and a node is left out of the schema only when its
``if-feature`` is definitely false. So, with undecided features, every node that some feature
choice brings exists, ``if-feature "not X"`` included; a device's library (or ``--features``)
picks the nodes that one device has.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from yangkey.errors import SchemaError

#: (prefix or None, feature name) -> True (on), False (off), None (undecided).
Resolver = Callable[[str | None, str], bool | None]

_TOKEN = re.compile(r"\s*(?:(\()|(\))|([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?))")


@dataclass(frozen=True, slots=True)
class Atom:
    prefix: str | None
    name: str


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expression


@dataclass(frozen=True, slots=True)
class And:
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True)
class Or:
    left: Expression
    right: Expression


Expression = Atom | Not | And | Or


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            if not text[pos:].strip():
                break
            match = _TOKEN.match(text, pos)
            if match is None:
                raise SchemaError(f"invalid if-feature expression {text!r} at offset {pos}")
            self.tokens.append(match.group(match.lastindex or 0))
            pos = match.end()
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise SchemaError(f"invalid if-feature expression {self.text!r}: unexpected end")
        self.pos += 1
        return token

    def expression(self) -> Expression:
        left = self.term()
        if self.peek() == "or":
            self.take()
            return Or(left, self.expression())
        return left

    def term(self) -> Expression:
        left = self.factor()
        if self.peek() == "and":
            self.take()
            return And(left, self.term())
        return left

    def factor(self) -> Expression:
        token = self.take()
        if token == "not":
            return Not(self.factor())
        if token == "(":
            inner = self.expression()
            if self.take() != ")":
                raise SchemaError(f"invalid if-feature expression {self.text!r}: expected ')'")
            return inner
        if token in (")", "and", "or"):
            raise SchemaError(f"invalid if-feature expression {self.text!r}: unexpected {token!r}")
        prefix, colon, name = token.rpartition(":")
        return Atom(prefix if colon else None, name)


_PARSED: dict[str, Expression] = {}


def parse(text: str) -> Expression:
    """The expression of one ``if-feature`` argument (memoised: vendor modules repeat them)."""
    found = _PARSED.get(text)
    if found is None:
        parser = _Parser(text)
        found = parser.expression()
        if parser.peek() is not None:
            raise SchemaError(
                f"invalid if-feature expression {text!r}: unexpected {parser.peek()!r}"
            )
        _PARSED[text] = found
    return found


def evaluate(expression: Expression, resolve: Resolver) -> bool | None:
    """Kleene three-valued evaluation; None means "depends on undecided features"."""
    if isinstance(expression, Atom):
        return resolve(expression.prefix, expression.name)
    if isinstance(expression, Not):
        value = evaluate(expression.operand, resolve)
        return None if value is None else not value
    left = evaluate(expression.left, resolve)
    right = evaluate(expression.right, resolve)
    if isinstance(expression, And):
        if left is False or right is False:
            return False
        return True if left and right else None
    if left is True or right is True:
        return True
    return False if left is False and right is False else None


def atoms(expression: Expression) -> list[Atom]:
    """The features an expression names, in order."""
    if isinstance(expression, Atom):
        return [expression]
    if isinstance(expression, Not):
        return atoms(expression.operand)
    return [*atoms(expression.left), *atoms(expression.right)]
