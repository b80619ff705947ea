"""The ``memprompt`` command: compile agent files, and check their stored system messages.

``main(argv)`` returns the exit status instead of exiting, so the command can
be run in-process; the console script and ``python -m memprompt`` exit with it.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO, TypeAlias

from . import LETTA_VERSION, __version__, message_sections, needs_rebuild, stored_memory_section
from .agentfile import Agent, AgentFileError, load

# Exit statuses.
OK, STALE, ERROR = 0, 1, 2

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CommandError(Exception):
    """A failure to report as one line on stderr, with exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error that argparse has printed
        return e.code if isinstance(e.code, int) else ERROR
    try:
        status: int = args.run(args)
        return status
    except BrokenPipeError:
        # The reader went away (`memprompt check DIR | head`): stop quietly.
        _discard_stdout()
        return ERROR
    except (CommandError, AgentFileError) as e:
        _error(str(e))
    except OSError as e:
        _error(_os_error_text(e))
    return ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memprompt",
        description=f"Compile Letta {LETTA_VERSION} system prompts from agent files (.af), byte for byte.",
        epilog=(
            "examples:\n  memprompt compile examples/plain.af\n  memprompt check examples\n  memprompt COMMAND --help"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memprompt {__version__} (Letta {LETTA_VERSION})")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_command in COMMANDS:
        add_command(commands)
    return parser


# -- compile ---------------------------------------------------------------------


def add_compile(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "compile",
        help="print an agent's compiled memory section or system message",
        description=(
            "Print the memory section that Letta compiles for an agent of FILE, or (--section system) the whole\n"
            "system message that Letta writes when it rebuilds the agent's message[0]. Its <memory_metadata>\n"
            "counts the file's messages that are out of context as previous messages, 0 archival memories\n"
            "(an agent file holds none), and is stamped with --now.\n"
            "\n"
            "The text is written as UTF-8, exactly: a newline is added only when stdout is a terminal."
        ),
        epilog=(
            "examples:\n"
            "  memprompt compile examples/plain.af\n"
            "  memprompt compile examples/sources.af --section system --now 2025-01-01T12:00:00Z\n"
            "  memprompt compile team.af --agent 1 --section system\n"
            "  memprompt compile team.af --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE.af", help="an agent file (v1 or v2)")
    parser.add_argument(
        "--agent",
        metavar="NAME|INDEX",
        help="the agent to compile, by name or 0-based index (needed when FILE has several agents, except with --json)",
    )
    parser.add_argument(
        "--section",
        choices=("memory", "system"),
        default="memory",
        help="the memory section (default) or the whole system message",
    )
    parser.add_argument(
        "--now",
        metavar="ISO-8601",
        type=_timestamp,
        help="the time the system message is stamped with (default: now; a time without an offset is UTC)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per line per agent: name, memory, fingerprint (XXH3-128 of memory, in hex), "
        "memory_sections ({name: [start, end]} in memory), system_message, system_message_sections "
        "([{name, start, end}] in system_message, in order); offsets are in code points",
    )
    parser.set_defaults(run=run_compile)


def run_compile(args: argparse.Namespace) -> int:
    agent_file = load(args.file)
    try:
        agents = [agent_file.select(args.agent)] if args.agent is not None else agent_file.agents
    except LookupError as e:
        raise CommandError(str(e)) from None
    if not agents:
        raise CommandError(f"{args.file}: the file has no agents")
    if len(agents) > 1 and not args.json:
        names = ", ".join(f"{i}: {agent.name!r}" for i, agent in enumerate(agents))
        raise CommandError(f"{args.file}: the file has {len(agents)} agents ({names}); choose one with --agent")
    now = args.now or datetime.now(timezone.utc)
    if args.json:
        for agent in agents:
            with _compiling(agent):
                memory = agent.compile_memory_with_fingerprint()
                system_message = agent.compile_system_message(now)
                sections = message_sections(agent.system, memory, system_message)
                record = {
                    "name": agent.name,
                    "memory": memory.text,
                    "fingerprint": f"{memory.fingerprint:032x}",
                    "memory_sections": {name: list(span) for name, span in memory.sections.items()},
                    "system_message": system_message,
                    "system_message_sections": [{"name": s.name, "start": s.start, "end": s.end} for s in sections],
                }
            _emit(json.dumps(record))
        return OK
    (agent,) = agents
    with _compiling(agent):
        text = agent.compile_memory() if args.section == "memory" else agent.compile_system_message(now)
    # The exact text, for pipes and files; a terminal also gets a final newline.
    _emit(text, newline=sys.stdout.isatty())
    return OK


# -- check -----------------------------------------------------------------------


def add_check(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "check",
        help="tell whether each agent's stored system message is current",
        description=(
            "For every agent of every agent file, tell whether its stored system message (message[0]) is\n"
            "current (its template and memory section equal what compiles now: Letta would keep it), stale\n"
            "(Letta must rebuild it), or absent (the file stores no message). Only the memory metadata\n"
            "(timestamp and counts) may differ in a current message.\n"
            "\n"
            "exit status: 0 when no agent is stale, 1 when any is, 2 on an error (one line on stderr)."
        ),
        epilog=(
            "examples:\n  memprompt check examples\n  memprompt check agent.af --diff\n  memprompt check agents/ --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="FILE.af|DIR",
        help="agent files, or directories searched for *.af files (recursively)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="show a unified diff (stored, compiled now) of each stale memory section",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per line per agent: file, name, status, reason (and diff with --diff)",
    )
    parser.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    files = list(_agent_files(args.paths))
    progress = _Progress(sys.stderr, len(files))
    counts = {"current": 0, "stale": 0, "absent": 0}
    errors = 0
    for number, file in enumerate(files, 1):
        progress.show(number, file)
        error: str | None
        try:
            results = [(agent, *_check(agent)) for agent in load(file).agents]
        except (AgentFileError, CommandError) as e:
            results, error = [], str(e)
        except OSError as e:
            results, error = [], _os_error_text(e)
        else:
            error = None
        progress.clear()
        if error is not None:
            errors += 1
            _error(error)
        for agent, status, reason, diff in results:
            counts[status] += 1
            if args.json:
                record: dict[str, Any] = {"file": file, "name": agent.name, "status": status, "reason": reason}
                if args.diff and status == "stale":
                    record["diff"] = diff
                _emit(json.dumps(record))
            else:
                _emit(f"{file}: {agent.name}: {status}" + (f" ({reason})" if reason else ""))
                if args.diff and status == "stale":
                    _emit(diff)
    if not args.json:
        agents = sum(counts.values())
        _emit(
            f"{agents} agent{'s' * (agents != 1)} in {len(files)} file{'s' * (len(files) != 1)}: "
            + ", ".join(f"{n} {status}" for status, n in counts.items())
            + (f"; {errors} file{'s' * (errors != 1)} could not be read" if errors else "")
        )
    if errors:
        return ERROR
    return STALE if counts["stale"] else OK


def _check(agent: Agent) -> tuple[str, str | None, str]:
    """The agent's status, the reason it is stale, and the diff (stored, compiled now) that shows why."""
    with _compiling(agent):
        memory = agent.compile_memory()
    stored = agent.stored_system_message
    if stored is None:
        return "absent", None, ""
    decision = needs_rebuild(agent.system, memory, stored)
    if not decision:
        return "current", None, ""
    label = f"{agent.file}: {agent.name}"
    stored_memory = stored_memory_section(agent.system, stored)
    if stored_memory is None:
        # The template does not frame the stored message: compare whole messages.
        with _compiling(agent):
            after = agent.compile_system_message()
        before, what = stored, "system message"
    else:
        before, after, what = stored_memory, memory, "memory section"
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=f"{label}: stored {what}",
        tofile=f"{label}: {what} compiled now",
        lineterm="",
    )
    return "stale", decision.reason, "\n".join(lines)


def _agent_files(paths: Sequence[str]) -> Iterator[str]:
    for path in paths:
        if Path(path).is_dir():
            found = sorted(str(p) for p in Path(path).rglob("*.af") if p.is_file())
            if not found:
                raise CommandError(f"{path}: no .af files in this directory")
            yield from found
        else:
            yield path


class _Progress:
    """``[3/12] file.af`` on one self-erasing line of stderr, when stderr is a terminal and there are several files."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.active = total > 1 and stream.isatty()

    def show(self, number: int, file: str) -> None:
        if self.active:
            self.stream.write(f"\r\x1b[K[{number}/{self.total}] {file}")
            self.stream.flush()

    def clear(self) -> None:
        if self.active:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# -- bench -----------------------------------------------------------------------


def add_bench(commands: Subcommands) -> None:
    from . import bench

    parser = commands.add_parser(
        "bench",
        help="time memprompt against the reference and letta 0.16.8; write REPORT.md and chart.png",
        description=(
            "Run the benchmark suite shipped with memprompt (pytest-benchmark; pip install 'memprompt[bench]'), from\n"
            "any folder. Every case runs memprompt, the pure-Python reference, letta 0.16.8 when it is importable\n"
            "(else its column is absent), and two floors (copying the output, decoding its UTF-8 bytes) on the same\n"
            "input, and checks that their outputs are equal; --agents adds each agent of your agent files (its memory\n"
            "section and its whole system message). Then it measures the peak memory of one call, and writes\n"
            "DIR/bench.json, DIR/memory.json, DIR/REPORT.md (medians, ratios, goals met or missed) and DIR/chart.png.\n"
            "\n"
            "exit status: 0 on success, 2 when an agent file cannot be read, a benchmark fails or the suite cannot run."
        ),
        epilog=(
            "examples:\n"
            "  memprompt bench --quick\n"
            "  memprompt bench --quick --agents my_agent.af team.af --out /tmp/bench\n"
            "  memprompt bench --report-only --out docs/bench"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_arguments(parser)
    parser.set_defaults(run=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    from . import bench

    # Each agent file is read and compiled here first: a bad one gets `compile`'s one-line error.
    for file in args.agents:
        for agent in load(file).agents:
            with _compiling(agent):
                agent.compile_system_message()
    try:
        return bench.run(args)
    except bench.BenchError as e:
        raise CommandError(str(e)) from e


# -- run -------------------------------------------------------------------------


def add_run(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "run",
        help="run a command (e.g. `letta server`) with memprompt installed in every Python process it starts",
        description=(
            f"Run COMMAND with MEMPROMPT_LETTA=MODE in its environment: every Python process it starts from this\n"
            f"environment, and their children (uvicorn and granian workers), installs memprompt into Letta\n"
            f"{LETTA_VERSION} as soon as Letta is imported. Modes: render (renderers only), rebuild (exact and\n"
            "cheaper rebuild decisions, batched fan-out), stable (as rebuild; a forced refresh keeps message[0]\n"
            "unless its memory or template changed; blocks in label order), deferred (as stable; an agent's own\n"
            "memory-tool edit waits for the next compaction, reset, recompile or outside edit, or for more than\n"
            "$MEMPROMPT_DEFERRED_EDITS edits, default 10).\n"
            "\n"
            "exit status: COMMAND's (the command replaces this process)."
        ),
        epilog="examples:\n  memprompt run -- letta server\n  memprompt run --mode stable -- letta server --port 8283",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--mode", choices=("render", "rebuild", "stable", "deferred"), default="rebuild", help="default: rebuild"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")
    parser.set_defaults(run=run_command)


def run_command(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise CommandError("run: no COMMAND given (memprompt run [--mode MODE] -- COMMAND [ARG...])")
    from .letta.autoinstall import VARIABLE

    environment = {**os.environ, VARIABLE: args.mode}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(command[0], command, environment)
    except OSError as e:
        raise CommandError(f"run: cannot run {command[0]!r}: {e.strerror}") from e
    return ERROR  # not reached: execvpe replaced this process


# -- shared ----------------------------------------------------------------------


#: One function per subcommand, in the order of ``memprompt --help``; each adds its
#: parser to the subcommands and sets ``run``, which returns the exit status.
COMMANDS: tuple[Callable[[Subcommands], None], ...] = (add_compile, add_check, add_bench, add_run)


@contextmanager
def _compiling(agent: Agent) -> Iterator[None]:
    """Report what the compiler rejects in an agent (a tool rule, a timezone) as a one-line error."""
    try:
        yield
    except (ValueError, TypeError, LookupError, RecursionError, MemoryError) as e:
        raise CommandError(f"{agent.file}: {agent.name}: cannot compile ({type(e).__name__}: {e})") from e


def _timestamp(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 time: {text!r} (e.g. 2025-01-01T12:00:00Z)") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _emit(text: str, newline: bool = True) -> None:
    """Write ``text`` to stdout as UTF-8, lone surrogates included (as the fingerprint encodes them)."""
    if newline:
        text += "\n"
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "surrogatepass"))
    buffer.flush()


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit does not fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _os_error_text(error: OSError) -> str:
    return f"{error.filename}: {error.strerror}" if error.filename and error.strerror else str(error)


def _error(message: str) -> None:
    print(f"memprompt: error: {message}", file=sys.stderr)
