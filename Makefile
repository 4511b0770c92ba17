# yangkey developer entry points. Everything installs from nothing: a Python virtualenv in
# .venv, the Apache Kafka jars (from Maven Central, cached in ~/.cache/yangkey), and a JDK
# from Debian when the machine lacks one.
#
#   make demo    the whole pipeline on the embedded stack (Kafka KRaft + chdb + Spark local[*])
#   make test    lint (ruff, mypy --strict), then unit and integration tests (starts and stops
#                its own Kafka broker)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test unit lint bench install clean

$(STAMP): pyproject.toml
	bash scripts/install.sh "$(PYTHON)" "$(VENV)"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/yangkey demo

test: lint
	$(BIN)/python -m pytest -q

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

lint: $(STAMP)
	$(BIN)/ruff check yangkey tests benchmarks spark_jobs examples
	$(BIN)/ruff format --check yangkey benchmarks spark_jobs examples
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_keys.py
	$(BIN)/python benchmarks/bench_clickhouse.py
	$(BIN)/python benchmarks/bench_spark_produce.py

clean:
	rm -rf $(VENV) .yangkey build *.egg-info
