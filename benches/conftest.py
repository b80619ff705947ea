"""pytest-benchmark set-up: the implementations, the current case, and what the JSON records.

Run it (see ``memprompt bench`` for the report)::

    python -m pytest benches                      # every case, timed
    python -m pytest benches -m quick             # the --quick subset
    python -m pytest benches --benchmark-disable  # correctness only: each body once, outputs compared

Every benchmark asserts that its implementation's output equals the reference's on
the same input, so the correctness run proves memprompt == reference == letta.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: part of `memprompt bench --quick`")
    # Letta's FileBlock.source_id is a deprecated pydantic field: every read warns (and
    # memprompt reads it too). Production ignores DeprecationWarning; so do we.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning")
    # Letta logs a warning when a Memory drops a repeated file-block label.
    logging.getLogger("letta.schemas.memory").disabled = True


@pytest.fixture(scope="session")
def env() -> workloads.Env:
    return workloads.Env(with_letta=os.environ.get("MEMPROMPT_BENCH_LETTA", "1") != "0")


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict) -> None:
    letta, absent = workloads.load_letta() if os.environ.get("MEMPROMPT_BENCH_LETTA", "1") != "0" else (None, "disabled")
    try:
        import memprompt
        from memprompt.bench import extension_build

        memprompt_version, extension = memprompt.__version__, extension_build()
    except ImportError:
        memprompt_version, extension = None, None
    machine_info["memprompt_bench"] = {
        "memprompt": memprompt_version,
        "extension": extension,
        "nice": os.nice(0),
        "letta": letta.version if letta else None,
        "letta_absent": absent,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "quick": "quick" in (config.getoption("markexpr", "") or ""),
    }
