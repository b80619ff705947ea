"""The fuzz corpus, replayed through Python (README, Guarantees: "No panic").

``fuzz/run.sh`` drives the pure-Rust renderers with coverage-guided inputs and checks
that nothing panics; it cannot call Python. ``fuzz/run.sh export`` writes each committed
corpus input (``fuzz/corpus/<target>/``) as JSON (``fuzz/replay/<target>.jsonl.gz``), with
the pure-Rust outcome. Here every such input goes through memprompt's Python API and
the pure-Python reference: the three must agree (the same string, or the same
exception type; the pure-Rust string is recorded as its length and fingerprint).
Texts are stored as the hex of their surrogatepass UTF-8, so lone surrogates come
back exactly.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest
from outcome import outcome

import memprompt as mp
from memprompt import reference as ref
from memprompt.reference import tool_rules as ref_rules
from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
TARGETS = ("compile", "git_memory", "skills", "tree_view", "prompt", "tool_rules")


def text(hex_text: str | None) -> str | None:
    return None if hex_text is None else bytes.fromhex(hex_text).decode("utf-8", "surrogatepass")


def entries(target: str) -> list[dict]:
    path = FUZZ / "replay" / f"{target}.jsonl.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="ascii") as lines:
        return [json.loads(line) for line in lines if line.strip()]


CASES = [
    pytest.param(target, entry["case"], id=f"{target}-{entry['file'][:10]}")
    for target in TARGETS
    for entry in entries(target)
    if entry["case"] is not None
]


@pytest.mark.parametrize("target", TARGETS)
def test_the_export_is_up_to_date(target):
    """Every committed corpus file is in the export (run `fuzz/run.sh export` after changing the corpus)."""
    corpus = {p.name for p in (FUZZ / "corpus" / target).glob("*") if p.is_file()}
    exported = {entry["file"] for entry in entries(target)}
    assert corpus, f"fuzz/corpus/{target}/ is empty"
    assert exported == corpus


def blocks(data) -> list[Block]:
    return [Block(text(b["value"]), text(b["label"]), text(b["description"]), b["limit"], b["read_only"]) for b in data]


def check(rust, reference, expected):
    """memprompt and the reference agree; so does the pure-Rust outcome recorded by the export."""
    assert rust == reference
    if expected is None:
        return
    if "ok" in expected:
        assert rust[0] == "ok" and len(rust[1].encode("utf-8", "surrogatepass")) == expected["length"]
        assert mp.fingerprint(rust[1]) == int(expected["ok"], 16)
    else:
        assert rust[0] == "raised" and rust[1].__name__ == expected["error"]


def replay_compile(case):
    files = [
        FileBlock(
            text(f["value"]), text(f["label"]), text(f["description"]), f["limit"], f["read_only"], text(f["source_id"])
        )
        for f in case["file_blocks"]
    ]
    sources = [
        Source(text(s["id"]), text(s["name"]), text(s["description"]), text(s["instructions"])) for s in case["sources"]
    ]
    rules = case["tool_usage_rules"]
    memory_kwargs = {
        "blocks": blocks(case["blocks"]),
        "file_blocks": files,
        "agent_type": case["agent_type"],
        "git_enabled": case["git_enabled"],
    }
    compile_kwargs = {
        "tool_usage_rules": None if rules is None else ToolUsageRules(text(rules["description"]), text(rules["value"])),
        "sources": sources,
        "max_files_open": case["max_files_open"],
        "llm_config": LLMConfig("anthropic") if case["anthropic"] else None,
    }
    rust = outcome(lambda: mp.Memory(**memory_kwargs).compile(**compile_kwargs))
    check(rust, outcome(lambda: ref.Memory(**memory_kwargs).compile(**compile_kwargs)), case["expected"])
    if rust[0] == "ok":
        compiled = mp.Memory(**memory_kwargs).compile_with_fingerprint(**compile_kwargs)
        assert compiled.text == rust[1] and compiled.fingerprint == mp.fingerprint(rust[1])
        assert compiled.sections == ref.Memory(**memory_kwargs).compile_with_fingerprint(**compile_kwargs).sections
        assert mp.compile_many([mp.Memory(**memory_kwargs)] * 3, **compile_kwargs) == [rust[1]] * 3


def replay_git_memory(case):
    memory_blocks = blocks(case["blocks"])
    rust = outcome(lambda: mp.Memory(memory_blocks, git_enabled=True).compile())
    check(rust, outcome(lambda: ref.Memory(memory_blocks, git_enabled=True).compile()), case["expected"])


def replay_skills(case):
    memory_blocks = blocks(case["blocks"])
    skills = [ClientSkill(text(s["name"]), text(s["description"]), text(s["location"])) for s in case["client_skills"]]
    rust = outcome(lambda: mp.Memory(memory_blocks).compile_available_skills(skills))
    check(rust, outcome(lambda: ref.Memory(memory_blocks).compile_available_skills(skills)), case["expected"])


def replay_tree_view(case):
    memory_blocks = blocks(case["blocks"])
    skills = [ClientSkill("client")] if case["has_client_skills"] else None
    rust = outcome(lambda: mp.Memory(memory_blocks).render_memory_filesystem(skills))
    check(rust, outcome(lambda: ref.Memory(memory_blocks).render_memory_filesystem(skills)), case["expected"])


VARIABLES = {"x": "X!", "a": "{a}", "CORE_MEMORY": "M"}


def replay_prompt(case):
    when = dt.datetime(*case["when"], tzinfo=dt.timezone.utc if case["utc"] else None)
    template, memory = text(case["template"]), text(case["memory"])
    tags = case["archive_tags"]
    kwargs = {
        "append_icm_if_missing": case["append"],
        "previous_message_count": text(case["previous_message_count"]),
        "archival_memory_size": case["archival_memory_size"],
        "archive_tags": None if tags is None else [text(t) for t in tags],
        "conversation_id": text(case["conversation_id"]),
    }
    args = (template, memory, text(case["agent_id"]), when, case["timezone"])
    rust = outcome(lambda: mp.get_system_message_from_compiled_memory(*args, **kwargs))
    check(rust, outcome(lambda: ref.get_system_message_from_compiled_memory(*args, **kwargs)), case["expected"])
    if rust[0] == "ok":
        assert mp.stored_memory_section(template, rust[1]) == text(case["expected_stored"])
    assert mp.stored_memory_section(template, text(case["message"])) == text(case["expected_raw_stored"])
    formatted = outcome(lambda: mp.safe_format(template, VARIABLES))
    assert formatted == outcome(lambda: ref.safe_format(template, VARIABLES))
    if case["expected_safe_format"] is not None:
        assert formatted == ("ok", text(case["expected_safe_format"]))


def replay_tool_rules(case):
    rules = []
    for r in case["rules"]:
        rule = {key: (text(value) if key == "tool_name" else value) for key, value in r.items()}
        if "children" in rule:
            rule["children"] = [text(c) for c in rule["children"]]
        if rule["type"] == "conditional":
            rule["child_output_mapping"] = {"out": "next_tool"}
        rules.append(rule)

    def pair(block):
        return None if block is None else (block.description, block.value)

    rust = outcome(lambda: pair(mp.compile_tool_rule_prompts(rules)))
    reference = outcome(lambda: pair(ref_rules.compile_tool_rule_prompts(rules)))
    assert rust == reference
    if rust[0] == "ok":  # the Python side validates the rules as Letta does; the pure-Rust side never refuses one
        expected = case["expected"]
        assert rust[1] == (None if expected is None else (text(expected[0]), text(expected[1])))


REPLAY = {
    "compile": replay_compile,
    "git_memory": replay_git_memory,
    "skills": replay_skills,
    "tree_view": replay_tree_view,
    "prompt": replay_prompt,
    "tool_rules": replay_tool_rules,
}


@pytest.mark.parametrize(("target", "case"), CASES)
def test_corpus_input_renders_as_the_reference(target, case):
    REPLAY[target](case)
