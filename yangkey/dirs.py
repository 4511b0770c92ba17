"""Where yangkey keeps its files on the user's machine (the XDG base directory spec).

* the **cache root** (:func:`cache_root`): what can be rebuilt at any time: the schema cache
  (:mod:`yangkey.schema_cache`), the Kafka distribution (:mod:`yangkey.kafka.install`), packed
  Spark environments and class-data archives (:mod:`yangkey.spark.runtime`);
* the **state root** (:func:`user_state_home`): what records running things: local brokers
  (:mod:`yangkey.kafka.process`), run logs.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ROOT_ENV = "YANGKEY_CACHE"


def cache_root() -> Path:
    """Where yangkey caches everything (schemas, Kafka jars, packed environments):
    ``$YANGKEY_CACHE``, else the XDG cache dir."""
    explicit = os.environ.get(CACHE_ROOT_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "yangkey"


def user_state_home() -> Path:
    """``$XDG_STATE_HOME/yangkey``, else ``~/.local/state/yangkey`` (the XDG base directory
    spec ignores a relative ``XDG_STATE_HOME``)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "yangkey"
