"""A subscription as the core commands take it (``--xpath`` or ``--subtree``, the schema
options, the topic naming), handed to each command as one value, and its compilation through
the disk cache.

The options are declared once here (:class:`~yangkey.cli.options.Declaration`) and bundled
(:func:`~yangkey.cli.options.bundled`): ``compile``, ``topic``, ``key`` and ``keys`` take the
same ones without repeating a twelve-parameter signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from yangkey.cli.declaration import Declaration, bundled
from yangkey.cli.options import YANG_DIR
from yangkey.errors import YangkeyError

if TYPE_CHECKING:
    from yangkey.compiled import CompiledSubscription


def read_input(path: str, limit: int | None = None) -> bytes:
    """A file (or ``-``, stdin) of at most ``limit`` bytes (default: the notification cap)."""
    from yangkey.inputs import MAX_NOTIFICATION_BYTES, read_bounded  # noqa: PLC0415

    return read_bounded(path, MAX_NOTIFICATION_BYTES if limit is None else limit)


def _parse_features(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> dict[str, tuple[str, ...]]:
    from yangkey.library import parse_feature_options  # noqa: PLC0415 - keeps --help fast

    try:
        return parse_feature_options(value)
    except YangkeyError as error:
        raise click.BadParameter(error.reason) from None


FEATURES = Declaration(
    ("--features",),
    "features",
    "Enable only these features of MODULE (MODULE: for none); modules not named have every "
    "feature on. Repeatable.",
    metavar="MODULE:F1,F2",
    attrs={"multiple": True, "callback": _parse_features},
)
YANG_LIBRARY = Declaration(
    ("--yang-library",),
    "yang_library",
    "An explicit YANG library file, JSON or XML, RFC 8525 (yang-library) or RFC 7895 "
    "(modules-state), used as given instead of the module set computed from the subscription.",
    metavar="FILE",
    attrs={"type": click.Path(dir_okay=False)},
)
XPATH = Declaration(
    ("--xpath",),
    "xpath",
    "The subscription XPath, e.g. /ietf-interfaces:interfaces/interface.",
    metavar="XPATH",
)
SUBTREE = Declaration(
    ("--subtree",),
    "subtree",
    "File holding a subtree filter (RFC 6241 section 6), with or without <filter>.",
    metavar="FILE",
    attrs={"type": click.Path(dir_okay=False)},
)
NAMESPACE = Declaration(
    ("--namespace",),
    "namespaces",
    "XML prefix of the subscription XPath and the namespace it stands for (for XML-prefix "
    "qualified paths such as /if:interfaces/if:interface). Repeatable.",
    metavar="PREFIX=URI",
    attrs={"multiple": True},
)
KEYLESS = Declaration(
    ("--keyless",),
    "keyless",
    "What to do with a keyless list on the path: reject the subscription, or identify entries "
    "by their position in the notification.",
    attrs={"type": click.Choice(["reject", "position"]), "default": "reject", "show_default": True},
)
PREFIX = Declaration(
    ("--prefix",),
    "prefix",
    "Organisation topic prefix, e.g. netops -> netops-if-interfaces-interface.",
    metavar="PREFIX",
)
MAX_LENGTH = Declaration(
    ("--max-length",),
    "max_length",
    "Topic name limit (Kafka: 249); longer names are cut and get an FNV-1a suffix.",
    attrs={"type": click.IntRange(20, 249), "default": 249, "show_default": True},
)


@dataclass(frozen=True)
class Schema:
    """``--yang-dir``, ``--yang-library`` and ``--features``."""

    yang_dirs: tuple[str, ...] = ()
    yang_library: str | None = None
    features: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Subscription:
    """``--xpath`` or ``--subtree`` (exactly one), ``--namespace``, ``--keyless`` and the
    schema."""

    xpath: str | None
    subtree: str | None
    namespaces: tuple[str, ...]
    keyless: str
    schema: Schema

    @classmethod
    def from_options(
        cls,
        *,
        xpath: str | None,
        subtree: str | None,
        namespaces: tuple[str, ...],
        keyless: str,
        yang_dirs: tuple[str, ...],
        yang_library: str | None,
        features: Mapping[str, tuple[str, ...]],
    ) -> Subscription:
        return cls(xpath, subtree, namespaces, keyless, Schema(yang_dirs, yang_library, features))


@dataclass(frozen=True)
class TopicNaming:
    """``--prefix`` and ``--max-length``."""

    prefix: str | None
    max_length: int

    def names(self, compiled: CompiledSubscription) -> list[str]:
        """The topic of each branch (a bad prefix raises here, a TopicError)."""
        from yangkey.topics import TopicNamer  # noqa: PLC0415

        namer = TopicNamer(prefix=self.prefix, max_length=self.max_length)
        return [namer.name(branch) for branch in compiled.branches]


#: The schema options, as the command's ``schema`` parameter.
schema_options = bundled("schema", Schema, FEATURES, YANG_LIBRARY, YANG_DIR)
#: The subscription and schema options, as the command's ``subscription`` parameter.
subscription_options = bundled(
    "subscription",
    Subscription.from_options,
    XPATH,
    SUBTREE,
    NAMESPACE,
    KEYLESS,
    FEATURES,
    YANG_LIBRARY,
    YANG_DIR,
)
#: The topic naming options, as the command's ``naming`` parameter.
topic_options = bundled("naming", TopicNaming, PREFIX, MAX_LENGTH)


def compile_request(subscription: Subscription) -> CompiledSubscription:
    """Compile ``subscription`` (:func:`yangkey.compiler.compile_filter`: through the disk
    cache)."""
    from yangkey.compiler import compile_filter  # noqa: PLC0415 - keeps --help fast
    from yangkey.schema import SchemaContext  # noqa: PLC0415

    xpath, subtree, schema_options_ = subscription.xpath, subscription.subtree, subscription.schema
    if (xpath is None) == (subtree is None):
        raise click.UsageError("give exactly one of --xpath or --subtree")
    ns_map: dict[str, str] = {}
    for item in subscription.namespaces:
        prefix, equals, uri = item.partition("=")
        if not equals or not prefix or not uri:
            raise click.UsageError(f"--namespace {item!r}: expected PREFIX=URI")
        ns_map[prefix] = uri
    schema = SchemaContext.cached(schema_options_.yang_dirs, dict(schema_options_.features))
    text = xpath if subtree is None else read_input(subtree).decode("utf-8", "replace")
    assert text is not None
    return compile_filter(
        text,
        schema,
        subtree=subtree is not None,
        namespaces=ns_map,
        keyless=subscription.keyless,  # type: ignore[arg-type]
        source=subtree if subtree is not None else text,
        library_file=schema_options_.yang_library or None,
    )
