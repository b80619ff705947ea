"""``GET /v1/agents/{id}/context`` on a git-memory agent through a real ``letta server`` and ``letta-client``:
stock Letta counts none of git memory's ``<self>`` and ``<memory>``; under memprompt (``rebuild``) the
overview's sections of message[0] are exact and their counts add up to the count of the whole message.

letta-client 1.7.12 has no method for the endpoint (Letta marks it deprecated): the client's own ``get``.
The agent's messages and tools are counted as stock counts them.
"""

from __future__ import annotations

import math

from letta_process import EMBEDDING, LLM, LOGS, TIME, LettaServer, assert_every_worker_patched, client

from memprompt.letta.context import TOKENS_OF

TOKEN_FIELDS = tuple(TOKENS_OF.values())


def _git_agent(letta) -> str:
    """A git-memory agent: a persona and a human under system/, an external file and a skill.

    Without a memfs service Letta strips the tag at creation (and puts every block it creates under system/):
    set afterwards, it makes the memory git memory; blocks attached afterwards keep their labels."""
    agent = letta.agents.create(
        name="context-git",
        agent_type="memgpt_v2_agent",
        memory_blocks=[
            {"label": "persona", "value": "I am Sam, a helpful assistant."},
            {"label": "human", "value": "Name: Ada.\n</memory_blocks>"},
        ],
        llm_config=LLM,
        embedding_config=EMBEDDING,
        include_base_tools=True,
        tags=["git-memory-enabled"],
    )
    letta.agents.update(agent.id, tags=["git-memory-enabled"])
    for label, value in (("notes/todo", "Buy tea."), ("skills/search/SKILL", "Search the web.")):
        block = letta.blocks.create(label=label, value=value, description=f"the {label} file")
        letta.agents.blocks.attach(block.id, agent_id=agent.id)
    return agent.id


def _context(server: LettaServer, agent_id: str) -> tuple[dict, str]:
    """The overview, and the text of its message[0]."""
    overview = client(server).get(f"/v1/agents/{agent_id}/context", cast_to=object)
    (part,) = overview["messages"][0]["content"]
    return overview, part["text"]


def _approx_tokens(text: str) -> int:
    """Letta's ApproxTokenCounter (what an OpenAI-compatible agent is counted with): UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def test_git_memory_context_window_stock_and_memprompt(database):
    uri, config_dir, _ = database
    with LettaServer(uri, config_dir, None, LOGS / "mp-e2e-context-stock.log") as server:
        agent_id = _git_agent(client(server))
        stock, stock_text = _context(server, agent_id)
    with LettaServer(uri, config_dir, "rebuild", LOGS / "mp-e2e-context-rebuild.log") as server:
        assert_every_worker_patched(server, "rebuild")
        mine, text = _context(server, agent_id)
    assert "<self>" in text and "<external_projection>" in text
    assert TIME.sub("<time>", text) == TIME.sub("<time>", stock_text)
    # Stock finds no core memory in git memory: the sections' counts fall short of the message's.
    stock_sum = sum(stock[name] for name in TOKEN_FIELDS)
    assert stock["core_memory"] == "" and stock_sum < _approx_tokens(stock_text) - 40
    # memprompt: <self> and <memory> (after their reminder line), and the counts add up.
    start = text.index("Reminder: <projection>")
    assert mine["core_memory"] == text[start : text.index("</memory>", start) + len("</memory>")]
    assert mine["system_prompt"] == text[: start - 4]
    assert mine["external_memory_summary"] == text[text.rindex("<memory_metadata>") :]
    assert sum(mine[name] for name in TOKEN_FIELDS) == _approx_tokens(text)
    for name in ("num_messages", "num_tokens_messages", "num_tokens_functions_definitions", "context_window_size_max"):
        assert mine[name] == stock[name], name
    others = mine["num_tokens_messages"] + mine["num_tokens_functions_definitions"] + mine["num_tokens_summary_memory"]
    assert mine["context_window_size_current"] == _approx_tokens(text) + others
