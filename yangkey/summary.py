"""What a stored message says, in one line: the data of a push-update, or the operation and
target of each yang-patch edit of a push-change-update (RFC 8641). The compact tables of
``yangkey demo``, ``state`` and ``history`` show it in place of the payload."""

from __future__ import annotations

import orjson

from yangkey.errors import YangkeyError


def summarize(payload: str, limit: int = 70) -> str:
    """What a stored message says, in one line: the data of a push-update, or the
    operation and target of each yang-patch edit."""
    from yangkey.notifications import decode  # noqa: PLC0415
    from yangkey.schema import SchemaContext  # noqa: PLC0415

    try:
        note = decode(payload.encode(), "payload", SchemaContext.cached().index.by_namespace)
    except YangkeyError:
        return payload[:limit]
    if note.kind == "push-change-update":
        parts = []
        for edit in note.edits:
            leaves = [
                f"{k}={v}"
                for entry in (edit.value or {}).values()
                for item in (entry if isinstance(entry, list) else [entry])
                if isinstance(item, dict)
                for k, v in item.items()
                if not isinstance(v, dict | list) and k != "name"
            ]
            parts.append(f"{edit.operation} {' '.join(leaves)}".strip())
        text = "; ".join(parts)
    else:
        text = orjson.dumps(note.data).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
