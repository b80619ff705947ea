#!/usr/bin/env bash
# Set up the venv for the Letta server tests (tests/letta_server): letta[postgres,server]==0.16.8
# under the repo's constraints, pgserver (PostgreSQL + pgvector in a wheel), and memprompt itself.
# Usage: scripts/letta_server_env.sh [VENV [WHEEL]]   (default ~/.cache/memprompt/letta-server-venv; memprompt
# from WHEEL when given, else built from this checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-$HOME/.cache/memprompt/letta-server-venv}"
PYTHON="${PYTHON:-python3}"
if [ ! -f "$VENV/.installed" ] || [ tests/letta-0.16.8-constraints.txt -nt "$VENV/.installed" ] || [ "$0" -nt "$VENV/.installed" ]; then
	test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
	# pip 23 cannot resolve Letta's lxml[html-clean] requirement: upgrade first.
	"$VENV/bin/pip" install -q -U pip
	# pgserver is not in Letta's lock: pinned here. hypothesis: tests/conftest.py imports it.
	# letta-client (pinned by Letta's lock): the end-to-end tests drive `letta server` over HTTP with it.
	"$VENV/bin/pip" install -q -c tests/letta-0.16.8-constraints.txt 'letta[postgres,server]==0.16.8' \
		pgserver==0.1.4 pytest==8.4.1 pytest-asyncio==1.1.0 xxhash==4.1.0 hypothesis==6.170.17 letta-client==1.7.12
	touch "$VENV/.installed"
fi
"$VENV/bin/pip" install -q --force-reinstall --no-deps "${2:-.}"
