"""Shared test set-up: Hypothesis profiles and the real agent files."""

from pathlib import Path

import pytest
from strategies import register_profiles

register_profiles()

#: The shared folder beside the repository: 12 real agent files (read-only test data).
AGENTFILES = Path(__file__).resolve().parents[2] / "shared" / "agentfiles"


@pytest.fixture(scope="session")
def agentfiles() -> Path:
    if not AGENTFILES.is_dir():
        pytest.skip(f"real agent files not found at {AGENTFILES}")
    return AGENTFILES
