# yangkey developer entry points. Everything installs from nothing: a Python virtualenv in
# .venv, the Apache Kafka jars (from Maven Central, cached in ~/.cache/yangkey), and a JDK
# from Debian when the machine lacks one.
#
#   make demo    the whole pipeline on the embedded stack (Kafka KRaft + chdb + Spark local[*])
#   make test    lint (ruff, mypy --strict), then unit and integration tests (starts and stops
#                its own Kafka broker); builds the native fast path first when cargo is there
#   make unit    the fast unit tests only (no JVM, no chdb, no broker): under a minute
#   make native  build yangkey-native (native/, Rust) with maturin and install it in .venv

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NATIVE := $(VENV)/.native
# Cargo's build directory outside the clone: every worktree and CI run reuses its crates.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/yangkey/native-target

.PHONY: demo test unit lint bench install clean native native-if-cargo

$(STAMP): pyproject.toml
	bash scripts/install.sh "$(PYTHON)" "$(VENV)"
	touch $(STAMP)

install: $(STAMP)

# The optional compiled decoder (yangkey-native): pip builds it with maturin (from PyPI) and
# cargo (crates.io, versions pinned in native/Cargo.lock).
$(NATIVE): $(STAMP) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/yangkey_native.pyi $(wildcard native/src/*.rs)
	$(BIN)/python -m pip install -q ./native
	touch $(NATIVE)

native: $(NATIVE)

native-if-cargo: $(STAMP)
	@if command -v cargo >/dev/null 2>&1; then $(MAKE) --no-print-directory native; \
	else echo "make: no cargo: the native fast path is not built (its tests skip)"; fi

demo: $(STAMP)
	$(BIN)/yangkey demo

test: lint native-if-cargo
	$(BIN)/python -m pytest -q

# The fast unit tests: no JVM, no chdb, no broker (the `fast` marker, set in tests/conftest.py),
# on up to four cores (pytest-xdist).
unit: $(STAMP)
	$(BIN)/python -m pytest -q -m fast -n auto --maxprocesses=4 tests/unit

lint: $(STAMP)
	$(BIN)/ruff check yangkey tests benchmarks spark_jobs examples
	$(BIN)/ruff format --check yangkey benchmarks spark_jobs examples
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_keys.py
	$(BIN)/python benchmarks/bench_clickhouse.py
	$(BIN)/python benchmarks/bench_spark_produce.py
	$(BIN)/python benchmarks/bench_native.py

clean:
	rm -rf $(VENV) .yangkey build *.egg-info
