# yangkey entry points. Everything installs from nothing: a Python virtualenv in .venv (the
# versions of constraints.txt), the Apache Kafka jars (from Maven Central, cached in
# ~/.cache/yangkey), and a JDK from Debian when the machine lacks one.
#
#   make demo         the whole pipeline on the embedded stack (Kafka KRaft + chdb + Spark local[*]);
#                     installs only what it needs: yangkey[all] in .venv (1.5 GB), no dev tools
#   make install      for developers: yangkey[dev] in .venv, i.e. the same plus pytest, ruff,
#                     mypy, build, and Debian's chromium for the report's browser test
#   make test         lint (ruff, mypy --strict), then unit and integration tests (starts and stops
#                     its own Kafka broker); builds the native fast path first when cargo is there
#   make unit         the fast unit tests only (no JVM, no chdb, no broker), on up to 4 cores
#   make native       build yangkey-native (native/, Rust) with maturin and install it in .venv
#   make constraints  re-resolve constraints.txt (every dependency of .[dev], pinned) after a
#                     change of pyproject.toml's dependencies, or to take newer versions
#   make floors       the unit tests on the lowest versions pyproject.toml allows (uv's
#                     lowest-direct resolution of .[kafka,clickhouse,test]) in .venv-floors

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.dev
NATIVE := $(VENV)/.native
# Cargo's build directory outside the clone: every worktree and CI run reuses its crates.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/yangkey/native-target
# One build in it at a time: another clone's build could replace the compiled module between
# cargo's end and maturin packing it (flock: util-linux; without it, builds are not serialised).
NATIVE_LOCK := $(if $(shell command -v flock 2>/dev/null),flock $(CARGO_TARGET_DIR).lock)

.PHONY: demo test unit faults lint bench install clean native native-if-cargo constraints floors

$(STAMP): pyproject.toml constraints.txt
	bash scripts/install.sh "$(PYTHON)" "$(VENV)" all
	touch $(STAMP)

$(DEV): $(STAMP)
	bash scripts/install.sh "$(PYTHON)" "$(VENV)" dev
	touch $(DEV)

install: $(DEV)

# One command after a change of dependencies: the newest versions pyproject.toml allows, for
# every Python yangkey supports (markers where they differ); CI and make install use them. It
# needs only uv (installed into .venv when missing), not an up-to-date .venv, so
# a pyproject.toml the old pins contradict can still be resolved.
constraints:
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@test -x $(BIN)/uv || $(BIN)/python -m pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	    --strip-extras --quiet -o constraints.txt

# The floors are true when the tests pass on them; pyspark's (the spark extra) is not covered
# here: its tests skip. Editable, as the tests run the clone's modules in subprocesses.
floors: $(DEV)
	rm -rf $(VENV)-floors && $(PYTHON) -m venv $(VENV)-floors
	$(BIN)/uv pip install --quiet --python $(VENV)-floors/bin/python --resolution lowest-direct \
	    -e '.[kafka,clickhouse,test]'
	$(VENV)-floors/bin/pytest -q -p no:cacheprovider tests/unit

# The optional compiled decoder (yangkey-native): pip builds it with maturin (from PyPI) and
# cargo (crates.io, versions pinned in native/Cargo.lock).
$(NATIVE): $(DEV) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/yangkey_native.pyi $(wildcard native/src/*.rs)
	mkdir -p "$(dir $(CARGO_TARGET_DIR))"
	$(NATIVE_LOCK) $(BIN)/python -m pip install -q ./native
	touch $(NATIVE)

native: $(NATIVE)

# The crate's own unit tests (cargo test) run with make test, after the build.
native-if-cargo: $(DEV)
	@if command -v cargo >/dev/null 2>&1; then $(MAKE) --no-print-directory native && \
	    cd native && $(NATIVE_LOCK) cargo test --release --lib --quiet; \
	else echo "make: no cargo: the native fast path is not built (its tests skip)"; fi

demo: $(STAMP)
	$(BIN)/yangkey demo

test: lint native-if-cargo
	$(BIN)/python -m pytest -q

# The fast unit tests: no JVM, no chdb, no broker (the `fast` marker, set in tests/conftest.py),
# on up to four cores (pytest-xdist).
unit: $(DEV)
	$(BIN)/python -m pytest -q -m fast -n auto --maxprocesses=4 tests/unit

# The three-broker cluster under faults alone (tests/integration/test_cluster.py, also part of
# make test): to run it in a loop.
faults: $(DEV)
	$(BIN)/python -m pytest -q tests/integration/test_cluster.py

lint: $(DEV)
	$(BIN)/ruff check yangkey tests benchmarks spark_jobs examples
	$(BIN)/ruff format --check yangkey benchmarks spark_jobs examples
	$(BIN)/mypy

bench: $(DEV)
	$(BIN)/python benchmarks/bench_keys.py
	$(BIN)/python benchmarks/bench_clickhouse.py
	$(BIN)/python benchmarks/bench_spark_produce.py
	$(BIN)/python benchmarks/bench_native.py

clean:
	rm -rf $(VENV) .yangkey build *.egg-info
