"""Reading YANG modules for a schema build (:mod:`yangkey.schema_build`): the parser, lenient
where pyang is (RFC 6020 section 6.1.3 escapes), each file parsed once per process while it is
unchanged; and yangson's ``SchemaData`` with yangkey's changes.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yangkey.schema_cache import gc_paused

if TYPE_CHECKING:
    from yangson.statement import Statement

MODULES_STATE = "ietf-yang-library:modules-state"
#: Marks a module entry of a computed YANG library whose features no one decided.
UNDECIDED = "yangkey:undecided-features"


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


@lru_cache(maxsize=1)
def _parser_class() -> type:
    from yangson.statement import ModuleParser  # noqa: PLC0415 - only when building

    class LenientModuleParser(ModuleParser):  # type: ignore[misc]
        @classmethod
        def unescape(cls, text: str) -> str:
            # RFC 6020 section 6.1.3 defines \n \t \" \\ only; pyang keeps any other escape
            # of a YANG 1.0 module as written (Junos: pattern "\*"), yangson refuses it.
            return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[0]), text, flags=re.DOTALL)

    return LenientModuleParser


#: Parsed modules kept for later builds, by the size of their source: a statement tree takes
#: about ten times its text in memory, and the YANG library computation and the build parse
#: the same modules (vendor sets also share large ones, Cisco-IOS-XE-native in every XE set).
PARSE_CACHE_BYTES = 24 * 2**20
_PARSED: OrderedDict[tuple[str, int, int, str, str], Statement] = OrderedDict()
_PARSE_LOCK = threading.Lock()


def parse_file(path: Path, name: str, revision: str) -> Statement:
    """The statement tree of one module file, parsed once while it is unchanged (and among
    the most recently used). Raises OSError, UnicodeDecodeError or yangson's exceptions."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, name, revision)
    with _PARSE_LOCK:
        found = _PARSED.get(key)
        if found is not None:
            _PARSED.move_to_end(key)
            return found
        text = path.read_text(encoding="utf-8")
        with gc_paused():
            statement: Statement = _parser_class()(text, name, revision).parse()
        _PARSED[key] = statement
        total = sum(k[1] for k in _PARSED)
        while total > PARSE_CACHE_BYTES and len(_PARSED) > 1:
            (_, size, *_), _ = _PARSED.popitem(last=False)
            total -= size
        return statement


@lru_cache(maxsize=1)
def schema_data_class() -> type:
    """yangson's ``SchemaData`` for a vendor module set: undecided features in three-valued
    logic (:mod:`yangkey.features`), submodules in ``include`` order, modules read with
    :func:`parse_file`."""
    from yangson.exceptions import ModuleContentMismatch, ModuleNotFound, UnknownPrefix  # noqa: PLC0415
    from yangson.schemadata import SchemaData  # noqa: PLC0415

    from yangkey import features  # noqa: PLC0415 - only when building

    class VendorSchemaData(SchemaData):  # type: ignore[misc]
        def __init__(self, library: dict[str, Any], search_path: list[str]) -> None:
            self.undecided = {
                m.get("name") for m in library[MODULES_STATE]["module"] if m.get(UNDECIDED)
            }
            self._definitions: dict[tuple[int, Any, str], tuple[Statement, Any]] = {}
            super().__init__(library, search_path)

        def _load_module(self, name: str, rev: str, mdata: Any) -> Statement:
            # yangson's lookup (name@rev.yang, then name.yang, per directory), parsed once.
            for directory in self.module_search_path:
                candidates = [f"{name}@{rev}.yang"] if rev else []
                for file_name in [*candidates, f"{name}.yang"]:
                    path = Path(directory) / file_name
                    try:
                        statement = parse_file(path, name, rev)
                    except (FileNotFoundError, PermissionError, ModuleContentMismatch):
                        continue
                    mdata.path = str(path)
                    return statement
            raise ModuleNotFound(name, rev)

        def get_definition(self, stmt: Statement, sctx: Any) -> tuple[Statement, Any]:
            # A grouping's "type" and "uses" statements are looked up wherever it is used, each
            # time with a linear search of the module's top-level statements.
            key = (id(stmt), sctx.text_mid, sctx.default_ns)
            found = self._definitions.get(key)
            if found is None:
                found = self._definitions[key] = super().get_definition(stmt, sctx)
            return found

        def _process_imports(self) -> None:
            unordered = {}
            for mdata in self.modules.values():
                if len(mdata.submodules) > 1:
                    order = [s.argument for s in mdata.statement.find_all("include")]
                    rank = {name: i for i, name in enumerate(order)}
                    unordered[mdata] = mdata.submodules
                    mdata.submodules = sorted(
                        mdata.submodules, key=lambda mid: (rank.get(mid[0], len(rank)), mid)
                    )
            try:
                super()._process_imports()
            finally:
                for mdata, submodules in unordered.items():
                    mdata.submodules = submodules

        def if_features(self, stmt: Statement, mid: tuple[str, str]) -> bool:
            conditions = stmt.find_all("if-feature")
            if not conditions:
                return True
            mdata = self.modules[mid]

            def resolve(prefix: str | None, name: str) -> bool | None:
                if prefix is None:
                    owner = mdata.main_module
                else:
                    try:
                        owner = mdata.prefix_map[prefix]
                    except KeyError:
                        raise UnknownPrefix(prefix, mid) from None
                if owner[0] in self.undecided:
                    return None
                return name in self.modules[owner].features

            kept = True
            for condition in conditions:
                expression = features.parse(condition.argument or "")
                value = features.evaluate(expression, resolve)
                if value is False:
                    kept = False
                elif value is None and "not" in (condition.argument or "").split():
                    self.undecided_alternatives = True  # "X" and "not X" may both stay
            return kept

    return VendorSchemaData
