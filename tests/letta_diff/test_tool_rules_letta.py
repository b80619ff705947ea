"""The reference's compile_tool_rule_prompts against Letta 0.16.8's ToolRulesSolver, on the same inputs.

Inputs: every agent of the real agent files (as dicts and as Letta's objects), Hypothesis
rule lists of every type (valid and not), and Letta's objects as pydantic leaves them
(model_construct, subclasses). The strategies live in tests/test_tool_rules.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("letta.helpers.tool_rule_solver", reason="needs letta==0.16.8 installed")

from letta.helpers.tool_rule_solver import COMPILED_PROMPT_DESCRIPTION, ToolRulesSolver  # noqa: E402
from letta.schemas import tool_rule as letta_rules  # noqa: E402
from strategies import texts  # noqa: E402
from test_tool_rules import (  # noqa: E402
    AGENT_EXPECTED,
    DESCRIPTION,
    KINDS,
    LETTA_CLASSES,
    ToolRuleType,
    build,
    load_agents,
    outcome,
    rule_lists,
)

from memprompt.reference import tool_rules as ref  # noqa: E402


def letta_outcome(rules):
    return outcome(lambda: ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts())


def reference_outcome(rules):
    return outcome(lambda: ref.compile_tool_rule_prompts(rules))


def letta_objects(rules):
    """Letta's own rule objects, as its solver validated them."""
    return list(ToolRulesSolver(tool_rules=rules).tool_rules or [])


def test_description_is_letta_constant():
    assert ref.DESCRIPTION == DESCRIPTION == COMPILED_PROMPT_DESCRIPTION


AGENTS = load_agents()


@pytest.mark.parametrize("file_name, agent_name, agent", AGENTS, ids=[f"{f}:{n}" for f, n, _ in AGENTS])
def test_agent_files(file_name, agent_name, agent):
    rules = agent.get("tool_rules")
    expected = letta_outcome(rules)
    pinned = AGENT_EXPECTED[(file_name, agent_name)]
    assert expected == (None if pinned is None else (DESCRIPTION, pinned))
    assert reference_outcome(rules) == expected
    objects = letta_objects(rules)
    assert reference_outcome(objects) == letta_outcome(objects) == expected


@given(rule_lists())
def test_rule_lists(spec):
    assert reference_outcome(build(spec)) == letta_outcome(build(spec))


@given(rule_lists(valid=True))
def test_valid_rule_lists_and_letta_objects(spec):
    expected = letta_outcome(build(spec))
    assert reference_outcome(build(spec)) == expected
    assert expected is None or expected[0] != "raises" or expected[1] is ValueError  # a huge int's str()
    if expected is not None and expected[0] == "raises":
        return
    objects = letta_objects(build(spec))
    assert reference_outcome(objects) == letta_outcome(objects) == expected


@st.composite
def constructed(draw):
    """Letta's objects made with model_construct (no validation), fields sometimes odd."""
    rules = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(KINDS))
        cls = getattr(letta_rules, LETTA_CLASSES[kind])
        odd = draw(st.integers(0, 5)) == 0
        fields = {"tool_name": draw(st.one_of(st.integers(), st.none(), texts()) if odd else texts())}
        if kind in ("constrain_child_tools", "parent_last_tool"):
            fields["children"] = draw(
                st.one_of(st.lists(texts(), max_size=3).map(tuple), st.lists(st.integers(), min_size=1, max_size=2))
                if odd
                else st.lists(texts(), max_size=3)
            )
        if kind == "conditional":
            fields["child_output_mapping"] = {"a": "b"}
        if kind == "max_count_per_step":
            fields["max_count_limit"] = draw(st.one_of(st.booleans(), texts(), st.floats()) if odd else st.integers())
        if odd and draw(st.booleans()):
            fields["type"] = draw(st.sampled_from([ToolRuleType(k) for k in KINDS]))  # re-validated by pydantic
        rules.append(cls.model_construct(**fields))
    return rules


@given(constructed())
def test_letta_objects_as_they_are(rules):
    assert reference_outcome(rules) == letta_outcome(rules)


class Custom(letta_rules.TerminalToolRule):
    def render_prompt(self):
        return self.tool_name if self.tool_name != "int" else 5


class Silent(letta_rules.ChildToolRule):
    def render_prompt(self):
        return None


@pytest.mark.parametrize(
    "make",
    [
        lambda: [Custom(tool_name="mine"), letta_rules.ContinueToolRule(tool_name="k")],
        lambda: [Custom(tool_name="")],
        lambda: [Custom(tool_name="int"), letta_rules.TerminalToolRule(tool_name="t")],
        lambda: [Silent(tool_name="s", children=["a"]), letta_rules.ParentToolRule(tool_name="p", children=["a", "b"])],
        lambda: [letta_rules.TerminalToolRule.model_construct()],
        lambda: [letta_rules.InitToolRule.model_construct()],
        lambda: [letta_rules.ChildToolRule.model_construct(tool_name="q", children=["a", 1])],
        lambda: [
            letta_rules.MaxCountPerStepToolRule(tool_name="m", max_count_limit=2),
            letta_rules.InitToolRule(tool_name="i"),
        ],
        lambda: [letta_rules.ConditionalToolRule(tool_name="c", child_output_mapping={True: "a"})],
    ],
)
def test_letta_objects_edge_cases(make):
    assert reference_outcome(make()) == letta_outcome(make())
