# The README's two commands: `make example` and `make test`. Both set up from nothing.
PYTHON ?= python3
# The developer's venv: maturin, and memprompt installed from the wheel with its test, bench and dev extras.
VENV := .venv
# The wheel (manylinux) and the sdist, built once by maturin; every venv below installs them.
DIST := dist
MATURIN := maturin==1.16.0
EXTRAS := test,bench,dev
# Fresh venvs (made anew each run): the wheel installed with no Rust toolchain on PATH, and the sdist built from source.
WHEEL_VENV := .venv-wheel
SDIST_VENV := .venv-sdist
# Two agent files for `memprompt bench --quick --agents` run from outside the checkout: real ones when the
# shared folder is beside the checkout, else two of the project's examples.
BENCH_AGENTS ?= $(or $(wildcard ../shared/agentfiles/customer_service.af ../shared/agentfiles/lettabot-builder.af),\
	examples/tool_rules.af examples/sources.af)
# Letta itself, for the differential tests: outside the clone so every run reuses it.
# Its pytest is the one Letta's lock pins (8.4.1).
LETTA_VENV ?= $(HOME)/.cache/memprompt/letta-0.16.8-venv
SOURCES := pyproject.toml Cargo.toml Cargo.lock memprompt_letta.pth $(shell find rust python -type f -not -name '*.so' -not -path '*/__pycache__/*')

# Letta's server extras, for the end-to-end tests on PostgreSQL.
LETTA_SERVER_VENV ?= $(HOME)/.cache/memprompt/letta-server-venv

# Seconds of coverage-guided fuzzing in `make test` (after replaying the committed corpus).
FUZZ_SECONDS ?= 90

.PHONY: fuzz fuzz-export example test test-rust test-memcheck lint test-wheel test-sdist test-letta test-letta-server bench-check bench-check-letta bench bench-quick install wheel

example: $(VENV)/.installed
	$(VENV)/bin/memprompt compile examples/plain.af --section system --now 2026-01-01T12:00:00+00:00

# Two targets at a time (the machine's two cores), each target's output printed whole when it ends; the server
# tests, the longest, first. Their one timed assertion (the fan-out's rebuild against stock's, 15x to 50x apart)
# does not depend on a quiet machine; the prompt-cache benchmark counts characters, not time.
CHECKS := test-letta-server test-rust lint test-wheel test-sdist test-letta bench-check bench-check-letta fuzz test-memcheck
test:
	$(MAKE) -j2 --output-sync=target $(CHECKS)

install: $(VENV)/.installed

wheel: $(DIST)/.built

$(VENV)/.maturin:
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -U pip
	$(VENV)/bin/pip install -q '$(MATURIN)'
	touch $@

$(DIST)/.built: $(VENV)/.maturin $(SOURCES) README.md
	rm -rf $(DIST)
	$(VENV)/bin/maturin build --release --interpreter $(VENV)/bin/python --out $(DIST)
	$(VENV)/bin/maturin sdist --out $(DIST)
	ls -l $(DIST)
	touch $@

$(VENV)/.installed: $(DIST)/.built
	$(VENV)/bin/pip install -q --force-reinstall --no-deps $(DIST)/memprompt-*.whl
	$(VENV)/bin/pip install -q "$$(ls $(DIST)/memprompt-*.whl)[$(EXTRAS)]"
	touch $@

# ruff (lint and format), mypy --strict, and stubtest of the extension against python/memprompt/_core.pyi.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests
	$(VENV)/bin/mypy python/memprompt
	cd $(DIST) && ../$(VENV)/bin/python -m mypy.stubtest memprompt._core

# The suite against the installed wheel, in a fresh venv whose PATH has no cargo or rustc; then
# `memprompt bench --quick --agents ...` from a folder outside the checkout.
test-wheel: $(DIST)/.built
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	PATH="$(CURDIR)/$(WHEEL_VENV)/bin:$$(scripts/path_without_rust.sh)" sh -euc '\
		if command -v cargo || command -v rustc; then echo "a Rust toolchain is on PATH" >&2; exit 1; fi; \
		pip install -q -U pip; \
		pip install -q "$$(ls $(DIST)/memprompt-*.whl)[test,bench]"; \
		MEMPROMPT_TEST_INSTALLED=1 python -m pytest tests --ignore=tests/letta_diff --ignore=tests/letta_server --ignore=tests/letta_e2e -q; \
		out=$$(mktemp -d); cd "$$out"; \
		memprompt bench --quick --agents $(abspath $(BENCH_AGENTS)) --out report; \
		test -s report/REPORT.md && test -s report/chart.png; \
		cd / && rm -rf "$$out"'

# The sdist builds from source (Rust needed) in a fresh venv, and compiles as the wheel does.
test-sdist: $(DIST)/.built $(VENV)/.installed
	rm -rf $(SDIST_VENV)
	$(PYTHON) -m venv $(SDIST_VENV)
	$(SDIST_VENV)/bin/pip install -q -U pip
	CARGO_TARGET_DIR=$(CURDIR)/target $(SDIST_VENV)/bin/pip install -q $(DIST)/memprompt-*.tar.gz
	$(SDIST_VENV)/bin/memprompt compile examples/git_memory.af --section system --now 2026-01-01T12:00:00Z > $(SDIST_VENV)/out.txt
	$(VENV)/bin/memprompt compile examples/git_memory.af --section system --now 2026-01-01T12:00:00Z | cmp - $(SDIST_VENV)/out.txt

$(LETTA_VENV)/.installed: tests/letta-0.16.8-constraints.txt
	test -x $(LETTA_VENV)/bin/python || $(PYTHON) -m venv $(LETTA_VENV)
	# pip 23 cannot resolve Letta's lxml[html-clean] requirement: upgrade first.
	$(LETTA_VENV)/bin/pip install -q -U pip
	# asyncpg (Letta's postgres extra) lets the agent and service modules import.
	$(LETTA_VENV)/bin/pip install -q -c tests/letta-0.16.8-constraints.txt letta==0.16.8 asyncpg==0.30.0 \
		xxhash==4.1.0 hypothesis==6.170.17 pytest==8.4.1 pytest-benchmark==5.3.1
	touch $@

# memprompt's wheel, installed into Letta's environment.
$(LETTA_VENV)/.memprompt: $(LETTA_VENV)/.installed $(DIST)/.built
	$(LETTA_VENV)/bin/pip install -q --force-reinstall --no-deps $(DIST)/memprompt-*.whl
	touch $@

test-rust:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo test

# The hostile-object, compile-cache and threads tests under valgrind memcheck, CPython's allocator off (each
# object its own malloc block): any invalid read or write fails the run. Undefined-value checks are off (CPython's
# own code trips them, and they double the time); tests/memcheck.supp holds glibc's wmemcmp over-read.
MEMCHECK_TESTS = $(wildcard tests/test_hostile*.py tests/test_compile_cache.py) tests/test_threads.py
test-memcheck: $(VENV)/.installed
	PYTHONMALLOC=malloc valgrind --tool=memcheck --undef-value-errors=no --leak-check=no --error-exitcode=99 \
		--suppressions=tests/memcheck.supp --quiet $(VENV)/bin/python -m pytest $(MEMCHECK_TESTS) -q -p no:cacheprovider

# The reference against letta 0.16.8 itself, in Letta's own environment.
test-letta: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/python -m pytest tests/letta_diff -q -p no:cacheprovider

# Letta's own server (SyncServer and its managers) on a throwaway PostgreSQL with pgvector (pgserver); then a real
# `letta server` (2 uvicorn workers) over HTTP, stock and through `memprompt run`, which writes docs/server-bench.md.
# Two runs: each starts its own PostgreSQL, and Letta fixes its database when it is first imported.
# MEMPROMPT_E2E_SIZES=100,300,1000 (the default) sets the fan-out sizes.
test-letta-server: $(DIST)/.built tests/letta-0.16.8-constraints.txt scripts/letta_server_env.sh
	scripts/letta_server_env.sh $(LETTA_SERVER_VENV) $$(ls $(DIST)/memprompt-*.whl)
	$(LETTA_SERVER_VENV)/bin/python -m pytest tests/letta_server -q -p no:cacheprovider
	$(LETTA_SERVER_VENV)/bin/python -m pytest tests/letta_e2e -q -p no:cacheprovider

# The real agents of the report: every agent file of the shared folder.
REAL_AGENTS := $(wildcard ../shared/agentfiles/*.af)
# Under CI (CI=true) the real agents are always there: their absence fails the run instead of skipping tests.
ifeq ($(CI)$(REAL_AGENTS),true)
$(error CI=true, but no real agent files in ../shared/agentfiles)
endif
SUITE := -p memprompt.bench.suite.plugin --pyargs memprompt.bench.suite --benchmark-disable -q -p no:cacheprovider \
	$(if $(REAL_AGENTS),--agents $(REAL_AGENTS))

# Each benchmark body once, outputs compared: memprompt == reference (Letta column absent).
bench-check: $(VENV)/.installed
	$(VENV)/bin/python -m pytest $(SUITE)

# The same with Letta's column: memprompt == reference == letta 0.16.8.
bench-check-letta: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/python -m pytest $(SUITE)

# The timed run against Letta, and the README's report.
bench: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/memprompt bench --out docs/bench $(if $(REAL_AGENTS),--agents $(REAL_AGENTS))

bench-quick: $(LETTA_VENV)/.memprompt
	$(LETTA_VENV)/bin/memprompt bench --quick $(if $(REAL_AGENTS),--agents $(REAL_AGENTS))

# cargo-fuzz (libFuzzer) on every renderer: replay fuzz/corpus, then fuzz for FUZZ_SECONDS in all.
fuzz:
	fuzz/run.sh $(FUZZ_SECONDS)

# Rewrite fuzz/replay/*.jsonl.gz after changing fuzz/corpus (tests/test_fuzz_corpus.py replays it).
fuzz-export:
	fuzz/run.sh export
