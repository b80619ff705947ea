"""A scripted conversation with a ``letta_v1_agent`` through a real ``letta server`` and our mock LLM.

The LLM reports a context past the window twice, so Letta compacts (summary from the mock) and forces a
rebuild of message[0]. Checked: the system messages the LLM receives are identical to stock's in ``render``
and ``rebuild`` modes (same hash seed; agent id and times aside); in ``stable`` mode message[0] is kept byte
for byte across both compactions and a memory call that changes nothing, where stock rewrites it, and it
changes exactly when the memory does.
"""

from __future__ import annotations

from letta_process import LOGS, TIME, LettaServer, assert_every_worker_patched, client, conversation_agent
from mock_llm import MockLLM

#: (turn index) the turns right after each compaction, and right after the memory call that changes nothing.
AFTER_COMPACTION = (3, 8)
AFTER_NO_OP = 5


def _conversation(server: LettaServer, mock: MockLLM) -> tuple[list[str], list[str], str]:
    """(system message of every step, of the first step of each turn, agent id)."""
    letta = client(server)
    agent = conversation_agent(letta, "conversation", mock.url)
    start = len(mock.log)
    turn_starts = []

    def steps() -> list[str]:
        return [e["system"] for e in mock.log[start:] if e["kind"] == "step"]

    def send(text: str) -> None:
        turn_starts.append(len(steps()))
        letta.agents.messages.create(agent.id, messages=[{"role": "user", "content": text}])

    mock.say("Hello, Ada!")
    send("Hi, I am Ada.")  # 0
    mock.call("memory_insert", label="human", new_string="Likes tea.", insert_line=-1)
    mock.say("Noted: tea.")
    send("I like tea.")  # 1
    mock.say("You like tea.", overflow=True)
    send("What do I like?")  # 2, then a compaction
    mock.say("Yes.")
    send("Right?")  # 3
    mock.call("memory_replace", label="human", old_string="Likes tea.", new_string="Likes tea.")
    mock.say("Nothing new.")
    send("Remember that I like tea.")  # 4
    mock.say("Sure.")
    send("Thanks.")  # 5
    mock.call("memory_insert", label="human", new_string="Prefers green tea.", insert_line=-1)
    mock.say("Green tea it is.")
    send("Green tea is best.")  # 6
    mock.say("Green tea.", overflow=True)
    send("What do I prefer?")  # 7, then a compaction
    mock.say("Goodbye!")
    send("Bye.")  # 8
    assert not mock.script, "the agent took fewer steps than scripted"
    every = steps()
    summaries = [e for e in mock.log[start:] if e["kind"] == "summary"]
    assert len(summaries) == 2, "Letta did not compact twice"
    return every, [every[i] for i in turn_starts], agent.id


def _normalised(texts: list[str], agent_id: str) -> list[str]:
    return [TIME.sub("<time>", text.replace(agent_id, "<agent>")) for text in texts]


def test_conversation_prompts_stock_and_every_mode(database):
    uri, config_dir, _ = database
    runs = {}
    with MockLLM() as mock:
        for mode in (None, "render", "rebuild", "stable"):
            name = mode or "stock"
            with LettaServer(uri, config_dir, mode, LOGS / f"mp-e2e-conversation-{name}.log") as server:
                if mode is not None:
                    assert_every_worker_patched(server, mode)
                runs[name] = _conversation(server, mock)
    stock_steps, stock_turns, stock_agent = runs["stock"]
    for mode in ("render", "rebuild"):
        steps, _, agent_id = runs[mode]
        assert _normalised(steps, agent_id) == _normalised(stock_steps, stock_agent), (
            f"{mode}: prompts differ from stock"
        )
    _, turns, _ = runs["stable"]
    for after in AFTER_COMPACTION:
        assert stock_turns[after] != stock_turns[after - 1], "stock kept message[0] across a compaction"
        assert turns[after] == turns[after - 1], "stable mode rewrote message[0] at a compaction"
    assert turns[AFTER_NO_OP] == turns[AFTER_NO_OP - 1]
    # Exactly three message[0]s: the first, with tea, with green tea (each built when the memory changed).
    assert len(dict.fromkeys(turns)) == 3
    assert "Likes tea." in turns[2] and "Prefers green tea." in turns[7]
