"""One benchmark per (case, implementation); the cases are in ``workloads.py``.

Each test times one implementation on the case's input (shared by all
implementations) and asserts that its output equals the reference's.
"""

from __future__ import annotations

import pytest
import workloads


def run_case(benchmark, env: workloads.Env, case: workloads.Case, impl: str) -> None:
    """Time ``impl`` on the case's input, then assert that its output is the reference's."""
    if impl == "letta":
        if env.letta is None:
            pytest.skip(f"Letta column absent: {env.letta_absent}")
        if case.letta_skip:
            pytest.skip(f"Letta column skipped for {case.id}: {case.letta_skip}")
    prepared = env.prepare(case)
    benchmark.group = case.id
    benchmark.extra_info.update(
        renderer=case.renderer,
        case=case.name,
        impl=impl,
        order=workloads.CASES.index(case),
        **case.params,
        **prepared.info,
    )
    result = benchmark(prepared.run[impl])
    prepared.verify(impl, result)


def params(renderer: str) -> list:
    """(case, implementation) pairs of one renderer, case by case (so each case is built once)."""
    out = []
    for case in workloads.cases_of(renderer):
        marks = [pytest.mark.quick] if case.quick else []
        for impl in workloads.IMPLEMENTATIONS:
            out.append(pytest.param(case, impl, id=f"{workloads.slug(case.name)}-{impl}", marks=marks))
    return out


@pytest.mark.parametrize(("case", "impl"), params("plain"))
def test_plain(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("line-numbered"))
def test_line_numbered(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("git memory"))
def test_git_memory(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("tree view"))
def test_tree_view(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("available skills"))
def test_available_skills(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("directories"))
def test_directories(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("metadata"))
def test_metadata(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("system message"))
def test_system_message(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("real agents"))
def test_real_agents(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("rebuild decision"))
def test_rebuild_decision(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)


@pytest.mark.parametrize(("case", "impl"), params("recompile"))
def test_recompile(benchmark, env, case, impl):
    run_case(benchmark, env, case, impl)
