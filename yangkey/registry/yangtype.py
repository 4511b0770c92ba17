"""``YANG``: the text of one YANG module or submodule (RFC 7950), this registry's fourth type.

Every ``import``/``include`` must be matched by a reference named after the imported module,
pointing at a registered ``YANG`` schema of that module, so a consumer can rebuild the whole
schema from the registry. Compatibility: a subject stays one module; a new version must keep the
module name and may not go back in revision date (RFC 7950 section 11 update rules are not
checked).
"""

from __future__ import annotations

from collections.abc import Mapping

from yangson.exceptions import EndOfInput, UnexpectedInput, YangsonException
from yangson.statement import ModuleParser, Statement

from yangkey.registry.errors import invalid_schema
from yangkey.registry.schemabase import Parsed, SchemaType
from yangkey.registry.store import SchemaDef


def parse_yang_module(text: str) -> Statement:
    """The module's statement tree; yangson's parser checks the syntax."""
    parser = ModuleParser(text)
    try:
        parser.opt_separator()
        statement = parser.statement()
        if statement.keyword not in ("module", "submodule"):
            raise invalid_schema(f"expected a YANG module, found {statement.keyword!r}")
        try:
            parser.opt_separator()
        except EndOfInput:
            return statement
        raise UnexpectedInput(parser, "end of input")
    except YangsonException as exc:
        raise invalid_schema(f"YANG: {exc}") from None


def yang_dependencies(statement: Statement) -> list[str]:
    return [s.argument for kw in ("import", "include") for s in statement.find_all(kw)]


def yang_revision(statement: Statement) -> str:
    # RFC 7950 7.1.9: the newest revision comes first, but not every author obeys.
    return max((str(s.argument) for s in statement.find_all("revision")), default="")


class YangType(SchemaType):
    name = "YANG"

    def parse(self, text: str, dependencies: Mapping[str, Parsed], *, normalize: bool) -> Parsed:
        statement = parse_yang_module(text)
        for dependency in yang_dependencies(statement):
            target = dependencies.get(dependency)
            if target is None:
                raise invalid_schema(
                    f"YANG module {statement.argument} imports {dependency} but the request "
                    f"has no reference named {dependency!r}"
                )
            if target.definition.schema_type != "YANG" or target.native.argument != dependency:
                raise invalid_schema(
                    f"reference {dependency!r} is not the YANG module {dependency}"
                )
        return Parsed(SchemaDef(self.name, text.strip() + "\n"), statement)

    def reads(self, reader: Parsed, writer: Parsed) -> list[str]:
        return []  # a module's evolution has a direction: see evolves

    def evolves(self, old: Parsed, new: Parsed) -> list[str]:
        before, after = old.native, new.native
        if before.argument != after.argument:
            return [f"module changed from {before.argument} to {after.argument}"]
        if yang_revision(after) < yang_revision(before):
            return [f"revision {yang_revision(after)} is older than {yang_revision(before)}"]
        return []
