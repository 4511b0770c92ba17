"""JSON Schema compatibility: does every value the writer schema allows pass the reader schema?

That is the one rule (``BACKWARD``: the new schema reads what the old one allowed), applied
keyword by keyword:

* ``false`` (or ``{"not": {}}``) as writer allows nothing: any reader reads it; ``true``/``{}``
  as reader reads everything.
* A writer's ``anyOf``/``oneOf`` (and a ``type`` list) is a union: each branch must be read. A
  reader's ``anyOf``/``oneOf`` must read the writer with one branch (a ``oneOf`` is taken as
  ``anyOf``: whether two of its branches overlap on the writer's values is not decided here).
  ``allOf`` on the reader: every part reads; on the writer: one part read alone suffices.
* ``not``: the reader's ``not N`` reads a writer ``not M`` when ``M`` reads ``N``, or a
  writer whose values ``N`` can never match (different types, enumerated values N rejects).
* A writer's ``enum``/``const`` is a finite set: each value is validated against the reader.
* Types: each writer type must be a reader type (``integer`` is read by ``number``); a writer
  without ``type`` allows every type.
* Bounds only narrow: ``minimum``/``exclusiveMinimum`` (draft-04's boolean form too),
  ``maximum``/``exclusiveMaximum``, ``multipleOf``, ``min/maxLength``, ``min/maxItems``,
  ``min/maxProperties``, ``uniqueItems``; a new or changed ``pattern`` narrows.
* Objects: each member is read with the reader's schema for that name (``properties``, then
  ``patternProperties``, then ``additionalProperties``), members the writer allows beyond its
  ``properties`` included; new ``required`` members, ``propertyNames`` and
  ``dependentRequired`` narrow.
* Arrays: a tuple (``items: [...]``/``prefixItems``) and its rest (``additionalItems``/``items``)
  compared position by position, so a tuple reads a plain array and the reverse, as the values
  say.
* ``$ref`` is followed, locally and into references; recursive schemas are assumed compatible
  where they recur.

Where a keyword's effect cannot be decided (``if``/``then``/``else``, ``contains``, an unresolved
``$ref``) the reader must carry the same keyword as the writer, unchanged: unsure is
incompatible, never the reverse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yangkey.registry.jsonkeywords import (
    ALL_TYPES,
    ANNOTATIONS,
    OPAQUE,
    allowed_types,
    bound,
    count,
    integral,
    is_false,
    is_true,
    merged,
    number,
    pattern_matches,
    universal,
    within,
    without,
)
from yangkey.registry.jsonrefs import Node, Scope


def reads(reader: Scope, writer: Scope) -> list[str]:
    """Why some value valid under ``writer`` fails ``reader`` (empty: none does)."""
    checker = _Checker(reader, writer)
    return list(dict.fromkeys(checker.reads(reader.node(), writer.node(), "#")))


# ------------------------------------------------------------------ the checker


class _Checker:
    def __init__(self, reader: Scope, writer: Scope) -> None:
        self.scopes = (reader, writer)
        self.assumed: set[tuple[int, int]] = set()
        self.validators: dict[tuple[int, int], Any] = {}

    def deref(self, node: Node, scope: Scope) -> Node:
        seen = 0
        while isinstance(node.schema, dict) and isinstance(node.schema.get("$ref"), str):
            target = scope.resolve(node.schema["$ref"], node.doc)
            if target is None or seen > 64:
                return node
            siblings = without(node.schema, "$ref", *ANNOTATIONS)
            if siblings:  # 2019-09 on: $ref and its siblings both apply
                if isinstance(target.schema, dict) and "$ref" not in target.schema:
                    return Node({**target.schema, **siblings}, target.doc)
                return Node(siblings, node.doc)  # wider than both: safe on the writer side
            node, seen = target, seen + 1
        return node

    def reads(self, r: Node, w: Node, path: str) -> list[str]:
        r, w = self.deref(r, self.scopes[0]), self.deref(w, self.scopes[1])
        key = (id(r.schema), id(w.schema))
        if key in self.assumed:
            return []
        self.assumed.add(key)
        try:
            return self._reads(r, w, path)
        finally:
            self.assumed.discard(key)

    def _reads(self, r: Node, w: Node, path: str) -> list[str]:
        reader, writer = r.schema, w.schema
        if is_false(writer) or is_true(reader):
            return []
        if is_false(reader):
            return [f"{path}: the {{reader}} schema accepts nothing"]
        if writer is True:
            writer = {}
        if not isinstance(reader, dict) or not isinstance(writer, dict):
            return [f"{path}: not a schema"]
        if isinstance(reader.get("$ref"), str) or isinstance(writer.get("$ref"), str):
            if reader.get("$ref") == writer.get("$ref"):
                return []
            return [f"{path}: $ref {reader.get('$ref') or writer.get('$ref')!r} cannot be resolved"]
        # The writer's unions and intersections first: they decide what values there are.
        for union in ("anyOf", "oneOf"):
            branches = writer.get(union)
            if isinstance(branches, list):
                rest = without(writer, union)
                return [
                    problem
                    for i, branch in enumerate(branches)
                    for problem in self._branch(r, w, rest, branch, f"{path}/{union}/{i}")
                ]
        parts = writer.get("allOf")
        if isinstance(parts, list):
            remainder = Node(without(writer, "allOf"), w.doc)
            candidates = [remainder, *(Node(p, w.doc) for p in parts)]
            if any(not self.reads(r, part, path) for part in candidates):
                return []
            combined = remainder.schema
            for part in parts:
                combined = merged(combined, self.deref(Node(part, w.doc), self.scopes[1]).schema)
            return self.reads(r, Node(combined, w.doc), path)
        types = writer.get("type")
        if isinstance(types, list) and len(types) > 1 and "enum" not in writer:
            return [
                p for t in types for p in self._reads(r, Node({**writer, "type": t}, w.doc), path)
            ]
        return self._reader_side(r, Node(writer, w.doc), path)

    def _branch(self, r: Node, w: Node, rest: dict[str, Any], branch: Any, path: str) -> list[str]:
        target = self.deref(Node(branch, w.doc), self.scopes[1])
        if target.doc is w.doc or is_true(rest):
            return self.reads(r, Node(merged(rest, target.schema), target.doc), path)
        return self.reads(r, target, path)  # the branch alone allows more: safe

    def _reader_side(self, r: Node, w: Node, path: str) -> list[str]:
        reader, writer = r.schema, w.schema
        problems: list[str] = []
        parts = reader.get("allOf")
        if isinstance(parts, list):
            for i, part in enumerate(parts):
                problems += self.reads(Node(part, r.doc), w, f"{path}/allOf/{i}")
            reader = without(reader, "allOf")
        for union in ("anyOf", "oneOf"):
            branches = reader.get(union)
            if isinstance(branches, list):
                if not any(not self.reads(Node(b, r.doc), w, path) for b in branches):
                    problems.append(
                        f"{path}: no branch of the {{reader}} {union} reads the {{writer}}"
                    )
                reader = without(reader, union)
        if "not" in reader:
            problems += self._not(Node(reader["not"], r.doc), w, path)
            reader = without(reader, "not")
        for keyword in OPAQUE:
            if keyword in reader and reader[keyword] != writer.get(keyword):
                problems.append(f"{path}: {keyword} added or changed")
        if is_true(without(reader, *OPAQUE)):
            return problems
        return problems + self._values(Node(reader, r.doc), w, path)

    def _not(self, excluded: Node, w: Node, path: str) -> list[str]:
        writer = w.schema
        if "not" in writer and not self.reads(Node(writer["not"], w.doc), excluded, path):
            return []
        if self._disjoint(w, excluded):
            return []
        return [f"{path}: the {{reader}} schema's not excludes values the {{writer}} allows"]

    def _disjoint(self, w: Node, excluded: Node) -> bool:
        other = self.deref(excluded, self.scopes[0]).schema
        if is_false(other):
            return True
        if not isinstance(other, dict) or not isinstance(w.schema, dict):
            return False
        values = self._enumerated(w.schema)
        if values is not None:
            return all(not self._valid(other, excluded.doc, v) for v in values)
        mine, theirs = allowed_types(w.schema), allowed_types(other)
        return mine is not None and theirs is not None and not (mine & theirs)

    @staticmethod
    def _enumerated(schema: dict[str, Any]) -> list[Any] | None:
        if "const" in schema:
            return [schema["const"]]
        values = schema.get("enum")
        return list(values) if isinstance(values, list) else None

    def _valid(self, schema: Any, doc: Any, value: Any) -> bool:
        """Whether ``value`` passes the reader's ``schema`` (``jsonschema``, refs resolved)."""
        if isinstance(schema, dict) and set(schema) <= {"type", "enum", "const"}:
            # The usual case (an enum reader) without building a validator.
            if "enum" in schema and value not in schema["enum"]:
                return False
            if "const" in schema and value != schema["const"]:
                return False
            if "type" not in schema:
                return True
        key = (id(schema), id(doc))
        validator = self.validators.get(key)
        if validator is None:
            validator = self._validator(schema, doc)
            self.validators[key] = validator
        try:
            return bool(validator.is_valid(value))
        except Exception:  # an unresolvable $ref inside: cannot tell, so not accepted
            return False

    def _validator(self, schema: Any, doc: Any) -> Any:
        import jsonschema  # noqa: PLC0415
        from jsonschema.validators import validator_for  # noqa: PLC0415
        from referencing import Registry, Resource  # noqa: PLC0415
        from referencing.jsonschema import DRAFT7  # noqa: PLC0415

        registry: Registry[Any] = Registry().with_resources(
            (name, Resource.from_contents(d, default_specification=DRAFT7))
            for name, d in self.scopes[0].docs.items()
        )
        root = doc if isinstance(doc, dict) else {}
        cls = validator_for(root, default=jsonschema.Draft7Validator)
        return cls(doc, registry=registry).evolve(schema=schema)

    # ------------------------------------------------------------------ values by type

    def _values(self, r: Node, w: Node, path: str) -> list[str]:
        reader, writer = r.schema, w.schema
        values = self._enumerated(writer)
        if values is not None:
            rejected = [v for v in values if not self._valid(reader, r.doc, v)]
            if rejected:
                return [f"{path}: the {{reader}} schema rejects {rejected!r}"]
            return []
        allowed = self._enumerated(reader)
        writer_types = allowed_types(writer) or ALL_TYPES
        if allowed is not None and not self._covers(allowed, writer_types):
            return [f"{path}: the {{reader}} schema only accepts {allowed!r}"]
        reader_types = allowed_types(reader)
        problems: list[str] = []
        if reader_types is not None:
            lost = sorted(writer_types - reader_types)
            if lost:
                problems.append(
                    f"{path}: type {'/'.join(lost)} allowed by the {{writer}} schema is not "
                    f"accepted by the {{reader}} ({'/'.join(sorted(reader_types))})"
                )
        produced = writer_types if reader_types is None else writer_types & reader_types
        if produced & {"number", "integer"}:
            problems += self._numbers(reader, writer, produced, path)
        if "string" in produced:
            problems += self._strings(reader, writer, path)
        if "array" in produced:
            problems += self._arrays(r, w, path)
        if "object" in produced:
            problems += self._objects(r, w, path)
        return problems

    @staticmethod
    def _covers(allowed: Sequence[Any], types: frozenset[str]) -> bool:
        if types == {"null"}:
            return None in allowed
        if types == {"boolean"}:
            return True in allowed and False in allowed
        return False

    def _numbers(
        self, reader: dict[str, Any], writer: dict[str, Any], produced: frozenset[str], path: str
    ) -> list[str]:
        problems: list[str] = []
        integers = "number" not in produced
        for low, inclusive, exclusive in (
            (True, "minimum", "exclusiveMinimum"),
            (False, "maximum", "exclusiveMaximum"),
        ):
            wanted = bound(reader, inclusive, exclusive, low=low)
            if wanted is None:
                continue
            have = bound(writer, inclusive, exclusive, low=low)
            if integers:
                wanted, have = integral(wanted, low=low), integral(have, low=low)
            assert wanted is not None
            if not within(have, wanted, low=low):
                which = "exclusive " if wanted[1] else ""
                problems.append(
                    f"{path}: the {{reader}} schema's {which}{inclusive} {float(wanted[0]):g} "
                    f"rejects numbers the {{writer}} allows"
                )
        step = number(reader.get("multipleOf"))
        if step:
            given = number(writer.get("multipleOf"))
            fits = given is not None and (given / step).denominator == 1
            if not fits and not (integers and (1 / step).denominator == 1):
                problems.append(f"{path}: multipleOf {float(step):g} added or changed")
        return problems

    @staticmethod
    def _limits(
        reader: dict[str, Any],
        writer: dict[str, Any],
        low: str,
        high: str,
        path: str,
        writer_low: int = 0,
        writer_high: int | None = None,
    ) -> list[str]:
        problems: list[str] = []
        wanted = count(reader, low)
        have = max(count(writer, low) or 0, writer_low)
        if wanted is not None and have < wanted:
            problems.append(f"{path}: {low} raised to {wanted}")
        wanted = count(reader, high)
        top = count(writer, high)
        have_high = top if top is not None else writer_high
        if writer_high is not None and top is not None:
            have_high = min(top, writer_high)
        if wanted is not None and (have_high is None or have_high > wanted):
            problems.append(f"{path}: {high} lowered to {wanted}")
        return problems

    def _strings(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[str]:
        problems = self._limits(reader, writer, "minLength", "maxLength", path)
        pattern = reader.get("pattern")
        if pattern is not None and pattern != writer.get("pattern") and not universal(pattern):
            problems.append(f"{path}: pattern {pattern!r} added or changed")
        return problems

    # ------------------------------------------------------------------ arrays

    @staticmethod
    def _array_model(schema: dict[str, Any]) -> tuple[list[Any], Any]:
        """Positional schemas and the schema of every later item."""
        if isinstance(schema.get("prefixItems"), list):
            return list(schema["prefixItems"]), schema.get("items", True)
        items = schema.get("items", True)
        if isinstance(items, list):
            return list(items), schema.get("additionalItems", True)
        return [], items

    def _arrays(self, r: Node, w: Node, path: str) -> list[str]:
        reader, writer = r.schema, w.schema
        r_prefix, r_rest = self._array_model(reader)
        w_prefix, w_rest = self._array_model(writer)
        limit = count(writer, "maxItems")
        problems: list[str] = []
        for i in range(max(len(r_prefix), len(w_prefix))):
            if limit is not None and i >= limit:
                return problems + self._array_limits(reader, writer, path)
            w_item = w_prefix[i] if i < len(w_prefix) else w_rest
            if is_false(self.deref(Node(w_item, w.doc), self.scopes[1]).schema):
                return problems + self._array_limits(reader, writer, path)
            r_item = r_prefix[i] if i < len(r_prefix) else r_rest
            problems += self.reads(Node(r_item, r.doc), Node(w_item, w.doc), f"{path}/items/{i}")
        problems += self.reads(Node(r_rest, r.doc), Node(w_rest, w.doc), f"{path}/items")
        return problems + self._array_limits(reader, writer, path)

    def _array_limits(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[str]:
        problems = self._limits(reader, writer, "minItems", "maxItems", path)
        if reader.get("uniqueItems") is True and writer.get("uniqueItems") is not True:
            problems.append(f"{path}: uniqueItems added")
        return problems

    # ------------------------------------------------------------------ objects

    @staticmethod
    def _member(schema: dict[str, Any], name: str) -> list[Any]:
        """The schemas a member called ``name`` must pass."""
        properties = schema.get("properties")
        if isinstance(properties, dict) and name in properties:
            return [properties[name]]
        patterns = schema.get("patternProperties")
        matched = [
            s
            for p, s in (patterns.items() if isinstance(patterns, dict) else ())
            if pattern_matches(p, name) is not False
        ]
        if matched:
            return matched
        return [schema.get("additionalProperties", schema.get("unevaluatedProperties", True))]

    def _objects(self, r: Node, w: Node, path: str) -> list[str]:
        reader, writer = r.schema, w.schema
        problems: list[str] = []
        names = [
            *(reader.get("properties") or {}),
            *(
                n
                for n in writer.get("properties") or {}
                if n not in (reader.get("properties") or {})
            ),
        ]
        for name in names:
            w_member = self._member(writer, name)[0]
            if is_false(self.deref(Node(w_member, w.doc), self.scopes[1]).schema):
                continue
            for r_member in self._member(reader, name):
                problems += self.reads(
                    Node(r_member, r.doc), Node(w_member, w.doc), f"{path}/properties/{name}"
                )
        # Members with other names: what the writer allows for them must be read by whatever
        # reader schema such a name may meet (the same pattern when both have it).
        r_patterns = dict(reader.get("patternProperties") or {})
        r_rest = reader.get("additionalProperties", reader.get("unevaluatedProperties", True))
        w_patterns = dict(writer.get("patternProperties") or {})
        w_rest = writer.get("additionalProperties", writer.get("unevaluatedProperties", True))
        others: list[tuple[str, Any, list[Any]]] = [
            (p, s, [r_patterns[p]] if p in r_patterns else [r_rest, *r_patterns.values()])
            for p, s in w_patterns.items()
        ]
        others.append(("", w_rest, [r_rest, *r_patterns.values()]))
        for pattern, w_other, candidates in others:
            if is_false(self.deref(Node(w_other, w.doc), self.scopes[1]).schema):
                continue
            for r_other in candidates:
                where = f"{path}/patternProperties/{pattern}" if pattern else path
                found = self.reads(Node(r_other, r.doc), Node(w_other, w.doc), where)
                if found:
                    problems.append(
                        f"{where}: members the {{writer}} schema allows"
                        f"{' matching ' + repr(pattern) if pattern else ''} are rejected by the "
                        "{reader} schema"
                    )
                    problems += found
        required = set(writer.get("required") or ())
        for name in reader.get("required") or ():
            if name not in required:
                problems.append(
                    f"{path}: member {name!r} is required by the {{reader}} schema only"
                )
        closed = not (writer.get("patternProperties")) and is_false(
            writer.get("additionalProperties", writer.get("unevaluatedProperties", True))
        )
        most = len(writer.get("properties") or {}) if closed else None
        problems += self._limits(
            reader, writer, "minProperties", "maxProperties", path, len(required), most
        )
        problems += self._property_names(r, w, closed, path)
        problems += self._dependencies(reader, writer, path)
        return problems

    def _property_names(self, r: Node, w: Node, closed: bool, path: str) -> list[str]:
        wanted = r.schema.get("propertyNames")
        if wanted is None or is_true(wanted):
            return []
        if closed:
            bad = [n for n in w.schema.get("properties") or {} if not self._valid(wanted, r.doc, n)]
            return [f"{path}: propertyNames rejects {bad!r}"] if bad else []
        have = w.schema.get("propertyNames", True)
        writer_names = merged({"type": "string"}, have if isinstance(have, dict) else {})
        if have is False:
            return []
        return self.reads(Node(wanted, r.doc), Node(writer_names, w.doc), f"{path}/propertyNames")

    @staticmethod
    def _dependencies(reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[str]:
        def arrays(schema: dict[str, Any]) -> dict[str, set[str]]:
            found: dict[str, set[str]] = {}
            for keyword in ("dependentRequired", "dependencies"):
                for name, needed in (schema.get(keyword) or {}).items():
                    if isinstance(needed, list):
                        found.setdefault(name, set()).update(needed)
            return found

        have, required = arrays(writer), set(writer.get("required") or ())
        problems = []
        for name, needed in arrays(reader).items():
            if not needed <= have.get(name, set()) | required:
                problems.append(f"{path}: member {name!r} now needs {sorted(needed)}")
        for name, schema in (reader.get("dependencies") or {}).items():
            if not isinstance(schema, list) and schema != (writer.get("dependencies") or {}).get(
                name
            ):
                problems.append(f"{path}: dependency schema of {name!r} added or changed")
        return problems
