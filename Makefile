# The README's two commands: `make example` and `make test`. Both set up from nothing.
PYTHON ?= python3
VENV := .venv
# Letta itself, for the differential tests: outside the clone so every run reuses it.
# Its pytest is the one Letta's lock pins (8.4.1).
LETTA_VENV ?= $(HOME)/.cache/memprompt/letta-0.16.8-venv
SOURCES := pyproject.toml Cargo.toml Cargo.lock memprompt_letta.pth $(shell find rust python -type f -not -name '*.so' -not -path '*/__pycache__/*')

# Letta's server extras, for the end-to-end tests on PostgreSQL.
LETTA_SERVER_VENV ?= $(HOME)/.cache/memprompt/letta-server-venv

# Seconds of coverage-guided fuzzing in `make test` (after replaying the committed corpus).
FUZZ_SECONDS ?= 90

.PHONY: fuzz fuzz-export example test test-rust test-python test-letta test-letta-server bench-check bench-check-letta bench bench-quick install

example: $(VENV)/.installed
	$(VENV)/bin/memprompt compile examples/plain.af --section system --now 2026-01-01T12:00:00+00:00

test: test-rust test-python test-letta bench-check bench-check-letta test-letta-server fuzz

install: $(VENV)/.installed

$(VENV)/.installed: $(SOURCES)
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -U pip
	$(VENV)/bin/pip install -q '.[test]'
	touch $@

$(LETTA_VENV)/.installed: tests/letta-0.16.8-constraints.txt
	test -x $(LETTA_VENV)/bin/python || $(PYTHON) -m venv $(LETTA_VENV)
	# pip 23 cannot resolve Letta's lxml[html-clean] requirement: upgrade first.
	$(LETTA_VENV)/bin/pip install -q -U pip
	# asyncpg (Letta's postgres extra) lets the agent and service modules import.
	$(LETTA_VENV)/bin/pip install -q -c tests/letta-0.16.8-constraints.txt letta==0.16.8 asyncpg==0.30.0 \
		xxhash==4.1.0 hypothesis==6.170.17 pytest==8.4.1 pytest-benchmark==5.3.1
	touch $@

# memprompt itself, built for and installed into Letta's environment.
$(LETTA_VENV)/.memprompt: $(LETTA_VENV)/.installed $(SOURCES)
	$(LETTA_VENV)/bin/pip install -q --no-deps .
	touch $@

test-rust:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo test

test-python: $(VENV)/.installed
	$(VENV)/bin/python -m pytest tests --ignore=tests/letta_diff --ignore=tests/letta_server --ignore=tests/letta_e2e -q

# The reference against letta 0.16.8 itself, in Letta's own environment.
test-letta: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/python -m pytest tests/letta_diff -q -p no:cacheprovider

# Letta's own server (SyncServer and its managers) on a throwaway PostgreSQL with pgvector (pgserver); then a real
# `letta server` (2 uvicorn workers) over HTTP, stock and through `memprompt run`, which writes docs/server-bench.md.
# Two runs: each starts its own PostgreSQL, and Letta fixes its database when it is first imported.
# MEMPROMPT_E2E_SIZES=100,300,1000 (the default) sets the fan-out sizes.
test-letta-server: $(SOURCES) tests/letta-0.16.8-constraints.txt scripts/letta_server_env.sh
	scripts/letta_server_env.sh $(LETTA_SERVER_VENV)
	$(LETTA_SERVER_VENV)/bin/python -m pytest tests/letta_server -q -p no:cacheprovider
	$(LETTA_SERVER_VENV)/bin/python -m pytest tests/letta_e2e -q -p no:cacheprovider

# Each benchmark body once, outputs compared: memprompt == reference (Letta column absent).
bench-check: $(VENV)/.installed
	$(VENV)/bin/python -m pytest benches --benchmark-disable -q -p no:cacheprovider

# The same with Letta's column: memprompt == reference == letta 0.16.8.
bench-check-letta: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/python -m pytest benches --benchmark-disable -q -p no:cacheprovider

# The timed run against Letta, and the README's report.
bench: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/memprompt bench --out docs/bench

bench-quick: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/memprompt bench --quick

# cargo-fuzz (libFuzzer) on every renderer: replay fuzz/corpus, then fuzz for FUZZ_SECONDS in all.
fuzz:
	fuzz/run.sh $(FUZZ_SECONDS)

# Rewrite fuzz/replay/*.jsonl.gz after changing fuzz/corpus (tests/test_fuzz_corpus.py replays it).
fuzz-export:
	fuzz/run.sh export
