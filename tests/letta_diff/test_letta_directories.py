"""<directories> (common and react forms), <tool_usage_rules>, with and without file limits."""

from __future__ import annotations

from functools import partial

from hypothesis import given
from hypothesis import strategies as st
from letta_bridge import assert_same, letta_kwargs, letta_memory, ref
from strategies import agent_types, file_blocks, max_files_open, sources, tool_usage_rules

directory_agent_types = st.one_of(agent_types(("react_agent", "workflow_agent")), agent_types())


@given(file_blocks(), sources(max_size=4).filter(bool), max_files_open, directory_agent_types, tool_usage_rules)
def test_directories(memory_file_blocks, memory_sources, limit, agent_type, rules):
    memory_kwargs = {"blocks": [], "file_blocks": memory_file_blocks, "agent_type": agent_type, "git_enabled": False}
    compile_kwargs = {"sources": memory_sources, "max_files_open": limit, "tool_usage_rules": rules}
    letta = letta_memory(**memory_kwargs)
    for kwargs in (memory_kwargs, letta_kwargs(memory_kwargs)):
        reference = ref.Memory(**kwargs)
        assert_same(partial(reference.compile, **compile_kwargs), partial(letta.compile, **compile_kwargs))
