#!/usr/bin/env bash
# Install everything yangkey needs on a fresh machine: a JDK 17 (Debian) when absent, a
# virtualenv with the package (editable) and EXTRAS at the versions of constraints.txt, and the
# Apache Kafka jars (pinned, checksummed downloads from Maven Central; no Maven needed). With
# the dev extras, also Debian's chromium and chromedriver for the report's browser test.
#
#   scripts/install.sh [PYTHON] [VENV] [EXTRAS]     EXTRAS: all (make demo) or dev (make install)
set -euo pipefail
PYTHON="${1:-python3}"
VENV="${2:-.venv}"
EXTRAS="${3:-dev}"

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    $SUDO apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
can_apt() {
  command -v apt-get >/dev/null 2>&1 && { [ -z "$SUDO" ] || sudo -n true 2>/dev/null; }
}

if ! command -v java >/dev/null 2>&1; then
  echo "installing openjdk-17-jre-headless from Debian"
  apt_install openjdk-17-jre-headless
fi
java -version 2>&1 | head -1

# Headless Chromium for tests/unit/test_report.py (selenium drives it; it downloads nothing).
if [ "$EXTRAS" = dev ] && ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1; then
  if can_apt; then
    echo "installing chromium, chromium-driver from Debian (the report's browser test)"
    apt_install --no-install-recommends chromium chromium-driver fonts-liberation
  else
    echo "warning: no apt-get (or no root/sudo): chromium not installed; the report's" \
      "browser test will be skipped (apt-get install chromium chromium-driver)" >&2
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
echo "installing yangkey[$EXTRAS] into $VENV (the versions of constraints.txt; about 1.5 GB the first time)"
# One line per package pip fetches, not minutes of silence; pip's errors go to stderr as they are.
set +o pipefail
"$VENV/bin/python" -m pip install --progress-bar off -c constraints.txt -e ".[$EXTRAS]" \
  | grep --line-buffered -E '^(Collecting|Successfully)' | sed -E 's/^Collecting /  /'
status="${PIPESTATUS[0]}"
set -o pipefail
[ "$status" -eq 0 ] || exit "$status"
"$VENV/bin/python" -m pip check >/dev/null || { "$VENV/bin/python" -m pip check; exit 1; }
"$VENV/bin/yangkey" kafka install
