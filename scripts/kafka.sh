#!/usr/bin/env bash
# Thin wrapper: `scripts/kafka.sh start|stop|status|install [options]` runs the same code as
# `yangkey kafka ...`, usable before the package's console script is installed.
# Brokers are recorded per user ($XDG_STATE_HOME/yangkey), so any directory will do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="${here}${PYTHONPATH:+:${PYTHONPATH}}"
exec "${PYTHON:-python3}" -m yangkey.kafka.commands "$@"
