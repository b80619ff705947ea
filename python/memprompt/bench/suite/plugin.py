"""The suite's pytest plugin (``-p memprompt.bench.suite.plugin``): the cases (with ``--agents`` files), the shared environment, what the JSON records."""

from __future__ import annotations

import logging
import os
import platform
from typing import Any

import pytest

from memprompt.bench import workloads
from memprompt.bench.timing import extension_build


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--agents",
        nargs="+",
        default=[],
        metavar="FILE.af",
        help="agent files whose agents are the real agents' workloads",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: part of `memprompt bench --quick`")
    # Letta's FileBlock.source_id is a deprecated pydantic field: every read warns (and
    # memprompt reads it too). Production ignores DeprecationWarning; so do we.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning")
    # Letta logs a warning when a Memory drops a repeated file-block label.
    logging.getLogger("letta.schemas.memory").disabled = True


def with_letta() -> bool:
    return os.environ.get("MEMPROMPT_BENCH_LETTA", "1") != "0"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per (case, implementation), case by case (so each case's input is built once)."""
    if {"case", "impl"} <= set(metafunc.fixturenames):
        params = []
        for case in workloads.all_cases(metafunc.config.getoption("agents")):
            marks = [pytest.mark.quick] if case.quick else []
            for impl in workloads.IMPLEMENTATIONS:
                params.append(pytest.param(case, impl, id=f"{workloads.slug(case.id)}-{impl}", marks=marks))
        metafunc.parametrize(("case", "impl"), params)


@pytest.fixture(scope="session")
def env() -> workloads.Env:
    return workloads.Env(with_letta=with_letta())


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    import memprompt

    letta, absent = workloads.load_letta() if with_letta() else (None, "disabled")
    machine_info["memprompt_bench"] = {
        "memprompt": memprompt.__version__,
        "extension": extension_build(),
        "nice": os.nice(0),
        "letta": letta.version if letta else None,
        "letta_absent": absent,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "quick": "quick" in (config.getoption("markexpr", "") or ""),
    }
