"""One exception root for yangkey, with structured subclasses.

Every error names the *input* it is about (a file name, ``<subscription 1042>``,
``kafka://raw@3:1207``…), the *reason*, and where known the *position* in that
input, so that the CLI can print one ``error: …`` line and the pipeline can
route the rejected bytes to an errors destination with the same fields.

Every error has a *kind*, one word of :data:`ERROR_KINDS`: the one vocabulary of what went
wrong, which travels in the ``yangkey-error-kind`` header of a dead-letter record
(:mod:`yangkey.messages`), in the ClickHouse errors tables and in the run summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

ErrorKind = Literal[
    "input",
    "framing",
    "notification",
    "shape",
    "no-match",
    "filtered-out",
    "empty-update",
    "bad-subscription",
    "schema",
    "filter",
    "topic",
    "config",
    "oversized",
    "bug",
    "broker",
    "registry",
    "clickhouse",
    "error",
    "decode",
    "key",
    "header",
    "expired",
]
"""Every error kind yangkey writes anywhere (see :data:`ERROR_KINDS`)."""

ERROR_KINDS: dict[ErrorKind, str] = {
    # A notification the producer rejects (header yangkey-error-kind; errors table
    # "rejected:<kind>"), most specific first.
    "input": "bytes that are no JSON or XML document, empty, or over the size limit",
    "framing": "a document that is no YANG-Push notification yangkey reads: no push-update or"
    " push-change-update in it, or its data in a member yangkey does not know (check the"
    " collector's output format)",
    "notification": "a YANG-Push notification with a field that cannot be read: node name,"
    " subscription id, sequence number, yang-patch edit, or a key or filter value",
    "shape": "data on the subscribed path in a shape RFC 7951 does not allow (a container sent"
    " as an array, a list entry that is no object): a device or collector bug",
    "no-match": "data, but none on the subscribed path: the subscription id points to another"
    " subscription than the device streams (check the subscriptions file)",
    "filtered-out": "data on the subscribed path, but every instance contradicts a key or a"
    " filter the subscription pins: the device sent more than it was asked for",
    "empty-update": "a push-update with no data (a heartbeat) or a yang-patch with no edit;"
    " counted, and dead-lettered only with --empty-updates dead-letter",
    "bad-subscription": "a notification of a subscription the catalog skipped because its entry"
    " in the subscriptions file does not compile (the reason names the entry, its line and why):"
    " fix the entry and replay the dead letters",
    "schema": "a subscription learned from a notification that does not resolve in the schema",
    "filter": "a subscription filter (XPath or subtree) that cannot be parsed",
    "topic": "a derived topic name that is invalid or collides with another",
    "config": "a subscriptions file or setting that is invalid",
    "oversized": "a keyed message over the broker's message size limit",
    "bug": "an internal error: a yangkey bug (please report it, with the dead-lettered bytes)",
    # Errors of the tools around the pipeline.
    "broker": "the local Kafka broker cannot be installed, started, reached or stopped",
    "registry": "a schema registry error",
    "clickhouse": "a ClickHouse error",
    "error": "any other yangkey error",
    # Kinds of the ClickHouse errors tables besides "rejected:<kind>" (INGEST_KINDS).
    "decode": "a Kafka record the engine could not read",
    "key": "a keyed message whose message key is missing or malformed",
    "header": "a keyed message with a yangkey header that cannot be read",
    "expired": "a message older than its topic's retention: kept in the errors table only",
}
"""Each error kind and what it means to an operator."""


@dataclass(frozen=True)
class Position:
    """A place in an input text: 0-based character offset, 1-based line and column."""

    offset: int
    line: int = 0
    column: int = 0

    @classmethod
    def in_text(cls, text: str, offset: int) -> Position:
        offset = max(0, min(offset, len(text)))
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return cls(offset, line, column)

    def __str__(self) -> str:
        if self.line:
            return f"line {self.line}, column {self.column}"
        return f"offset {self.offset}"


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _one_line(text: str) -> str:
    return text.translate(_LINE_BREAKS)


class YangkeyError(Exception):
    """Root of every error yangkey raises on purpose."""

    kind: ClassVar[ErrorKind] = "error"
    """Its kind in the one vocabulary of :data:`ERROR_KINDS`."""

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        position: Position | None = None,
        text: str | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.position = position
        self.text = text
        super().__init__(self.message())

    def with_source(self, source: str) -> YangkeyError:
        """Name the input when the raising code did not know it (keeps the subclass)."""
        if self.source is None:
            self.source = source
            self.args = (self.message(),)
        return self

    def within(self, outer: str) -> YangkeyError:
        """Re-home the error under an enclosing input (a file, a subscription): the inner
        source moves into the reason, and the position, which was relative to the inner text,
        is dropped. Keeps the subclass."""
        if self.source == outer:
            return self
        if self.source:
            self.reason = f"{self.source}: {self.reason}"
        self.source = outer
        self.position = None
        self.text = None
        self.args = (self.message(),)
        return self

    def message(self) -> str:
        """``source [at position]: reason`` on one line, whatever the parts hold: a line
        break (from a file name or a library's message) is written as ``\\n``."""
        where = self.source or "input"
        if self.position is not None:
            where = f"{where} at {self.position}"
        return _one_line(f"{where}: {self.reason}")

    def snippet(self) -> str:
        """The offending text with a caret under the position (sqlglot style)."""
        if self.text is None or self.position is None:
            return ""
        lines = self.text.splitlines() or [""]
        index = max(0, min(self.position.line - 1, len(lines) - 1))
        caret = " " * max(0, self.position.column - 1) + "^"
        return f"  {lines[index]}\n  {caret}"


class InputError(YangkeyError):
    """Malformed or unsafe input bytes: XML, JSON, YAML that cannot be read."""

    kind: ClassVar[ErrorKind] = "input"


class FilterError(YangkeyError):
    """A subtree filter or XPath subscription that cannot be normalized or parsed."""

    kind: ClassVar[ErrorKind] = "filter"


class SchemaError(YangkeyError):
    """A YANG schema problem: module not found, unknown namespace or node, keyless list."""

    kind: ClassVar[ErrorKind] = "schema"


class NotificationError(YangkeyError):
    """A notification that is well formed but cannot yield a key."""

    kind: ClassVar[ErrorKind] = "notification"


class FramingError(NotificationError):
    """A document that is no YANG-Push notification yangkey reads: no push-update or
    push-change-update in it, or its data in a member no decoder knows."""

    kind: ClassVar[ErrorKind] = "framing"


class NoMatchError(NotificationError):
    """A notification whose data holds no instance matching any subscription branch: none on
    the subscribed path (this class); the subclasses say why more precisely."""

    kind: ClassVar[ErrorKind] = "no-match"


class FilteredOutError(NoMatchError):
    """Every instance on the subscribed path contradicts a pinned key or a non-key filter."""

    kind: ClassVar[ErrorKind] = "filtered-out"


class ShapeError(NoMatchError):
    """Data on the subscribed path in a shape RFC 7951 does not allow (a container sent as an
    array, a list entry that is no object)."""

    kind: ClassVar[ErrorKind] = "shape"


class EmptyUpdate(NoMatchError):
    """A push-update without data or a yang-patch without edits (a heartbeat): no error by
    default in the pipeline, which counts it (:data:`yangkey.messages.EMPTY_UPDATE`)."""

    kind: ClassVar[ErrorKind] = "empty-update"


class TopicError(YangkeyError):
    """An invalid topic prefix, an over-long name that cannot be cut, a name collision."""

    kind: ClassVar[ErrorKind] = "topic"


class ConfigError(YangkeyError):
    """A subscriptions file or a setting that is invalid."""

    kind: ClassVar[ErrorKind] = "config"


class BadSubscriptionError(NotificationError):
    """A notification of a subscription that the catalog skipped: its entry in the
    subscriptions file does not compile (the reason names the entry and why)."""

    kind: ClassVar[ErrorKind] = "bad-subscription"


class BrokerError(YangkeyError):
    """The local Kafka broker cannot be installed, started, reached or stopped."""

    kind: ClassVar[ErrorKind] = "broker"
