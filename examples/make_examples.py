"""Write the example agent files, one per rendering mode, each with a current message[0].

    python examples/make_examples.py

Every agent, block, file and message here is invented for memprompt. Each
file's stored system message is compiled by memprompt itself, stamped at a
fixed time, so the files are reproducible and ``memprompt check examples``
reports every agent current.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memprompt.agentfile import loads

HERE = Path(__file__).resolve().parent
CREATED = "2025-06-02T09:30:00+00:00"
BUILT = datetime(2025, 6, 2, 9, 30, tzinfo=timezone.utc)

EMBEDDING = {
    "embedding_endpoint_type": "openai",
    "embedding_endpoint": "https://api.openai.com/v1",
    "embedding_model": "text-embedding-3-small",
    "embedding_dim": 1536,
    "embedding_chunk_size": 300,
    "handle": "openai/text-embedding-3-small",
}


def llm(endpoint: str, model: str, context_window: int) -> dict[str, Any]:
    urls = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com/v1"}
    return {
        "model": model,
        "model_endpoint_type": endpoint,
        "model_endpoint": urls[endpoint],
        "context_window": context_window,
        "put_inner_thoughts_in_kwargs": False,
        "handle": f"{endpoint}/{model}",
        "temperature": 0.7,
        "max_tokens": None,
    }


def block(
    i: int, label: str, value: str, description: str | None = None, limit: int = 5000, read_only: bool = False
) -> dict[str, Any]:
    return {
        "id": f"block-{i}",
        "label": label,
        "value": value,
        "description": description,
        "limit": limit,
        "read_only": read_only,
        "is_template": False,
        "template_name": None,
        "preserve_on_migration": False,
        "metadata": {},
    }


def tool(i: int, name: str, description: str, parameters: dict[str, str]) -> dict[str, Any]:
    args = ", ".join(f"{p}: str" for p in parameters)
    return {
        "id": f"tool-{i}",
        "name": name,
        "description": description,
        "tool_type": "custom",
        "source_type": "python",
        "source_code": f'def {name}({args}) -> str:\n    """{description}"""\n    return "ok"\n',
        "json_schema": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string", "description": d} for p, d in parameters.items()},
                "required": list(parameters),
            },
        },
        "tags": [],
        "return_char_limit": 6000,
    }


def message(i: int, role: str, text: str, minute: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"message-{i}",
        "role": role,
        "content": [{"type": "text", "text": text}],
        "agent_id": "agent-0",
        "model": None,
        "tool_calls": None,
        "tool_call_id": None,
        "tool_returns": [],
        "created_at": f"2025-06-02T09:{minute:02d}:00+00:00",
    }


def agent_file(
    name: str,
    description: str,
    system: str,
    llm_config: dict[str, Any],
    blocks: list[dict[str, Any]],
    *,
    timezone_name: str = "UTC",
    tags: tuple[str, ...] = (),
    tools: tuple[dict[str, Any], ...] = (),
    tool_rules: tuple[dict[str, Any], ...] = (),
    sources: tuple[dict[str, Any], ...] = (),
    files: tuple[dict[str, Any], ...] = (),
    files_agents: tuple[dict[str, Any], ...] = (),
    max_files_open: int = 5,
    view_window: int = 15000,
    conversation: tuple[tuple[str, str], ...] = (),
    evicted: int = 0,
) -> dict[str, Any]:
    """A v2 agent file with one agent; message-0 (its system message) is filled in by ``build``.

    The first ``evicted`` messages of ``conversation`` are out of context.
    """
    messages = [message(0, "system", "", 0)]
    messages += [message(i, role, text, i) for i, (role, text) in enumerate(conversation, 1)]
    in_context = [m["id"] for i, m in enumerate(messages) if i == 0 or i > evicted]
    agent = {
        "id": "agent-0",
        "name": name,
        "description": description,
        "agent_type": "letta_v1_agent",
        "system": system,
        "llm_config": llm_config,
        "embedding_config": EMBEDDING,
        "tags": list(tags),
        "block_ids": [b["id"] for b in blocks],
        "tool_ids": [t["id"] for t in tools],
        "tool_rules": list(tool_rules),
        "source_ids": [s["id"] for s in sources],
        "files_agents": list(files_agents),
        "timezone": timezone_name,
        "max_files_open": max_files_open,
        "per_file_view_window_char_limit": view_window,
        "message_buffer_autoclear": False,
        "in_context_message_ids": in_context,
        "messages": messages,
        "group_ids": [],
    }
    return {
        "agents": [agent],
        "groups": [],
        "blocks": blocks,
        "files": list(files),
        "sources": list(sources),
        "tools": list(tools),
        "mcp_servers": [],
        "skills": [],
        "metadata": {"revision_id": "memprompt-example"},
        "created_at": CREATED,
    }


def plain() -> dict[str, Any]:
    """Standard <memory_blocks>; the template places {CORE_MEMORY} mid-prompt; one message is out of context."""
    return agent_file(
        "juniper",
        "A kitchen-garden helper (standard memory blocks).",
        "You are Juniper, a patient helper for small kitchen gardens.\n\n"
        "{CORE_MEMORY}\n\n"
        "Answer in short paragraphs. Suggest one task at a time.",
        llm("openai", "gpt-4.1-mini", 128000),
        [
            block(
                0,
                "persona",
                "I am Juniper. I like compost, cold frames and honest soil tests.",
                "Who I am and how I talk.",
            ),
            block(
                1,
                "human",
                "Name: Ines\nPlot: two raised beds, partial shade\nZone: 7a",
                "What I know about the gardener.",
            ),
            block(
                2,
                "planting_calendar",
                "March: peas, spinach\nApril: lettuce, radish\nMay: beans, squash",
                "A fixed calendar for the gardener's zone.",
                limit=2000,
                read_only=True,
            ),
        ],
        timezone_name="America/Denver",
        conversation=(
            ("user", "Hi Juniper, the peas are up!"),
            ("assistant", "Wonderful. Give them something to climb this week."),
            ("user", "What should go in next?"),
        ),
        evicted=1,
    )


def line_numbered() -> dict[str, Any]:
    """A letta_v1_agent on an Anthropic endpoint: blocks rendered with line numbers."""
    return agent_file(
        "atlas",
        "A rail-trip planner (line-numbered memory blocks).",
        "You are Atlas. You plan unhurried rail journeys and keep the itinerary in memory.",
        llm("anthropic", "claude-sonnet-4-5", 200000),
        [
            block(
                0,
                "persona",
                "I am Atlas.\nI prefer night trains to flights.\nI always check connection times twice.",
                "My character.",
            ),
            block(1, "human", "Traveller: Tomás\nFrom: Lisboa → Zürich\nBudget: moderate", "The traveller."),
            block(
                2,
                "itinerary",
                "Day 1: Lisboa – Hendaye (Sud Express)\nDay 2: Hendaye – Paris\nDay 3: Paris – Zürich (TGV Lyria)\n",
                "The current plan, one line per day.",
                limit=3000,
            ),
            block(3, "scratchpad", "", "Working notes; empty between trips.", limit=1000),
        ],
        timezone_name="Europe/Lisbon",
        conversation=(("user", "Can we add a day in Bordeaux?"),),
    )


def git_memory() -> dict[str, Any]:
    """A git-memory agent: <self> from system/persona, nested system/ blocks, skills/ skipped, an external tree."""
    return agent_file(
        "quill",
        "A writing coach whose memory is a git repository (git memory).",
        "You are Quill, a writing coach. Your memory lives in files; edit them with care.",
        llm("anthropic", "claude-sonnet-4-5", 200000),
        [
            block(0, "system/persona", "I am Quill. I ask what a paragraph is for before I fix it.\n", "Who I am."),
            block(1, "system/human", "Writer: Oda\nWorking on: a field guide to city birds", "The writer."),
            block(2, "system/project", "Field guide, 12 chapters, due in October.", "The project in one line."),
            block(3, "system/project/outline", "1. Pigeons\n2. Sparrows\n3. Crows and their cousins", "Chapter order."),
            block(4, "system/project/style/voice", "Warm, exact, no exclamation marks.", "House style."),
            block(
                5,
                "skills/proofreading",
                "Read aloud. Check every number against the source.",
                "A proofreading routine.",
            ),
            block(6, "notes/drafts/chapter-1", "Pigeons are cliff dwellers who found the city cliffs.", None),
            block(7, "notes/ideas", "A sidebar on how crows recognise faces.", None),
            block(8, "reference/glossary", "Corvid: the crow family.\nPasserine: perching birds.", None),
        ],
        tags=("git-memory-enabled", "example"),
        conversation=(("user", "Let's start chapter two."), ("assistant", "Sparrows it is.")),
    )


def sources() -> dict[str, Any]:
    """An attached source: one open file (clipped to the view window) and one closed file."""
    budget_lines = [
        f"{month}: rent 950, groceries {300 + 7 * i}, transit 60"
        for i, month in enumerate(
            (
                "January",
                "February",
                "March",
                "April",
                "May",
                "June",
                "July",
                "August",
                "September",
                "October",
                "November",
                "December",
            )
        )
    ]
    budget = "\n".join(["# Household budget 2025", *budget_lines])
    budget_view = "[Viewing file start (out of 13 lines)]\n" + "\n".join(
        f"{n}: {line}" for n, line in enumerate(budget.splitlines(), 1)
    )
    warranties = "item,expires\nwasher,2026-03\nlaptop,2025-11\n"
    folder = "household-docs"
    return agent_file(
        "ledger",
        "A household bookkeeping helper with an attached folder (sources and files).",
        "You are Ledger. You help a household keep its accounts tidy, using the documents in your folder.",
        llm("openai", "gpt-4.1-mini", 128000),
        [
            block(0, "persona", "I am Ledger: careful with numbers, plain with words.", "My character."),
            block(1, "human", "Household: the Okafors\nCurrency: EUR", "The household."),
        ],
        sources=(
            {
                "id": "source-0",
                "name": folder,
                "description": "Budgets and receipts of the household.",
                "instructions": "Quote the file and line when you cite a number.",
                "metadata": {},
                "embedding_config": EMBEDDING,
            },
        ),
        files=(
            {
                "id": "file-0",
                "source_id": "source-0",
                "file_name": f"{folder}/budget-2025.md",
                "original_file_name": "budget-2025.md",
                "file_type": "text/markdown",
                "file_size": len(budget),
                "processing_status": "completed",
                "total_chunks": 2,
                "chunks_embedded": 2,
                "content": budget,
            },
            {
                "id": "file-1",
                "source_id": "source-0",
                "file_name": f"{folder}/warranties.csv",
                "original_file_name": "warranties.csv",
                "file_type": "text/csv",
                "file_size": len(warranties),
                "processing_status": "completed",
                "total_chunks": 1,
                "chunks_embedded": 1,
                "content": warranties,
            },
        ),
        files_agents=(
            {
                "id": "file_agent-0",
                "agent_id": "agent-0",
                "file_id": "file-0",
                "source_id": "source-0",
                "file_name": f"{folder}/budget-2025.md",
                "is_open": True,
                "visible_content": budget_view,
                "last_accessed_at": CREATED,
            },
            {
                "id": "file_agent-1",
                "agent_id": "agent-0",
                "file_id": "file-1",
                "source_id": "source-0",
                "file_name": f"{folder}/warranties.csv",
                "is_open": False,
                "visible_content": None,
                "last_accessed_at": CREATED,
            },
        ),
        max_files_open=3,
        view_window=400,
        conversation=(("user", "How much did groceries cost in March?"),),
    )


def tool_rules() -> dict[str, Any]:
    """Several kinds of tool rule, compiled into <tool_usage_rules>."""
    tools = (
        tool(0, "lookup_order", "Look up an order.", {"order_id": "The order id."}),
        tool(1, "classify_ticket", "Classify a support ticket.", {"text": "The ticket text."}),
        tool(2, "check_refund", "Tell whether an order can be refunded.", {"order_id": "The order id."}),
        tool(3, "issue_refund", "Refund an order.", {"order_id": "The order id."}),
        tool(4, "send_reply", "Reply to the customer.", {"message": "The reply."}),
        tool(5, "escalate", "Hand the ticket to a person.", {"reason": "Why."}),
        tool(6, "close_ticket", "Close the ticket.", {"summary": "A one-line summary."}),
    )
    return agent_file(
        "relay",
        "A support-desk triage agent (tool rules).",
        "You are Relay. You triage support tickets for a small bicycle shop.",
        llm("openai", "gpt-4.1-mini", 128000),
        [
            block(0, "persona", "I am Relay: brief, polite, and I never guess an order status.", "My character."),
            block(
                1,
                "policies",
                "Refunds within 30 days.\nEscalate anything about injuries.",
                "Shop policies.",
                read_only=True,
            ),
        ],
        tools=tools,
        tool_rules=(
            {"type": "run_first", "tool_name": "lookup_order"},
            {"type": "continue_loop", "tool_name": "lookup_order"},
            {"type": "max_count_per_step", "tool_name": "lookup_order", "max_count_limit": 2},
            {
                "type": "constrain_child_tools",
                "tool_name": "classify_ticket",
                "children": ["check_refund", "escalate", "send_reply"],
            },
            {
                "type": "conditional",
                "tool_name": "check_refund",
                "default_child": "send_reply",
                "child_output_mapping": {"True": "issue_refund", "False": "send_reply"},
                "require_output_mapping": False,
            },
            {"type": "parent_last_tool", "tool_name": "check_refund", "children": ["issue_refund"]},
            {"type": "requires_approval", "tool_name": "issue_refund"},
            {"type": "required_before_exit", "tool_name": "send_reply"},
            {"type": "exit_loop", "tool_name": "close_ticket"},
            {"type": "exit_loop", "tool_name": "escalate"},
        ),
        conversation=(("user", "My order #1042 arrived with a bent wheel."),),
    )


EXAMPLES = {
    "plain": plain,
    "line_numbered": line_numbered,
    "git_memory": git_memory,
    "sources": sources,
    "tool_rules": tool_rules,
}


def build(doc: dict[str, Any], name: str) -> str:
    """The file's JSON, with message-0 set to the system message memprompt compiles for its agent."""
    (agent,) = loads(json.dumps(doc), name).agents
    doc["agents"][0]["messages"][0]["content"][0]["text"] = agent.compile_system_message(BUILT)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    for name, make in EXAMPLES.items():
        path = HERE / f"{name}.af"
        path.write_text(build(make(), path.name), encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
