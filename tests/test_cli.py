"""The ``memprompt`` command, run in-process through ``memprompt.cli.main`` (and once as a subprocess)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memprompt
from memprompt.agentfile import load
from memprompt.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
METADATA_START = "\n\n<memory_metadata>"

# The 14 agents of the 12 shared files: (file, agent name) -> status.
SHARED_STATUS = {
    ("co-3.af", "co-3"): "stale",
    ("customer_service.af", "customer_service"): "current",
    ("deep_research_agent.af", "deep-thought-research-agent"): "stale",
    ("evie.af", "Evie"): "stale",
    ("evie.af", "companion-sleeptime_copy"): "stale",
    ("ezra.af", "ezra-super"): "absent",
    ("lettabot-builder.af", "lettabot-builder"): "current",
    ("lettabot-builder.af", "Nameless Agent-sleeptime"): "current",
    ("lettabot.af", "LettaBot"): "current",
    ("loop.af", "Loop"): "stale",
    ("memgpt_agent.af", "memgpt_agent"): "current",
    ("memgpt_agent_with_convo.af", "memgpt_agent"): "current",
    ("outreach_workflow_agent.af", "outreach_workflow_agent"): "stale",
    ("void.af", "void"): "stale",
}
CURRENT = sorted(key for key, status in SHARED_STATUS.items() if status == "current")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memprompt: error: "), err
    return lines[0].removeprefix("memprompt: error: ")


# -- check ---------------------------------------------------------------------------


def test_check_the_shared_agent_files(capsys: pytest.CaptureFixture[str], agentfiles: Path) -> None:
    status, out, err = run(capsys, "check", "--json", str(agentfiles))
    assert (status, err) == (1, "")
    records = [json.loads(line) for line in out.splitlines()]
    assert {(Path(r["file"]).name, r["name"]): r["status"] for r in records} == SHARED_STATUS
    assert len(records) == 14
    assert all(r["reason"] is None for r in records if r["status"] != "stale")
    assert all(r["reason"] for r in records if r["status"] == "stale")


def test_check_text_output(capsys: pytest.CaptureFixture[str], agentfiles: Path) -> None:
    status, out, _ = run(capsys, "check", str(agentfiles))
    lines = out.splitlines()
    assert status == 1
    assert f"{agentfiles / 'ezra.af'}: ezra-super: absent" in lines
    assert f"{agentfiles / 'lettabot.af'}: LettaBot: current" in lines
    assert any(line.startswith(f"{agentfiles / 'void.af'}: void: stale (") for line in lines)
    assert lines[-1] == "14 agents in 12 files: 6 current, 7 stale, 1 absent"


@pytest.mark.parametrize(("file", "name"), CURRENT)
def test_compile_memory_equals_the_stored_memory_section(
    capsys: pytest.CaptureFixture[str], agentfiles: Path, file: str, name: str
) -> None:
    status, out, err = run(capsys, "compile", str(agentfiles / file), "--agent", name, "--section", "memory")
    assert (status, err) == (0, "")
    agent = load(agentfiles / file).select(name)
    stored = agent.stored_system_message
    assert stored is not None and stored.startswith(agent.system + "\n\n")
    assert out == stored[len(agent.system) + 2 : stored.rindex(METADATA_START)]


def test_check_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "check", str(EXAMPLES))
    assert (status, err) == (0, "")
    assert out.splitlines()[-1] == "5 agents in 5 files: 5 current, 0 stale, 0 absent"


def edited_example(tmp_path: Path, name: str, edit: dict[str, str]) -> Path:
    """A copy of an example whose block or agent fields were changed after its message[0] was built."""
    doc = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for key, value in edit.items():
        target, field = key.split(".")
        obj = doc["blocks"][0] if target == "block" else doc["agents"][0]
        obj[field] = value
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_check_diff_shows_the_memory_section_change(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edited_example(tmp_path, "plain.af", {"block.value": "I am Juniper. I now prefer hedgerows."})
    status, out, _ = run(capsys, "check", "--diff", str(path))
    assert status == 1
    assert out.startswith(f"{path}: juniper: stale (")
    assert f"--- {path}: juniper: stored memory section\n+++ {path}: juniper: memory section compiled now\n" in out
    assert "\n-I am Juniper. I like compost, cold frames and honest soil tests.\n" in out
    assert "\n+I am Juniper. I now prefer hedgerows.\n" in out
    assert "\n-- chars_current=64\n+- chars_current=37\n" in out


def test_check_diff_compares_whole_messages_when_the_template_changed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = edited_example(tmp_path, "line_numbered.af", {"agent.system": "You are Atlas, now by sea."})
    status, out, _ = run(capsys, "check", "--diff", "--json", str(path))
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert (status, record["status"]) == (1, "stale")
    assert "stored system message" in record["diff"]
    assert "\n-You are Atlas. You plan unhurried rail journeys and keep the itinerary in memory.\n" in record["diff"]
    assert "\n+You are Atlas, now by sea.\n" in record["diff"]


def test_check_an_agent_without_a_stored_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = json.loads((EXAMPLES / "tool_rules.af").read_text(encoding="utf-8"))
    doc["agents"][0].update(messages=[], in_context_message_ids=[])
    path = tmp_path / "fresh.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    status, out, _ = run(capsys, "check", str(path))
    assert status == 0
    assert out.splitlines()[0] == f"{path}: relay: absent"


def test_check_continues_after_a_broken_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "plain.af", tmp_path / "a.af")
    (tmp_path / "b.af").write_text('{"agents": [{"name": "x"}]}', encoding="utf-8")
    status, out, err = run(capsys, "check", str(tmp_path))
    assert status == 2
    assert one_error_line(err) == f"{tmp_path / 'b.af'}: agents[0].llm_config: missing"
    assert out.splitlines() == [
        f"{tmp_path / 'a.af'}: juniper: current",
        "1 agent in 2 files: 1 current, 0 stale, 0 absent; 1 file could not be read",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "{tmp}/missing.af"], "{tmp}/missing.af: No such file or directory"),
        (["check", "{tmp}"], "{tmp}: no .af files in this directory"),
        (["compile", "{tmp}/missing.af"], "{tmp}/missing.af: No such file or directory"),
    ],
)
def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str) -> None:
    status, _, err = run(capsys, *(arg.format(tmp=tmp_path) for arg in argv))
    assert status == 2
    assert one_error_line(err) == message.format(tmp=tmp_path)


def test_progress_on_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["check", str(EXAMPLES)]) == 0
    shown = terminal.getvalue()
    assert "\r\x1b[K[1/5] " in shown and "\r\x1b[K[5/5] " in shown
    assert shown.endswith("\r\x1b[K")


def test_no_progress_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "check", str(EXAMPLES))
    assert err == ""


# -- compile -------------------------------------------------------------------------


def test_compile_system_message_at_a_fixed_time(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "compile", str(EXAMPLES / "plain.af"), "--section", "system", "--now", "2025-06-02T09:30:00Z"
    )
    assert status == 0
    # The example's message[0] was built at that time: the output is that message, exactly.
    assert out == load(EXAMPLES / "plain.af").agents[0].stored_system_message
    assert "- System prompt last recompiled: 2025-06-02 03:30:00 AM MDT-0600\n" in out
    assert "- 1 previous messages between you and the user are stored in recall memory\n" in out


def test_compile_now_without_an_offset_is_utc(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(
        capsys, "compile", str(EXAMPLES / "tool_rules.af"), "--section", "system", "--now", "2030-12-31T23:59:59"
    )
    assert "- System prompt last recompiled: 2030-12-31 11:59:59 PM UTC+0000\n" in out


def test_compile_defaults_to_the_memory_section(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "compile", str(EXAMPLES / "git_memory.af"))
    assert out == load(EXAMPLES / "git_memory.af").agents[0].compile_memory()
    assert out.startswith("\n\nReminder: <projection>")


def test_compile_json(capsys: pytest.CaptureFixture[str], agentfiles: Path) -> None:
    status, out, _ = run(
        capsys, "compile", "--json", "--now", "2026-02-03T04:05:06+00:00", str(agentfiles / "lettabot-builder.af")
    )
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert [r["name"] for r in records] == ["lettabot-builder", "Nameless Agent-sleeptime"]
    for record, agent in zip(records, load(agentfiles / "lettabot-builder.af").agents, strict=True):
        assert sorted(record) == [
            "fingerprint",
            "memory",
            "memory_sections",
            "name",
            "system_message",
            "system_message_sections",
        ]
        assert record["memory"] == agent.compile_memory()
        compiled = agent.compile_memory_with_fingerprint()
        assert record["memory_sections"] == {name: list(span) for name, span in compiled.sections.items()}
        sections = memprompt.message_sections(agent.system, compiled, record["system_message"])
        assert record["system_message_sections"] == [{"name": s.name, "start": s.start, "end": s.end} for s in sections]
        rules = ["tool_usage_rules"] if agent.tool_usage_rules() is not None else []
        names = ["system_prompt", "memory_blocks", *rules, "memory_metadata"]
        assert [s["name"] for s in record["system_message_sections"]] == names
        assert record["fingerprint"] == f"{memprompt.fingerprint(record['memory']):032x}"
        assert len(record["fingerprint"]) == 32
        assert record["system_message"].startswith(agent.system + "\n\n" + record["memory"] + METADATA_START)
        assert "- System prompt last recompiled: 2026-02-03 04:05:06 AM UTC+0000\n" in record["system_message"]


def test_compile_picks_an_agent_by_name_or_index(capsys: pytest.CaptureFixture[str], agentfiles: Path) -> None:
    path = str(agentfiles / "lettabot-builder.af")
    _, by_index, _ = run(capsys, "compile", path, "--agent", "1")
    _, by_name, _ = run(capsys, "compile", path, "--agent", "Nameless Agent-sleeptime")
    assert by_index == by_name == load(path).agents[1].compile_memory()


def test_compile_needs_an_agent_when_there_are_several(capsys: pytest.CaptureFixture[str], agentfiles: Path) -> None:
    path = agentfiles / "lettabot-builder.af"
    status, out, err = run(capsys, "compile", str(path))
    assert (status, out) == (2, "")
    assert one_error_line(err) == (
        f"{path}: the file has 2 agents (0: 'lettabot-builder', 1: 'Nameless Agent-sleeptime'); choose one with --agent"
    )
    status, _, err = run(capsys, "compile", str(path), "--agent", "nobody")
    assert status == 2 and "no agent named 'nobody'" in one_error_line(err)


def test_compile_a_malformed_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = json.loads((EXAMPLES / "plain.af").read_text(encoding="utf-8"))
    doc["agents"][0]["block_ids"].append("block-123")
    path = tmp_path / "broken.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    status, out, err = run(capsys, "compile", str(path))
    assert (status, out) == (2, "")
    assert one_error_line(err) == f"{path}: agents[0].block_ids[3]: no block with id 'block-123'"


def test_compile_reports_what_the_compiler_rejects(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edited_example(tmp_path, "plain.af", {"agent.timezone": "Mars/Olympus_Mons"})
    status, _, err = run(capsys, "compile", str(path), "--section", "system")
    assert status == 2
    assert one_error_line(err).startswith(f"{path}: juniper: cannot compile (UnknownTimeZoneError: ")


def test_a_bad_now_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "compile", str(EXAMPLES / "plain.af"), "--now", "yesterday")
    assert status == 2
    assert "not an ISO-8601 time: 'yesterday'" in err


# -- help ----------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["compile", "--help"], ["check", "--help"]])
def test_help_has_examples(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, out, _ = run(capsys, *argv)
    assert status == 0
    assert "examples:\n  memprompt " in out


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys)
    assert status == 2 and "usage: memprompt" in err


def test_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memprompt", "check", str(EXAMPLES)], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1] == "5 agents in 5 files: 5 current, 0 stale, 0 absent"


def test_lone_surrogates_are_written_as_the_fingerprint_encodes_them(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    path = edited_example(tmp_path, "plain.af", {"block.value": "half a pair: \ud800"})
    assert main(["compile", str(path)]) == 0
    out = capsysbinary.readouterr().out
    assert out == load(path).agents[0].compile_memory().encode("utf-8", "surrogatepass")
    assert main(["check", "--diff", str(path)]) == 1
    assert "+half a pair: \ud800\n".encode("utf-8", "surrogatepass") in capsysbinary.readouterr().out
