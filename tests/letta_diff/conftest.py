"""Differential tests: memprompt.reference against letta 0.16.8 on the same Hypothesis inputs.

Run them in a virtualenv that has letta==0.16.8 (and pytest, hypothesis, pytz, xxhash):

    /work/letta-venv/bin/python -m pytest tests/letta_diff

Elsewhere they are skipped.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from _load_reference import load_by_path  # noqa: E402

# The reference is pure Python but memprompt/__init__.py imports the Rust extension,
# which Letta's venv may not have: unless memprompt is already imported, register a bare
# `memprompt` package (its __path__ is python/memprompt) and import the reference under it.
load_by_path()

from strategies import register_profiles  # noqa: E402

register_profiles()

# Letta logs a warning each time Memory drops a repeated file-block label.
logging.getLogger("letta.schemas.memory").disabled = True


def pytest_configure(config):
    # Letta's FileBlock.source_id is a deprecated pydantic field: reading it warns.
    config.addinivalue_line("filterwarnings", "ignore:deprecated:DeprecationWarning")
