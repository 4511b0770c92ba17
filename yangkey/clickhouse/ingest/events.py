"""What an ingest run tells its caller: the figures so far (:class:`IngestResult`) and the
events a command renders (:class:`IngestEvents`; ``yangkey ingest``'s rendering is
:mod:`yangkey.clickhouse.progress`). The library itself prints nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class IngestResult:
    messages: dict[str, int] = field(default_factory=dict)
    """Messages inserted, per topic."""
    errors: dict[str, int] = field(default_factory=dict)
    """Rows that went to the errors table during the run, per topic (decode, key, header
    errors, and dead-letter records)."""
    expired: dict[str, int] = field(default_factory=dict)
    """Good messages whose event time was already older than their topic's retention: the
    history TTL drops them at its next merge; the errors table keeps them (kind ``expired``)."""
    decode_errors: int = 0
    """Messages whose key or headers could not be decoded by the bridge."""
    batches: int = 0
    seconds: float = 0.0
    missing_topics: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.messages.values())

    @property
    def total_errors(self) -> int:
        return sum(self.errors.values())

    @property
    def total_expired(self) -> int:
        return sum(self.expired.values())

    @property
    def rate(self) -> float:
        return self.total / self.seconds if self.seconds > 0 else 0.0


class IngestEvents(Protocol):
    """Hears what a run does; every method returns at once (it runs on the consume loop)."""

    def note(self, text: str) -> None:
        """Something worth a line to an operator watching (topics followed, a stop, a retry)."""

    def warning(self, text: str) -> None:
        """Something an operator should hear even when not watching (a topic left untyped)."""

    def progress(self, result: IngestResult) -> None:
        """After every poll: the figures so far (the renderer decides how often to show them)."""

    def finished(self, result: IngestResult, *, failed: bool) -> None:
        """The run ended: ``result`` complete unless ``failed`` (the caller reports the error)."""


class Silent:
    """Hears nothing: a library caller's default."""

    def note(self, text: str) -> None:
        pass

    def warning(self, text: str) -> None:
        pass

    def progress(self, result: IngestResult) -> None:
        pass

    def finished(self, result: IngestResult, *, failed: bool) -> None:
        pass
