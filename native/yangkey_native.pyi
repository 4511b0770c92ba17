"""Type stub of yangkey_native (the compiled decoder; yangkey/native.py is its adapter)."""

from collections.abc import Callable, Mapping
from typing import Any

CONTRACT: int
__version__: str

class Decoder:
    def __init__(self, model: dict[str, Any]) -> None: ...
    def decode(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        wanted: Callable[[Any], Any] | None = None,
    ) -> Any | None:
        """The reference's Notification, its error raised, or None: the reference decodes."""
    @property
    def documents(self) -> int: ...
    @property
    def full_parses(self) -> int: ...
    def check(self, raw: bytes) -> bool:
        """The JSON parse alone (no Python object built): True when well formed, no duplicate."""
    def loads(self, raw: bytes) -> Any | None:
        """The JSON tree orjson.loads builds (duplicate members refused), or None."""
    def keys(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Callable[..., tuple[Walker, str, Any] | None],
        with_xpaths: bool = False,
        routes: Routes | dict[tuple[int, str | None], tuple[Walker, str, Any]] | None = None,
        with_instances: bool = False,
        learning: bool = False,
    ) -> tuple[Any, ...] | None:
        """(extra, subscription id, sequence number, event time, key, branch keys, xpaths) of a
        JSON push-update (with_instances: and per branch its instance feed header), or None:
        the reference derives it (yangkey/native.py)."""
    def keys_xml(
        self,
        raw: bytes,
        source: str,
        ns_modules: Mapping[str, str],
        route: Callable[[int, str | None], tuple[Walker, str, Any] | None],
        with_xpaths: bool = False,
        routes: Routes | dict[tuple[int, str | None], tuple[Walker, str, Any]] | None = None,
        with_instances: bool = False,
    ) -> tuple[Any, ...] | None:
        """``keys`` of an XML push-update (contract 5; with_instances, contract 6: and per
        branch its instance feed header), or None: the reference derives it."""
    def instances(
        self,
        raw: bytes,
        source: str,
        walker: Walker,
        ns_modules: Mapping[str, str] | None = None,
    ) -> tuple[bytes | None, ...] | None:
        """Per branch the instance feed header of a JSON push-update or yang-patch (with
        ns_modules, contract 6: an XML one's too), or None: the reference."""

class Walker:
    def __init__(self, branches: list[Any], feeds: list[Any] | None = None) -> None:
        """A compiled subscription's walkers, from yangkey.native.tables' plain data; feeds:
        per branch yangkey.native.feed_table's."""

class Routes:
    """The route's answers by (subscription id, node), read by Decoder.keys without Python."""
    def __init__(self) -> None: ...
    def __setitem__(
        self, asked: tuple[int, str | None], answer: tuple[Walker, str, Any]
    ) -> None: ...
    def __len__(self) -> int: ...
    def clear(self) -> None: ...
