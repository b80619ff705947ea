"""The real agent files: read-only test data in ``../shared/agentfiles``, beside the repository (not ours to copy).

A test that needs them calls ``require()``, which skips it with ``MISSING`` as the reason where the folder is
absent; the run's summary counts those skips (tests/conftest.py), and under CI (``CI=true``, where the folder is
always there) an absent folder fails the run before any test runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[2] / "shared" / "agentfiles"

MISSING = f"real agent files not found at {FOLDER}"


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def present() -> bool:
    return FOLDER.is_dir()


def require() -> Path:
    """The folder, or the calling test skipped (``MISSING``)."""
    if not present():
        pytest.skip(MISSING)
    return FOLDER


def paths() -> list[Path]:
    """Every agent file of the folder, sorted; none where it is absent."""
    return sorted(FOLDER.glob("*.af"))
