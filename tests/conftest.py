"""Shared test set-up: Hypothesis profiles and the real agent files (tests/agentfiles.py)."""

from pathlib import Path

import agentfiles as shared_agentfiles
import pytest
from strategies import register_profiles

register_profiles()


def pytest_configure(config: pytest.Config) -> None:
    if shared_agentfiles.under_ci() and not shared_agentfiles.present():
        raise pytest.UsageError(f"CI=true: {shared_agentfiles.MISSING}, so the tests that read them cannot run")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many tests did not run for want of the real agent files, said where every run ends."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and shared_agentfiles.MISSING in str(report.longrepr[2])
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: {shared_agentfiles.MISSING} (CI fails without them)", yellow=True
        )


@pytest.fixture(scope="session")
def agentfiles() -> Path:
    return shared_agentfiles.require()
