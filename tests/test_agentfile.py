"""Loading agent files: the 12 real files, the v1 format, double-encoded JSON, and clear errors."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import memprompt
from memprompt.agentfile import Agent, AgentFileError, load, loads

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
METADATA_START = "\n\n<memory_metadata>"

# file: [(agent name, blocks, git memory, tool rules, file blocks, sources, max_files_open)]
SHARED = {
    "co-3.af": [("co-3", 29, False, 10, 0, 0, 5)],
    "customer_service.af": [("customer_service", 2, False, 0, 0, 0, 5)],
    "deep_research_agent.af": [("deep-thought-research-agent", 4, False, 0, 0, 0, 10)],
    "evie.af": [("Evie", 12, False, 1, 0, 0, 5), ("companion-sleeptime_copy", 13, False, 4, 0, 0, 5)],
    "ezra.af": [("ezra-super", 21, True, 0, 0, 0, 5)],
    "lettabot-builder.af": [
        ("lettabot-builder", 9, False, 0, 0, 0, 10),
        ("Nameless Agent-sleeptime", 10, False, 4, 0, 0, 10),
    ],
    "lettabot.af": [("LettaBot", 11, False, 0, 0, 0, 10)],
    "loop.af": [("Loop", 9, False, 0, 0, 0, 10)],
    "memgpt_agent.af": [("memgpt_agent", 2, False, 0, 0, 0, 5)],
    "memgpt_agent_with_convo.af": [("memgpt_agent", 2, False, 0, 0, 0, 5)],
    "outreach_workflow_agent.af": [("outreach_workflow_agent", 0, False, 5, 0, 0, 5)],
    "void.af": [("void", 24, False, 17, 1, 1, 5)],
}
DOUBLE_ENCODED = {"customer_service.af", "memgpt_agent.af", "outreach_workflow_agent.af"}


def raw(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_bytes())
    return json.loads(doc) if isinstance(doc, str) else doc


# -- the real agent files ----------------------------------------------------------


def test_the_shared_folder_holds_the_expected_files(agentfiles: Path) -> None:
    assert sorted(p.name for p in agentfiles.glob("*.af")) == sorted(SHARED)


@pytest.mark.parametrize("name", sorted(SHARED))
def test_every_shared_agent_file_loads(agentfiles: Path, name: str) -> None:
    agent_file = load(agentfiles / name)
    assert agent_file.format == "v2"
    assert agent_file.double_encoded == (name in DOUBLE_ENCODED)
    facts = [
        (a.name, len(a.blocks), a.git_enabled, len(a.tool_rules), len(a.file_blocks), len(a.sources), a.max_files_open)
        for a in agent_file.agents
    ]
    assert facts == SHARED[name]
    for agent in agent_file.agents:
        assert agent.file == str(agentfiles / name)
        assert agent.timezone == "UTC"
        assert agent.previous_message_count == 0
        if agent.stored_system_message is not None:
            assert agent.stored_system_message.startswith(agent.system)
            assert METADATA_START in agent.stored_system_message


@pytest.mark.parametrize("name", sorted(SHARED))
def test_blocks_follow_block_ids(agentfiles: Path, name: str) -> None:
    doc = raw(agentfiles / name)
    by_id = {b["id"]: b for b in doc["blocks"]}
    for agent, spec in zip(load(agentfiles / name).agents, doc["agents"], strict=True):
        expected = [by_id[i] for i in spec["block_ids"]]
        assert [b.label for b in agent.blocks] == [b["label"] for b in expected]
        assert [b.value for b in agent.blocks] == [b["value"] for b in expected]
        assert [(b.limit, b.read_only, b.description) for b in agent.blocks] == [
            (b["limit"], b["read_only"], b["description"]) for b in expected
        ]


def test_agent_fields(agentfiles: Path) -> None:
    (co3,) = load(agentfiles / "co-3.af").agents
    assert (co3.id, co3.agent_type, co3.llm_config.model_endpoint_type) == ("agent-0", "letta_v1_agent", "anthropic")
    assert all(rule["type"] == "continue_loop" for rule in co3.tool_rules)
    (void,) = load(agentfiles / "void.af").agents
    assert (void.agent_type, void.llm_config.model_endpoint_type) == ("memgpt_agent", "google_ai")
    (outreach,) = load(agentfiles / "outreach_workflow_agent.af").agents
    assert [r["type"] for r in outreach.tool_rules] == [
        "run_first",
        "constrain_child_tools",
        "conditional",
        "exit_loop",
        "exit_loop",
    ]


def test_git_memory_comes_from_the_tag(agentfiles: Path) -> None:
    (ezra,) = load(agentfiles / "ezra.af").agents
    assert ezra.git_enabled and ezra.memory().git_enabled
    assert any(b.label == "system/persona" for b in ezra.blocks)


def test_an_agent_without_messages_has_no_stored_system_message(agentfiles: Path) -> None:
    (ezra,) = load(agentfiles / "ezra.af").agents
    assert ezra.stored_system_message is None
    assert (ezra.message_count, ezra.in_context_message_count) == (0, 0)


def test_message_counts(agentfiles: Path) -> None:
    builder, sleeptime = load(agentfiles / "lettabot-builder.af").agents
    assert (builder.message_count, builder.in_context_message_count) == (3, 3)
    assert (sleeptime.message_count, sleeptime.in_context_message_count) == (188, 188)


def test_an_open_file_becomes_a_clipped_file_block(agentfiles: Path) -> None:
    (void,) = load(agentfiles / "void.af").agents
    assert [(s.id, s.name, s.description, s.instructions) for s in void.sources] == [
        ("source-0", "folder-1765842590288", None, None)
    ]
    (file_block,) = void.file_blocks
    assert file_block.label == "folder-1765842590288/social-ai-transcript.md"
    assert (file_block.source_id, file_block.read_only, file_block.limit) == ("source-0", True, 15000)
    # The stored view (59,652 characters) is clipped to the agent's 15,000-character window.
    mark = "...[TRUNCATED]\n# NOTE: This block is truncated, use functions to view the full content."
    visible = raw(agentfiles / "void.af")["agents"][0]["files_agents"][0]["visible_content"]
    assert file_block.value == visible[: 15000 - len(mark)] + mark
    assert '<file status="open" name="folder-1765842590288/social-ai-transcript.md">' in void.compile_memory()


#: The real agents whose stored message[0] is what letta 0.16.8 builds now (the others were stored by older Letta releases): (file, agent name).
CURRENT_AGENTS = [
    ("customer_service.af", "customer_service"),
    ("lettabot-builder.af", "lettabot-builder"),
    ("lettabot-builder.af", "Nameless Agent-sleeptime"),
    ("lettabot.af", "LettaBot"),
    ("memgpt_agent.af", "memgpt_agent"),
    ("memgpt_agent_with_convo.af", "memgpt_agent"),
]


@pytest.mark.parametrize(("file", "name"), CURRENT_AGENTS)
def test_current_agents_compile_to_their_stored_memory_section(agentfiles: Path, file: str, name: str) -> None:
    agent = load(agentfiles / file).select(name)
    stored = agent.stored_system_message
    assert stored is not None and stored.startswith(agent.system + "\n\n")
    assert agent.compile_memory() == stored[len(agent.system) + 2 : stored.rindex(METADATA_START)]
    assert not memprompt.needs_rebuild(agent.system, agent.compile_memory(), stored)


def test_select_by_name_then_index(agentfiles: Path) -> None:
    agent_file = load(agentfiles / "lettabot-builder.af")
    assert agent_file.select("Nameless Agent-sleeptime") is agent_file.agents[1]
    assert agent_file.select("0") is agent_file.agents[0]
    assert agent_file.select("1") is agent_file.agents[1]
    with pytest.raises(LookupError, match=r"no agent named '2' .*'lettabot-builder', 'Nameless Agent-sleeptime'"):
        agent_file.select("2")


# -- formats -----------------------------------------------------------------------


def v2_doc() -> dict[str, Any]:
    """A small invented v2 file whose top-level blocks are not in the agent's block order."""
    return {
        "agents": [
            {
                "id": "agent-0",
                "name": "wren",
                "agent_type": "memgpt_v2_agent",
                "system": "You are Wren.",
                "llm_config": {"model": "m", "model_endpoint_type": "openai", "context_window": 8000},
                "tags": ["birds"],
                "block_ids": ["block-b", "block-a"],
                "tool_rules": [{"type": "exit_loop", "tool_name": "send_message"}],
                "source_ids": [],
                "messages": [
                    {"id": "message-1", "role": "system", "content": [{"type": "text", "text": "stored text"}]},
                    {"id": "message-2", "role": "user", "content": "hello"},
                ],
                "in_context_message_ids": ["message-1"],
            }
        ],
        "blocks": [
            {"id": "block-a", "label": "human", "value": "Pat\x00.", "limit": 300},
            {"id": "block-b", "label": "persona", "value": None, "read_only": True, "description": "me"},
        ],
        "files": [],
        "sources": [],
        "tools": [],
        "groups": [],
        "mcp_servers": [],
    }


def test_v2_defaults_and_order() -> None:
    agent_file = loads(json.dumps(v2_doc()), "wren.af")
    (agent,) = agent_file.agents
    assert (agent_file.file, agent_file.format, agent_file.double_encoded) == ("wren.af", "v2", False)
    assert [(b.label, b.value, b.limit, b.read_only, b.description) for b in agent.blocks] == [
        ("persona", "", 100000, True, "me"),  # a null value is stored as "", the default limit is 100,000
        ("human", "Pat.", 300, False, None),  # Letta strips NUL characters from block values
    ]
    assert (agent.timezone, agent.git_enabled, agent.max_files_open) == ("UTC", False, 3)  # 3 files for an 8K window
    assert agent.stored_system_message == "stored text"
    assert agent.previous_message_count == 1
    assert agent.tool_rules == [{"type": "exit_loop", "tool_name": "send_message"}]


def test_folder_ids_take_precedence_over_source_ids() -> None:
    doc = v2_doc()
    doc["sources"] = [{"id": "source-0", "name": "old"}, {"id": "source-1", "name": "new", "instructions": "read me"}]
    doc["agents"][0].update(source_ids=["source-0"], folder_ids=["source-1"])
    (agent,) = loads(json.dumps(doc)).agents
    assert [(s.id, s.name, s.instructions) for s in agent.sources] == [("source-1", "new", "read me")]


def test_closed_and_short_files() -> None:
    doc = v2_doc()
    doc["sources"] = [{"id": "source-0", "name": "docs"}]
    doc["files"] = [{"id": "file-0"}, {"id": "file-1"}]
    doc["agents"][0].update(
        source_ids=["source-0"],
        per_file_view_window_char_limit=100,
        files_agents=[
            {
                "file_id": "file-0",
                "source_id": "source-0",
                "file_name": "docs/a.txt",
                "is_open": True,
                "visible_content": "short",
            },
            {
                "file_id": "file-1",
                "source_id": "source-0",
                "file_name": "docs/b.txt",
                "is_open": False,
                "visible_content": "hidden",
            },
        ],
    )
    (agent,) = loads(json.dumps(doc)).agents
    assert [(f.label, f.value, f.limit) for f in agent.file_blocks] == [
        ("docs/a.txt", "short", 100),
        ("docs/b.txt", "", 100),
    ]
    memory = agent.compile_memory()
    assert '<file status="open" name="docs/a.txt">' in memory and '<file status="closed" name="docs/b.txt">' in memory


def summary(agent: Agent) -> tuple[Any, ...]:
    return (
        agent.name,
        agent.system,
        agent.blocks,
        agent.tool_rules,
        agent.stored_system_message,
        agent.compile_memory(),
    )


def test_double_encoded_json_loads_like_the_plain_json() -> None:
    plain = loads(json.dumps(v2_doc()))
    wrapped = loads(json.dumps(json.dumps(v2_doc())))
    assert wrapped.double_encoded and not plain.double_encoded
    assert [summary(a) for a in wrapped.agents] == [summary(a) for a in plain.agents]


def v1_doc() -> dict[str, Any]:
    """An invented legacy (v1) agent file."""
    return {
        "agent_type": "memgpt_agent",
        "name": "heron",
        "system": "You are Heron, a patient fishing guide.",
        "llm_config": {"model": "m", "model_endpoint_type": "openai", "context_window": 200001},
        "embedding_config": {},
        "core_memory": [
            {"label": "persona", "value": "I am Heron.", "limit": 5000, "description": None},
            {"label": "human", "value": "Angler: Sam", "limit": 5000, "description": "the angler", "read_only": True},
        ],
        "tags": [{"tag": "fishing"}, {"tag": "git-memory-enabled"}],
        "tool_rules": [{"tool_name": "send_message", "type": "exit_loop"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "an old message"}]},
            {"role": "system", "content": [{"type": "text", "text": "the system message"}]},
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        ],
        "in_context_message_indices": [1, 2],
        "version": "0.6.0",
    }


def test_v1_agent_file() -> None:
    agent_file = loads(json.dumps(v1_doc()), "heron.af")
    assert (agent_file.format, agent_file.double_encoded) == ("v1", False)
    (agent,) = agent_file.agents
    assert (agent.id, agent.name, agent.agent_type, agent.timezone) == ("agent-0", "heron", "memgpt_agent", "UTC")
    assert [(b.label, b.value, b.read_only, b.description) for b in agent.blocks] == [
        ("persona", "I am Heron.", False, None),
        ("human", "Angler: Sam", True, "the angler"),
    ]
    assert agent.git_enabled
    assert agent.stored_system_message == "the system message"
    assert (agent.message_count, agent.in_context_message_count, agent.previous_message_count) == (3, 2, 1)
    assert (agent.sources, agent.file_blocks, agent.max_files_open) == ([], [], 15)  # 15 files beyond a 200K window
    assert agent.tool_rules == [{"tool_name": "send_message", "type": "exit_loop"}]
    wrapped = loads(json.dumps(json.dumps(v1_doc())))
    assert wrapped.double_encoded and [summary(a) for a in wrapped.agents] == [summary(agent)]


def test_compile_system_message_uses_the_agent_and_now() -> None:
    (agent,) = loads(json.dumps(v2_doc())).agents
    now = datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
    expected = memprompt.get_system_message_from_compiled_memory(
        agent.system, agent.compile_memory(), "agent-0", now, "UTC", previous_message_count=1
    )
    assert agent.compile_system_message(now) == expected
    assert "2025-03-04 05:06:07 AM UTC+0000" in expected
    assert agent.compile_memory() == agent.memory().compile(
        tool_usage_rules=memprompt.compile_tool_rule_prompts(agent.tool_rules),
        sources=[],
        max_files_open=3,
        llm_config=agent.llm_config,
    )


# -- the examples --------------------------------------------------------------------


def make_examples() -> Any:
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["plain", "line_numbered", "git_memory", "sources", "tool_rules"])
def test_examples_are_current_and_reproducible(name: str) -> None:
    module = make_examples()
    path = EXAMPLES / f"{name}.af"
    assert path.read_text(encoding="utf-8") == module.build(module.EXAMPLES[name](), path.name)
    (agent,) = load(path).agents
    assert agent.stored_system_message == agent.compile_system_message(module.BUILT)


def test_examples_cover_each_mode() -> None:
    agents: dict[str, Agent] = {p.stem: load(p).agents[0] for p in EXAMPLES.glob("*.af")}
    assert sorted(agents) == ["git_memory", "line_numbered", "plain", "sources", "tool_rules"]
    assert "{CORE_MEMORY}" in agents["plain"].system
    assert "1→ " in agents["line_numbered"].compile_memory()
    git = agents["git_memory"]
    assert git.git_enabled and {"system/persona", "system/human", "system/project/style/voice"} <= {
        b.label for b in git.blocks
    }
    assert any(b.label.startswith("skills/") for b in git.blocks) and "<external_projection>" in git.compile_memory()
    sources = agents["sources"].compile_memory()
    assert '<file status="open"' in sources and '<file status="closed"' in sources and "...[TRUNCATED]" in sources
    assert len({rule["type"] for rule in agents["tool_rules"].tool_rules}) >= 6
    assert "<tool_usage_rules>" in agents["tool_rules"].compile_memory()


# -- malformed files -----------------------------------------------------------------


def broken(edit: Any) -> str:
    doc = copy.deepcopy(v2_doc())
    edit(doc)
    return json.dumps(doc)


def agent0(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["agents"][0]


MALFORMED: dict[str, tuple[str | bytes, str]] = {
    "not json": ('{"agents": [', "bad.af: not valid JSON (Expecting value at line 1, column 13)"),
    "bad json in a string": (
        json.dumps('{"agents": '),
        "bad.af: a JSON string whose content is not valid JSON (Expecting value at line 1, column 12)",
    ),
    "not utf-8": (b'{"name": "\xff"}', "bad.af: not UTF-8 text (invalid start byte at byte 10)"),
    "an array": ("[]", "bad.af: expected a JSON object, got array"),
    "no format": ('{"name": "x"}', "bad.af: not an agent file: no 'agents' list (v2) and no 'core_memory' (v1)"),
    "unknown block": (
        broken(lambda d: agent0(d)["block_ids"].append("block-123")),
        "bad.af: agents[0].block_ids[2]: no block with id 'block-123'",
    ),
    "block id not a string": (
        broken(lambda d: agent0(d)["block_ids"].append(7)),
        "bad.af: agents[0].block_ids[2]: expected string, got integer",
    ),
    "block without label": (broken(lambda d: d["blocks"][1].pop("label")), "bad.af: blocks[1].label: missing"),
    "block label null": (
        broken(lambda d: d["blocks"][0].update(label=None)),
        "bad.af: blocks[0].label: expected string, got null",
    ),
    "limit as a string": (
        broken(lambda d: d["blocks"][0].update(limit="300")),
        "bad.af: blocks[0].limit: expected integer, got string",
    ),
    "read_only as a number": (
        broken(lambda d: d["blocks"][0].update(read_only=1)),
        "bad.af: blocks[0].read_only: expected boolean, got integer",
    ),
    "block without id": (broken(lambda d: d["blocks"][0].pop("id")), "bad.af: blocks[0].id: missing"),
    "blocks not a list": (broken(lambda d: d.update(blocks={})), "bad.af: blocks: expected array, got object"),
    "agent not an object": (
        broken(lambda d: d["agents"].append("wren")),
        "bad.af: agents[1]: expected object, got string",
    ),
    "no system": (broken(lambda d: agent0(d).pop("system")), "bad.af: agents[0].system: missing"),
    "no llm_config": (broken(lambda d: agent0(d).pop("llm_config")), "bad.af: agents[0].llm_config: missing"),
    "no endpoint type": (
        broken(lambda d: agent0(d)["llm_config"].pop("model_endpoint_type")),
        "bad.af: agents[0].llm_config.model_endpoint_type: missing",
    ),
    "unknown agent type": (
        broken(lambda d: agent0(d).update(agent_type="robot")),
        "bad.af: agents[0].agent_type: unknown agent type 'robot'",
    ),
    "tag not a string": (
        broken(lambda d: agent0(d)["tags"].append(3)),
        "bad.af: agents[0].tags[1]: expected string, got integer",
    ),
    "rule not an object": (
        broken(lambda d: agent0(d)["tool_rules"].append("exit")),
        "bad.af: agents[0].tool_rules[1]: expected object, got string",
    ),
    "unknown source": (
        broken(lambda d: agent0(d).update(source_ids=["source-9"])),
        "bad.af: agents[0].source_ids[0]: no source with id 'source-9'",
    ),
    "unknown file": (
        broken(
            lambda d: agent0(d).update(
                files_agents=[{"file_id": "file-9", "source_id": "s", "file_name": "f", "is_open": True}]
            )
        ),
        "bad.af: agents[0].files_agents[0].file_id: no file with id 'file-9'",
    ),
    "unknown message": (
        broken(lambda d: agent0(d).update(in_context_message_ids=["message-9"])),
        "bad.af: agents[0].in_context_message_ids[0]: no message with id 'message-9'",
    ),
    "empty content": (
        broken(lambda d: agent0(d)["messages"][0].update(content=[])),
        "bad.af: agents[0].messages[0].content: empty: a stored system message needs a text part",
    ),
    "content part without text": (
        broken(lambda d: agent0(d)["messages"][0].update(content=[{"type": "image"}])),
        "bad.af: agents[0].messages[0].content[0].text: missing",
    ),
    "v1 index out of range": (
        json.dumps({**v1_doc(), "in_context_message_indices": [5]}),
        "bad.af: in_context_message_indices[0]: no message at index 5 (3 messages)",
    ),
    "v1 tag not an object": (
        json.dumps({**v1_doc(), "tags": ["fishing"]}),
        "bad.af: tags[0]: expected object, got string",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_name_the_file_and_key(tmp_path: Path, case: str) -> None:
    data, message = MALFORMED[case]
    path = tmp_path / "bad.af"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(AgentFileError) as error:
        load(str(path))
    assert isinstance(error.value, ValueError)
    assert str(error.value) == message.replace("bad.af", str(path), 1)
    assert error.value.file == str(path)


def test_a_missing_file_raises_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nowhere.af")


DEEP = 100_000

MALFORMED_SHAPES = {
    "arrays nested 100,000 deep": "[" * DEEP + "]" * DEEP,
    "objects nested 100,000 deep": '{"a":' * DEEP + "1" + "}" * DEEP,
    "deep inside an agent": '{"agents": [{"name": "a", "tool_rules": ' + "[" * DEEP + "]" * DEEP + "}]}",
    "deep inside a JSON string": json.dumps("[" * DEEP + "]" * DEEP),
    "unclosed arrays 100,000 deep": "[" * DEEP,
    "empty": "",
    "not UTF-8": "\udcff",
    "a bare number": "1" * 10_000,
}


@pytest.mark.parametrize("shape", MALFORMED_SHAPES)
def test_a_malformed_file_of_any_shape_is_one_error_naming_the_file(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "bad.af"
    path.write_bytes(MALFORMED_SHAPES[shape].encode("utf-8", "surrogateescape"))
    with pytest.raises(AgentFileError) as error:
        load(path)
    assert str(error.value).startswith(f"{path}: ") and "\n" not in str(error.value)
    result = subprocess.run(
        [sys.executable, "-m", "memprompt", "compile", str(path)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"memprompt: error: {error.value}\n"
