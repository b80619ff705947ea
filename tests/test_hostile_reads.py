"""Hostile objects against memprompt's direct reads: each compile gives the reference's text, or raises its
exception type and message, and never crashes (``make test-memcheck`` runs this under valgrind).

The same cases run against letta 0.16.8's own blocks in tests/letta_diff/test_hostile_reads_letta.py.
"""

import pytest
from hostile_objects import CRASH, LEGACY, WRONG_OUTPUT, Fields, legacy_str, unspecialized
from outcome import assert_same

import memprompt as mp
from memprompt import reference as ref

MODES = [("memgpt_agent", False), ("letta_v1_agent", True)]


def check(case, agent_type, git_enabled):
    # Fresh blocks for each side: a hostile key acts once.
    for compile_ in ("compile", "render_memory_filesystem"):
        assert_same(
            lambda: getattr(mp.Memory(case(Fields), [], agent_type, git_enabled), compile_)(),
            unspecialized(lambda: getattr(ref.Memory(case(Fields), [], agent_type, git_enabled), compile_)()),
        )


@pytest.mark.parametrize(("agent_type", "git_enabled"), MODES)
@pytest.mark.parametrize("case", CRASH.values(), ids=CRASH.keys())
def test_a_dict_changed_during_a_lookup_reads_what_getattr_reads(case, agent_type, git_enabled):
    check(case, agent_type, git_enabled)


@pytest.mark.parametrize(("agent_type", "git_enabled"), MODES)
@pytest.mark.parametrize("case", WRONG_OUTPUT.values(), ids=WRONG_OUTPUT.keys())
def test_a_key_equal_to_a_field_name_reads_what_getattr_reads(case, agent_type, git_enabled):
    check(case, agent_type, git_enabled)


needs_legacy = pytest.mark.skipif(legacy_str("x") is None, reason="no _testcapi.unicode_legacy_string (CPython 3.12+)")


@needs_legacy
@pytest.mark.parametrize(("agent_type", "git_enabled"), MODES)
@pytest.mark.parametrize("case", LEGACY.values(), ids=LEGACY.keys())
def test_a_legacy_str_is_read_as_its_text(case, agent_type, git_enabled):
    check(case, agent_type, git_enabled)


@needs_legacy
def test_a_legacy_str_is_read_as_its_text_everywhere_a_str_is_read():
    text = "caf\u00e9 \U0001f600"
    assert_same(lambda: mp.fingerprint(legacy_str(text)), lambda: mp.fingerprint(text))
    template, memory = "before {CORE_MEMORY} after", "<memory_blocks>x</memory_blocks>"
    message = template.replace("{CORE_MEMORY}", memory)
    assert_same(
        lambda: mp.stored_memory_section(legacy_str(template), legacy_str(message)),
        lambda: mp.stored_memory_section(template, message),
    )
