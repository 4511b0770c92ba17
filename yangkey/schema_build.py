"""Building a yangson data model from vendor modules: what keys need, and nothing that blocks.

A message key needs the schema tree (nodes, list keys, key leaf types); it never validates
data. yangson builds the whole model, constraints included, and refuses a module set over
things keys never use. This module builds the same ``DataModel`` (without forking yangson:
a subclass of its ``SchemaData`` and, while one build runs, seven of its names replaced) so:

* a ``must``/``when`` expression that yangson's XPath parser cannot read (``text()`` in Cisco
  IOS-XR and 6WIND ``vrouter`` modules) is left out of the model: a ``must`` that is gone
  constrains nothing, a ``when`` that is gone keeps its node (``when`` never decides whether a
  schema node exists, RFC 7950 section 7.21.5). One warning per module names them;
* a ``default`` yangson cannot read is left out (Junos ``junos-conf-services``: ``default
  "0x7FFFFFFF"`` on a union of a string and a uint32, a hexadecimal integer default RFC 7950
  section 9.2.1 allows and yangson's union does not parse); keys never use defaults;
* a leafref ``path`` naming no node of modules the library implements makes the leaf a string
  (an old OpenConfig ``network-instance-ref`` typedef, shipped by Huawei, writes an
  unprefixed path, which resolves in the module using it); one into a module the library
  does not implement stays an error naming that module;
* a ``pattern`` that cannot be translated to a Python regular expression is neutralised (it
  matches every value), one warning per module; patterns are translated once per process
  (IETF's ``ipv6-address`` pattern used to be translated for every leaf of that type: most of
  a Cisco IOS-XR build's time);
* a double-quoted string keeps an escape RFC 6020 does not define as written (``"\\*"`` in Junos
  ``junos-conf-class-of-service`` is the pattern ``\\*``), as pyang does for YANG 1.0;
* ``if-feature`` is evaluated in three-valued logic (:mod:`yangkey.features`);
* augments are applied until none can be, not in one pass: an augment whose target another
  module's augment creates is no longer dropped; one that still finds no target is reported;
* submodules are processed in ``include`` order (yangson takes them from a set, so which of
  two augments between submodules survived depended on the hash seed);
* a module file is parsed once per process, whether the YANG library computation or yangson
  reads it (:mod:`yangkey.schema_data`); typedef and grouping lookups and repeated XPath
  expressions are memoised;
* every derived type records its typedef chain (``typedefs``), from which
  :mod:`yangkey.canon_types` chooses canonical forms.

What was left out travels with the model (:class:`LeftOut`) into ``compile --json``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yangkey.schema_cache import gc_paused
from yangkey.schema_data import MODULES_STATE, schema_data_class

if TYPE_CHECKING:
    from yangson import DataModel

#: Longest expression, pattern or path echoed in a message.
ECHO_LIMIT = 120


def cut(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` on one line, at most ``limit`` characters (IOS-XR ``must`` expressions run to
    several kB)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class LeftOut:
    """One statement kept out of the model, and why."""

    module: str
    """The module (or submodule) whose text has the statement."""
    statement: str
    """``must``, ``when``, ``unique`` (an XPath expression), ``pattern``, ``default`` (a value),
    ``augment`` (a target path), ``leafref`` (a path naming no node), or ``if-feature`` (a node
    defined more than once under alternatives that undecided features all keep: its data
    path)."""
    argument: str
    """The statement's argument, cut to :data:`ECHO_LIMIT` characters."""
    reason: str


@dataclass(frozen=True)
class BuiltModel:
    model: DataModel
    left_out: tuple[LeftOut, ...]

    def warnings(self) -> list[str]:
        """One line per module and kind of statement left out."""
        groups: dict[tuple[str, str], list[LeftOut]] = {}
        for item in self.left_out:
            kind = "must/when" if item.statement in ("must", "when", "unique") else item.statement
            groups.setdefault((item.module, kind), []).append(item)
        return [_warning(module, kind, items) for (module, kind), items in groups.items()]


def _warning(module: str, kind: str, items: list[LeftOut]) -> str:
    first = items[0]
    example = cut(first.argument, 60)
    more = f" and {len(items) - 1} more" if len(items) > 1 else ""
    if kind == "augment":
        return (
            f"module {module}: {len(items)} augment(s) found no target and were left out, e.g. "
            f"{example!r}{more} ({first.reason})"
        )
    if kind == "if-feature":
        return (
            f"module {module}: {len(items)} node(s) defined more than once under if-feature "
            f"alternatives that undecided features all keep, e.g. {example!r}; the first "
            "definition is used (decide the features with --features or the device's YANG "
            "library)"
        )
    if kind == "leafref":
        return (
            f"module {module}: {len(items)} leafref path(s) name no node of the schema; their "
            f"values are taken as strings, e.g. {example!r}{more}"
        )
    if kind == "default":
        return (
            f"module {module}: {len(items)} default value(s) the YANG engine cannot read were "
            f"left out (keys never use defaults), e.g. {example!r} ({first.reason}){more}"
        )
    if kind == "pattern":
        return (
            f"module {module}: {len(items)} pattern(s) cannot be translated and match every "
            f"value (keys do not validate values), e.g. {example!r} "
            f"({first.reason}){more}"
        )
    return (
        f"module {module}: {len(items)} must/when expression(s) the XPath engine cannot parse "
        f"were left out of the model (keys never evaluate them), e.g. {first.statement} "
        f"{example!r} ({first.reason}){more}"
    )


# --------------------------------------------------------------------------- the build


class _Recorder:
    """What the build in progress leaves out."""

    def __init__(self) -> None:
        self.items: dict[LeftOut, None] = {}
        self.module = "?"
        """The module whose string restrictions are being read (patterns know no module)."""
        self.unparsed: dict[int, tuple[Any, str, str, str]] = {}
        """id(placeholder) -> (placeholder, module, expression, reason), until placed."""
        self.expressions: dict[tuple[str, Any, str], Any] = {}

    def add(self, module: str, statement: str, argument: str, reason: str) -> None:
        self.items[LeftOut(module, statement, cut(argument), cut(reason))] = None


_BUILD_LOCK = threading.Lock()
_TRANSLATED: dict[str, re.Pattern[str] | str] = {}
#: A neutralised pattern: the value matches (or, inverted, does not match) and is accepted.
_ANY, _NONE = r"(?s:.*)", r"(?!)"


def _translated(pattern: str) -> re.Pattern[str] | str:
    """The compiled regex of a YANG pattern, or the reason it has none (memoised)."""
    found = _TRANSLATED.get(pattern)
    if found is None:
        from elementpath import RegexError, translate_pattern  # noqa: PLC0415

        try:
            found = re.compile(
                translate_pattern(
                    pattern, back_references=False, lazy_quantifiers=False, anchors=False
                )
            )
        except (RegexError, re.error, ValueError) as exc:
            found = str(exc) or type(exc).__name__
        _TRANSLATED[pattern] = found
    return found


@contextmanager
def _patched() -> Iterator[_Recorder]:
    """yangson's XPath parser of schema nodes (must, when, unique), its Pattern and its string
    restrictions, replaced while one build runs (one at a time)."""
    from yangson import constraint, datatype, schemanode  # noqa: PLC0415
    from yangson.exceptions import (  # noqa: PLC0415
        InvalidArgument,
        InvalidLeafrefPath,
        YangsonException,
    )
    from yangson.xpathast import FuncTrue  # noqa: PLC0415
    from yangson.xpathparser import XPathParser  # noqa: PLC0415

    recorder = _Recorder()

    class TolerantXPathParser(XPathParser):  # type: ignore[misc]
        """An expression that cannot be parsed is read as ``true()`` (a placeholder that
        :func:`_drop_unparsed` takes out of the model) and recorded."""

        nested = False
        """True while parsing a function's argument: yangson's parse() recurses."""

        def parse(self) -> Any:
            if self.nested:
                return super().parse()
            self.nested = True
            try:
                return self.parse_expression()
            finally:
                self.nested = False

        def parse_expression(self) -> Any:
            # Groupings repeat their expressions wherever they are used (44k "when" in one
            # IOS-XR module set): parse each once per module context. The AST is immutable.
            key = (self.input, self.sctx.text_mid, self.sctx.default_ns)
            found = recorder.expressions.get(key)
            if found is not None:
                self.offset = len(self.input)
                return found
            try:
                expression = super().parse()
                if self.at_end():
                    recorder.expressions[key] = expression
                    return expression
                reason = f"unexpected text at offset {self.offset}"
            except (YangsonException, ValueError, KeyError, IndexError) as exc:
                reason = _xpath_reason(exc)
            self.offset = len(self.input)
            placeholder = FuncTrue()
            module = self.sctx.text_mid[0]
            recorder.unparsed[id(placeholder)] = (placeholder, module, self.input, reason)
            return placeholder

    def pattern(
        text: str,
        invert_match: bool = False,
        error_tag: str | None = None,
        error_message: str | None = None,
    ) -> Any:
        # Pattern.__init__ with the memoised translation.
        made = constraint.Pattern.__new__(constraint.Pattern)
        constraint.Constraint.__init__(
            made, error_tag, error_message if error_message else f"pattern '{text}'"
        )
        made.pattern = text
        made.invert_match = invert_match
        regex = _translated(text)
        if isinstance(regex, str):
            recorder.add(recorder.module, "pattern", text, regex)
            regex = re.compile(_NONE if invert_match else _ANY)
        made.regex = regex
        return made

    original_restrictions = datatype.StringType._handle_restrictions

    def string_restrictions(self: Any, stmt: Any, sctx: Any) -> None:
        recorder.module = sctx.text_mid[0]
        original_restrictions(self, stmt, sctx)

    original_derived = datatype.DataType.__dict__["_derived_type"]

    def derived_type(cls: Any, stmt: Any, sctx: Any, name: str) -> Any:
        # The typedef chain, outermost first: yangkey.canon_types picks canonical forms by it.
        result = original_derived.__func__(cls, stmt, sctx, name)
        chain = []
        data = sctx.schema_data
        while stmt.argument not in datatype.DataType.dtypes:
            definition, sctx = data.get_definition(stmt, sctx)
            chain.append((data.modules[sctx.text_mid].main_module[0], definition.argument))
            stmt = definition.find1("type", required=True)
        result.typedefs = tuple(chain)
        return result

    originals = {cls: cls._post_process for cls in (schemanode.LeafNode, schemanode.LeafListNode)}

    def tolerant_defaults(cls: Any) -> Any:
        def post_process(self: Any) -> None:
            # Reading the default is the last step: on failure the rest is done.
            try:
                originals[cls](self)
            except InvalidArgument as exc:
                default = self._default
                text = " ".join(default) if isinstance(default, list) else str(default)
                recorder.add(self.ns, "default", text, f"{type(self.type).__name__}: {exc}")
                self._default = None

        return post_process

    original_leafref = datatype.LeafrefType._post_process

    def leafref_post_process(self: Any, node: Any) -> None:
        try:
            original_leafref(self, node)
        except InvalidLeafrefPath:
            # A path into a module the library does not implement stays an error (the library
            # is incomplete: yangkey.schema names the module); a path into implemented modules
            # that names no node is the module's mistake (an old OpenConfig typedef's
            # unprefixed path resolves in the using module, RFC 7950 section 6.4.1).
            path = str(self.path)
            named = set(re.findall(r"([A-Za-z_][\w.-]*):", path))
            if not named <= set(node.schema_root().schema_data.implement):
                raise
            recorder.add(node.ns, "leafref", path, "no such node: values are taken as strings")
            self.ref_type = datatype.StringType(self.sctx, None)

    saved = (schemanode.XPathParser, datatype.Pattern)
    with _BUILD_LOCK:
        schemanode.XPathParser = TolerantXPathParser
        datatype.Pattern = pattern
        datatype.StringType._handle_restrictions = string_restrictions
        datatype.DataType._derived_type = classmethod(derived_type)
        for cls in originals:
            cls._post_process = tolerant_defaults(cls)
        datatype.LeafrefType._post_process = leafref_post_process
        try:
            yield recorder
        finally:
            schemanode.XPathParser, datatype.Pattern = saved
            datatype.StringType._handle_restrictions = original_restrictions
            datatype.DataType._derived_type = original_derived
            for cls, method in originals.items():
                cls._post_process = method
            datatype.LeafrefType._post_process = original_leafref


def _xpath_reason(exc: Exception) -> str:
    """Why an expression was not parsed, without the expression (yangson's parser errors
    print all of it, several kB in IOS-XR models)."""
    parser = getattr(exc, "parser", None)
    if parser is None:
        return f"{type(exc).__name__}: {exc}"
    reason = f"{type(exc).__name__} at offset {parser.offset}"
    detail = getattr(exc, "feature", None) or getattr(exc, "expected", None)
    return f"{reason}: {detail}" if detail else reason


def build(library: dict[str, Any], search_path: tuple[str, ...]) -> BuiltModel:
    """``DataModel(library)`` built as this module's docstring says. Raises yangson's
    exceptions (and ValueError, KeyError, … for a library of the wrong shape)."""
    from yangson import DataModel  # noqa: PLC0415 - yangson loads only to build a schema
    from yangson.enumerations import ContentType  # noqa: PLC0415
    from yangson.schemadata import SchemaData  # noqa: PLC0415
    from yangson.schemanode import SchemaTreeNode  # noqa: PLC0415

    with _patched() as recorder, gc_paused():
        model: DataModel = DataModel.__new__(DataModel)
        model.yang_library = library
        model.schema_data = schema_data_class()(library, [*search_path])
        model.schema = SchemaTreeNode(model.schema_data)
        model.schema._ctype = ContentType.all
        _build_schema(model, recorder)
        model.schema.description = f"Data model ID: {library[MODULES_STATE]['module-set-id']}"
    # The subclass matters only while building; plain SchemaData pickles (schema cache).
    model.schema_data.__class__ = SchemaData
    del model.schema_data._definitions
    del model.schema_data.undecided
    model.schema_data.__dict__.pop("undecided_alternatives", None)
    return BuiltModel(model, tuple(recorder.items))


def _build_schema(model: DataModel, recorder: _Recorder) -> None:
    """yangson's ``DataModel._build_schema`` with augments applied to a fixed point."""
    from yangson.schemadata import SchemaContext  # noqa: PLC0415

    data = model.schema_data
    schema = model.schema
    contexts = [
        (mid, SchemaContext(data, data.namespace(mid), mid)) for mid in data._module_sequence
    ]
    for mid, sctx in contexts:
        schema._handle_substatements(data.modules[mid].statement, sctx)
    pending = [
        (augment, sctx)
        for mid, sctx in contexts
        for augment in data.modules[mid].statement.find_all("augment")
    ]
    while pending:
        waiting = []
        for augment, sctx in pending:
            if not data.if_features(augment, sctx.text_mid):
                continue
            route = data.sni2route(augment.argument, sctx)
            if schema.get_schema_descendant(route) is None:
                waiting.append((augment, sctx))
            else:
                schema._augment_stmt(augment, sctx)
        if len(waiting) == len(pending):
            break
        pending = waiting
    for augment, sctx in pending:
        recorder.add(sctx.text_mid[0], "augment", augment.argument, "no such node in the schema")
    for mid, sctx in contexts:
        for deviation in data.modules[mid].statement.find_all("deviation"):
            schema._deviation_stmt(deviation, sctx)
    _drop_unparsed(schema, recorder)
    if getattr(data, "undecided_alternatives", False):
        _report_alternatives(schema, recorder)
    schema._post_process()


def _report_alternatives(schema: Any, recorder: _Recorder) -> None:
    """Sibling nodes of one name: ``if-feature "X"`` and ``if-feature "not X"`` alternatives
    that undecided features both keep. Lookups find the first; the build says so."""
    from yangson.schemanode import InternalNode  # noqa: PLC0415

    stack = [schema]
    while stack:
        node = stack.pop()
        seen: set[tuple[str, str]] = set()
        for child in node.data_children():
            key = (child.name, child.ns)
            if key in seen:
                recorder.add(
                    child.ns,
                    "if-feature",
                    child.data_path(),
                    "defined more than once under if-feature alternatives that undecided "
                    "features all keep; the first is used (decide them with --features or the "
                    "device's YANG library)",
                )
            seen.add(key)
            if isinstance(child, InternalNode):
                stack.append(child)


def _drop_unparsed(schema: Any, recorder: _Recorder) -> None:
    """Take the expressions read as ``true()`` out of the model, and record them."""
    if not recorder.unparsed:
        return

    def left_out(expression: Any, statement: str) -> bool:
        found = recorder.unparsed.pop(id(expression), None)
        if found is None:
            return False
        _, module, text, reason = found
        recorder.add(module, statement, text, reason)
        return True

    stack = [schema]
    while stack and recorder.unparsed:
        node = stack.pop()
        when = getattr(node, "when", None)
        if when is not None and left_out(when, "when"):
            node.when = None
        if getattr(node, "must", None):
            node.must = [m for m in node.must if not left_out(m.expression, "must")]
        if getattr(node, "unique", None):
            node.unique = [
                spec for spec in node.unique if not [e for e in spec if left_out(e, "unique")]
            ]
        stack.extend(getattr(node, "children", ()))
    for _, module, text, reason in recorder.unparsed.values():
        recorder.add(module, "must", text, reason)  # a deviate delete that matched nothing
