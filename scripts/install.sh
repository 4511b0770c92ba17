#!/usr/bin/env bash
# Install everything yangkey needs on a fresh machine: a JDK 17 (Debian) when absent, a
# virtualenv with the package and its dev extras, and the Apache Kafka jars (pinned, checksummed
# downloads from Maven Central; no Maven needed).
set -euo pipefail
PYTHON="${1:-python3}"
VENV="${2:-.venv}"

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "installing ${need_apt[*]} from Debian"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
java -version 2>&1 | head -1

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[dev]"
"$VENV/bin/yangkey" kafka install
