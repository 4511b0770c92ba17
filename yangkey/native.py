"""The optional compiled fast path (``yangkey-native``, module ``yangkey_native``; issue 33).

yangkey stays pure Python; when the separately built ``yangkey_native`` imports and speaks the
interface this module expects (:data:`CONTRACT`), :func:`decode` runs its one-pass decoder,
else the Python reference (:func:`yangkey.notifications.decode`). ``YANGKEY_NATIVE=0`` forces
Python. Which path runs is logged once at debug level, and :func:`status` tells it
(``yangkey --version`` prints it).

The interface (contract 1):

* ``yangkey_native.CONTRACT`` (int) and ``__version__`` (str);
* ``yangkey_native.Decoder(model)``: ``model`` is :func:`model`'s dict, the classes a decode
  builds or raises and the reference's own checks of header fields (the native path calls them
  for any value but a plain well-formed one, so both paths word each refusal alike);
* ``Decoder.decode(raw: bytes, source: str, ns_modules: Mapping[str, str], wanted=None)``
  (``wanted``: the reference's :data:`~yangkey.notification_model.Selector`, called with the
  Notification of an XML push-update once its node and subscription id are known; its answer
  limits the conversion of the data) returns the
  :class:`~yangkey.notification_model.Notification` the reference returns, raises the error it
  raises, or returns None for a document the native parsers leave to the reference (malformed,
  an encoding other than UTF-8, a DTD or entity, nesting or size past the limits): the
  reference then decodes it and words the error (orjson's or libxml2's message);
* ``Decoder.loads(raw: bytes)``: the JSON parser alone (duplicate members refused), the tree
  ``orjson.loads`` builds or None; ``Decoder.check(raw: bytes)``: the parse alone, no Python
  object built, True when the native decoder reads the document; for benchmarks and tests.

The Python implementation stays the reference: tests/unit/test_native_decode.py checks that
both paths agree.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from yangkey.errors import FramingError, InputError, NotificationError, ShapeError
from yangkey.messages import CONTENT_TYPE_JSON, CONTENT_TYPE_XML
from yangkey.notification_model import (
    NS_TELEMETRY,
    OPERATIONS,
    PUSH_HEADER,
    Edit,
    Notification,
    Selector,
    _node_name,
    _operation,
    _sequence_number,
    _subscription_id,
    parse_target,
)
from yangkey.notifications import decode as python_decode
from yangkey.values import QNameText

CONTRACT = 1
"""The ``yangkey_native.CONTRACT`` this module speaks."""
ENV_NATIVE = "YANGKEY_NATIVE"

log = logging.getLogger(__name__)


class _Decoder(Protocol):
    def decode(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        wanted: Selector | None = None,
    ) -> Notification | None: ...

    def check(self, raw: bytes) -> bool: ...

    def loads(self, raw: bytes) -> Any: ...


def model() -> dict[str, Any]:
    """What ``yangkey_native.Decoder`` is built with: the notification model's classes, the
    errors it raises, and the reference's checks and constants."""
    return {
        "Notification": Notification,
        "Edit": Edit,
        "QNameText": QNameText,
        "InputError": InputError,
        "FramingError": FramingError,
        "ShapeError": ShapeError,
        "NotificationError": NotificationError,
        "parse_target": parse_target,
        "node_name": _node_name,
        "subscription_id": _subscription_id,
        "sequence_number": _sequence_number,
        "operation": _operation,
        "CONTENT_TYPE_JSON": CONTENT_TYPE_JSON,
        "CONTENT_TYPE_XML": CONTENT_TYPE_XML,
        "OPERATIONS": sorted(OPERATIONS),
        "PUSH_HEADER": sorted(PUSH_HEADER),
        "NS_TELEMETRY": NS_TELEMETRY,
    }


@cache
def _load() -> tuple[_Decoder | None, str]:
    """The native decoder, or None; and one line saying which path runs and why (logged
    once, at debug level)."""
    decoder, line = _import()
    log.debug("yangkey decode path: %s", line)
    return decoder, line


def _import() -> tuple[_Decoder | None, str]:
    if os.environ.get(ENV_NATIVE, "").strip() == "0":
        return None, f"python ({ENV_NATIVE}=0)"
    try:
        import yangkey_native  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None, "python (yangkey-native not installed)"
    version = getattr(yangkey_native, "__version__", "?")
    contract = getattr(yangkey_native, "CONTRACT", None)
    if contract != CONTRACT:
        return None, (
            f"python (yangkey-native {version} speaks contract {contract}, this yangkey "
            f"expects {CONTRACT}: rebuild it with `make native`)"
        )
    decoder: _Decoder = yangkey_native.Decoder(model())
    return decoder, f"native (yangkey-native {version})"


def _decoder() -> _Decoder | None:
    decoder, _ = _load()
    return decoder


def status() -> str:
    """``native (yangkey-native 0.1.0)`` or ``python (why)``."""
    return _load()[1]


def active() -> bool:
    """Whether :func:`decode` runs the native decoder."""
    return _decoder() is not None


def decode(
    raw: bytes | str,
    source: str,
    ns_modules: Mapping[str, str],
    wanted: Selector | None = None,
) -> Notification:
    """:func:`yangkey.notifications.decode`, natively where it can: same arguments, same
    Notification, same errors."""
    decoder = _load()[0]
    if decoder is None:
        return python_decode(raw, source, ns_modules, wanted)
    data = raw.encode("utf-8") if type(raw) is str else raw
    note = decoder.decode(data, source, ns_modules, wanted)  # type: ignore[arg-type]
    if note is None:
        return python_decode(data, source, ns_modules, wanted)
    return note


def native_decoder() -> _Decoder | None:
    """The native decoder itself (tests and benchmarks compare it with the reference)."""
    return _decoder()
