"""One benchmark per (case, implementation); the cases are ``memprompt.bench.workloads``'s.

Each test times one implementation on the case's input (shared by all
implementations) and asserts that its output equals the reference's. The read
floor's test also holds its fields to Letta's reads (``memprompt.bench.reads``).
"""

from __future__ import annotations

from typing import Any

import pytest

from memprompt.bench import workloads


def test_case(benchmark: Any, env: workloads.Env, case: workloads.Case, impl: str) -> None:
    """Time ``impl`` on the case's input, then assert that its output is the reference's."""
    if impl == "letta":
        if env.letta is None:
            pytest.skip(f"Letta column absent: {env.letta_absent}")
        if case.letta_skip:
            pytest.skip(f"Letta column skipped for {case.id}: {case.letta_skip}")
    prepared = env.prepare(case)
    if impl == "read" and impl not in prepared.run:
        prepared.check_reads(case.id)  # Letta reads no field here either
        pytest.skip(f"{case.id} reads no field of an object: its read floor is nothing")
    benchmark.group = case.id
    benchmark.extra_info.update(
        renderer=case.renderer, case=case.name, impl=impl, order=case.order, **case.params, **prepared.info
    )
    result = benchmark(prepared.run[impl])
    prepared.verify(impl, result)
    if impl == "read":
        prepared.check_reads(case.id)
