"""Registry errors carry the HTTP status and the Confluent ``error_code`` clients switch on."""

from __future__ import annotations

from yangkey.errors import YangkeyError


class RegistryError(YangkeyError):
    """A request the registry refuses, or a store it cannot reach.

    ``status`` is the HTTP status; ``code`` the Confluent error code (40401 subject not found,
    42201 invalid schema, 409 incompatible, 50001 store error...). Message texts are
    Confluent's (``rest/exceptions/Errors.java`` and the resources) where it has one.
    """

    kind = "registry"

    def __init__(self, status: int, code: int, reason: str, *, source: str | None = None) -> None:
        self.status = status
        self.code = code
        super().__init__(reason, source=source)


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(subject: str, version: object) -> RegistryError:
    # Confluent's text names the version only.
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(detail: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, detail)


def invalid_schema(reason: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema: {reason}")


def invalid_version(version: object) -> RegistryError:
    return RegistryError(
        422,
        42202,
        f"The specified version '{version}' is not a valid version id. Allowed values are "
        'between [1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility(level: object) -> RegistryError:
    return RegistryError(422, 42203, f"Invalid compatibility level: {level!r}")


def invalid_subject(subject: str) -> RegistryError:
    return RegistryError(422, 42208, f"The specified subject '{subject}' is not a valid.")


def invalid_mode(mode: object) -> RegistryError:
    return RegistryError(
        422,
        42204,
        f"Invalid mode {mode!r}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and "
        "IMPORT.",
    )


def not_permitted(reason: str) -> RegistryError:
    return RegistryError(422, 42205, reason)


def schema_too_large(reason: str) -> RegistryError:
    """A request body over the server's limit (HTTP 413; Confluent's code for a schema too
    large for its store)."""
    return RegistryError(413, 42209, reason)


def store_error(reason: str) -> RegistryError:
    return RegistryError(500, 50001, f"Error in the backend data store: {reason}")


def store_timeout(reason: str) -> RegistryError:
    return RegistryError(500, 50002, f"Operation timed out: {reason}")


UNAVAILABLE = "The store is unavailable (writes are refused, reads come from memory): "


def store_unavailable(reason: str) -> RegistryError:
    """The store topic cannot be reached: writes are refused, reads come from memory."""
    return RegistryError(503, 50003, UNAVAILABLE + reason.removeprefix(UNAVAILABLE))


class StoreChanged(RegistryError):
    """The topic is not the one this instance has read: recreated, truncated, or another
    registry writes to it. Memory must not be trusted (nor written from) any more."""

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(500, 50001, f"Error in the backend data store: {why}")
