"""Load Letta agent files (.af) into memprompt inputs.

An agent file is JSON in one of two layouts:

- v2 (current): top-level ``agents``, ``blocks``, ``files``, ``sources``,
  ``tools``, ``groups``, ``mcp_servers``, ...; each agent names its blocks,
  sources and files by the ids used inside the file.
- v1 (legacy, one agent): the agent's fields at the top level, its blocks
  inline in ``core_memory``, its in-context messages as
  ``in_context_message_indices``.

Either may be encoded a second time as a JSON string, as Letta accepts.

Each agent becomes an :class:`Agent` holding what Letta 0.16.8 would hold
for it after import: its blocks in ``block_ids`` order, its attached sources,
its files as file blocks (clipped to the per-file view window as the server
clips them), its tool rules, and the text of its stored system message.

Anything malformed raises :class:`AgentFileError`, whose message names the
file and the key path: ``ezra.af: agents[0].block_ids[2]: no block with id 'block-123'``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, NoReturn

from . import compile_tool_rule_prompts, get_system_message_from_compiled_memory
from .memory import Memory
from .types import DEFAULT_BLOCK_LIMIT, Block, Compiled, FileBlock, LLMConfig, Source, ToolUsageRules

__all__ = ["Agent", "AgentFile", "AgentFileError", "load", "loads"]

#: The tag that turns on git-style memory rendering for an agent.
GIT_MEMORY_TAG = "git-memory-enabled"

#: Letta's agent types (letta.schemas.enums.AgentType in 0.16.8).
AGENT_TYPES = frozenset(
    {
        "memgpt_agent",
        "memgpt_v2_agent",
        "letta_v1_agent",
        "react_agent",
        "workflow_agent",
        "split_thread_agent",
        "sleeptime_agent",
        "voice_convo_agent",
        "voice_sleeptime_agent",
    }
)

# Letta's defaults for an agent created without these fields.
DEFAULT_AGENT_TYPE = "letta_v1_agent"
DEFAULT_TIMEZONE = "UTC"

# Appended to a file's visible content when it is clipped to the view window
# (letta.constants.FILE_IS_TRUNCATED_WARNING, behind "...[TRUNCATED]\n").
_TRUNCATION_MARK = "...[TRUNCATED]\n# NOTE: This block is truncated, use functions to view the full content."


class AgentFileError(ValueError):
    """A malformed agent file: ``str(error)`` is ``"FILE: KEY.PATH: what is wrong"``."""

    def __init__(self, file: str, path: str, problem: str) -> None:
        self.file = file
        self.path = path
        self.problem = problem
        super().__init__(f"{file}: {path}: {problem}" if path else f"{file}: {problem}")


@dataclass
class Agent:
    """One agent of an agent file, as memprompt's inputs.

    ``stored_system_message`` is the text of the agent's first in-context
    message (its message[0]), or ``None`` when the file stores none.
    """

    file: str
    index: int
    id: str
    name: str
    agent_type: str
    system: str
    timezone: str
    llm_config: LLMConfig
    blocks: list[Block]
    git_enabled: bool
    tool_rules: list[dict[str, Any]]
    sources: list[Source]
    file_blocks: list[FileBlock]
    max_files_open: int
    stored_system_message: str | None
    message_count: int
    in_context_message_count: int

    @property
    def previous_message_count(self) -> int:
        """The messages out of context: what Letta reports in ``<memory_metadata>`` when it rebuilds."""
        return self.message_count - self.in_context_message_count

    def memory(self) -> Memory:
        return Memory(self.blocks, self.file_blocks, self.agent_type, self.git_enabled)

    def tool_usage_rules(self) -> ToolUsageRules | None:
        return compile_tool_rule_prompts(self.tool_rules)

    def compile_memory(self) -> str:
        """The memory section, as Letta compiles it when it rebuilds this agent's system message."""
        return self.compile_memory_with_fingerprint().text

    def compile_memory_with_fingerprint(self) -> Compiled:
        """``compile_memory``'s text, with its fingerprint and where its sections are."""
        return self.memory().compile_with_fingerprint(
            tool_usage_rules=self.tool_usage_rules(),
            sources=self.sources,
            max_files_open=self.max_files_open,
            llm_config=self.llm_config,
        )

    def compile_system_message(self, now: datetime | None = None) -> str:
        """The whole system message Letta would write on a rebuild at ``now`` (default: the current UTC time).

        The agent file carries no archival passages, so the archival count is 0
        and there are no archive tags; the message count is the file's messages
        less the in-context ones, as Letta counts after importing the file.
        """
        return get_system_message_from_compiled_memory(
            self.system,
            self.compile_memory(),
            self.id,
            now if now is not None else datetime.now(timezone.utc),
            self.timezone,
            previous_message_count=self.previous_message_count,
        )


@dataclass
class AgentFile:
    """A loaded agent file: its format, whether it was JSON inside a JSON string, and its agents."""

    file: str
    format: Literal["v1", "v2"]
    double_encoded: bool
    agents: list[Agent]

    def select(self, selector: str) -> Agent:
        """The agent named ``selector``, else the agent at that index (0-based); ``LookupError`` if neither."""
        for agent in self.agents:
            if agent.name == selector:
                return agent
        try:
            index = int(selector)
        except ValueError:
            index = None
        if index is not None and 0 <= index < len(self.agents):
            return self.agents[index]
        names = ", ".join(repr(agent.name) for agent in self.agents)
        raise LookupError(f"{self.file}: no agent named {selector!r} and no agent at that index (agents: {names})")


def load(path: str | os.PathLike[str]) -> AgentFile:
    """Read and load the agent file at ``path``; errors name the file as ``path`` was given."""
    with open(path, "rb") as f:
        data = f.read()
    return loads(data, os.fspath(path))


def loads(data: str | bytes, file: str = "<string>") -> AgentFile:
    """Load an agent file from its JSON text; ``file`` names it in errors."""
    reader = _Reader(file)
    doc = reader.parse(data, "")
    double_encoded = isinstance(doc, str)
    if double_encoded:
        doc = reader.parse(doc, "a JSON string whose content is ")
    if not isinstance(doc, dict):
        reader.fail("", f"expected a JSON object, got {_kind(doc)}")
    if isinstance(doc.get("agents"), list):
        return AgentFile(file, "v2", double_encoded, reader.v2_agents(doc))
    if "core_memory" in doc:
        return AgentFile(file, "v1", double_encoded, [reader.v1_agent(doc)])
    reader.fail("", "not an agent file: no 'agents' list (v2) and no 'core_memory' (v1)")


_REQUIRED: Any = object()


_JSON_TYPES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def _kind(value: object) -> str:
    """The JSON name of a value's type."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES.items() if isinstance(value, kind)), type(value).__name__)


def _is(value: object, kind: type) -> bool:
    """Whether a JSON value has type ``kind`` (a boolean is not an integer here)."""
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Reader:
    """Typed access to the JSON document, failing with the key path of the bad value."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, problem: str) -> NoReturn:
        raise AgentFileError(self.file, path, problem)

    def parse(self, data: str | bytes, what: str) -> Any:
        """``json.loads(data)``; any failure (bad syntax, encoding, depth or size) is one ``AgentFileError``."""
        try:
            return json.loads(data)
        except json.JSONDecodeError as e:
            self.fail("", f"{what}not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
        except UnicodeDecodeError as e:
            self.fail("", f"{what}not UTF-8 text ({e.reason} at byte {e.start})")
        except ValueError as e:  # a number of more digits than int() takes (sys.get_int_max_str_digits)
            self.fail("", f"{what}not readable as JSON ({e})")
        except RecursionError:
            self.fail("", f"{what}JSON nested too deeply to read (more than Python's recursion limit)")
        except MemoryError:
            self.fail("", f"{what}too large to read into memory ({len(data):,} characters)")

    def get(self, obj: dict[str, Any], path: str, key: str, kind: type, default: Any = _REQUIRED) -> Any:
        """``obj[key]`` checked against ``kind``; a missing or null value gives ``default`` (when there is one)."""
        value = obj.get(key)
        if value is None:
            if default is _REQUIRED:
                self.fail(_key(path, key), "missing" if key not in obj else f"expected {_JSON_TYPES[kind]}, got null")
            return default
        if not _is(value, kind):
            self.fail(_key(path, key), f"expected {_JSON_TYPES[kind]}, got {_kind(value)}")
        return value

    def items(self, obj: dict[str, Any], path: str, key: str, kind: type) -> list[tuple[str, Any]]:
        """The elements of the array ``obj[key]`` (none if it is missing or null), each checked, with their paths."""
        values = self.get(obj, path, key, list, [])
        out = []
        for i, value in enumerate(values):
            item_path = f"{_key(path, key)}[{i}]"
            if not _is(value, kind):
                self.fail(item_path, f"expected {_JSON_TYPES[kind]}, got {_kind(value)}")
            out.append((item_path, value))
        return out

    def by_id(self, doc: dict[str, Any], key: str) -> dict[str, tuple[str, dict[str, Any]]]:
        """The objects of the top-level array ``key`` by their ``id``, with their paths."""
        return {self.get(obj, path, "id", str): (path, obj) for path, obj in self.items(doc, "", key, dict)}

    # -- shared pieces ---------------------------------------------------------

    def agent_type(self, agent: dict[str, Any], path: str, default: Any = _REQUIRED) -> str:
        agent_type: str = self.get(agent, path, "agent_type", str, default)
        if agent_type not in AGENT_TYPES:
            self.fail(_key(path, "agent_type"), f"unknown agent type {agent_type!r}")
        return agent_type

    def llm_config(self, agent: dict[str, Any], path: str) -> tuple[LLMConfig, int | None]:
        """The agent's endpoint type, and its context window (which sets the file defaults)."""
        config = self.get(agent, path, "llm_config", dict)
        config_path = _key(path, "llm_config")
        endpoint_type = self.get(config, config_path, "model_endpoint_type", str)
        context_window = self.get(config, config_path, "context_window", int, None)
        return LLMConfig(endpoint_type), context_window

    def block(self, obj: dict[str, Any], path: str) -> Block:
        # Letta stores a null value as "" and strips NUL characters from every block value.
        return Block(
            value=self.get(obj, path, "value", str, "").replace("\x00", ""),
            label=self.get(obj, path, "label", str),
            description=self.get(obj, path, "description", str, None),
            limit=self.get(obj, path, "limit", int, DEFAULT_BLOCK_LIMIT),
            read_only=self.get(obj, path, "read_only", bool, False),
        )

    def message_text(self, message: dict[str, Any], path: str) -> str:
        """The text Letta reads from a system message: its content, or the text of its first content part."""
        content = message.get("content")
        if isinstance(content, str):
            return content
        parts = self.get(message, path, "content", list)
        content_path = _key(path, "content")
        if not parts:
            self.fail(content_path, "empty: a stored system message needs a text part")
        if not isinstance(parts[0], dict):
            self.fail(f"{content_path}[0]", f"expected object, got {_kind(parts[0])}")
        text: str = self.get(parts[0], f"{content_path}[0]", "text", str)
        return text

    # -- v2 --------------------------------------------------------------------

    def v2_agents(self, doc: dict[str, Any]) -> list[Agent]:
        blocks = self.by_id(doc, "blocks")
        sources = self.by_id(doc, "sources")
        files = self.by_id(doc, "files")
        return [
            self.v2_agent(agent, path, index, blocks, sources, files)
            for index, (path, agent) in enumerate(self.items(doc, "", "agents", dict))
        ]

    def v2_agent(
        self,
        agent: dict[str, Any],
        path: str,
        index: int,
        blocks: dict[str, tuple[str, dict[str, Any]]],
        sources: dict[str, tuple[str, dict[str, Any]]],
        files: dict[str, tuple[str, dict[str, Any]]],
    ) -> Agent:
        llm_config, context_window = self.llm_config(agent, path)
        default_max_files_open, default_view_window = _file_defaults(context_window)

        agent_blocks = []
        for id_path, block_id in self.items(agent, path, "block_ids", str):
            if block_id not in blocks:
                self.fail(id_path, f"no block with id {block_id!r}")
            agent_blocks.append(self.block(blocks[block_id][1], blocks[block_id][0]))

        # Letta attaches folder_ids when given, else the older source_ids.
        source_key = "folder_ids" if agent.get("folder_ids") else "source_ids"
        agent_sources = []
        for id_path, source_id in self.items(agent, path, source_key, str):
            if source_id not in sources:
                self.fail(id_path, f"no source with id {source_id!r}")
            source_path, source = sources[source_id]
            agent_sources.append(
                Source(
                    id=source_id,
                    name=self.get(source, source_path, "name", str),
                    description=self.get(source, source_path, "description", str, None),
                    instructions=self.get(source, source_path, "instructions", str, None),
                )
            )

        view_window = self.get(agent, path, "per_file_view_window_char_limit", int, default_view_window)
        file_blocks = []
        for file_path, file_agent in self.items(agent, path, "files_agents", dict):
            file_id = self.get(file_agent, file_path, "file_id", str)
            if file_id not in files:
                self.fail(_key(file_path, "file_id"), f"no file with id {file_id!r}")
            visible = _visible_content(
                self.get(file_agent, file_path, "visible_content", str, ""),
                self.get(file_agent, file_path, "is_open", bool),
                view_window,
            )
            file_blocks.append(
                FileBlock(
                    value=visible.replace("\x00", ""),
                    label=self.get(file_agent, file_path, "file_name", str),
                    limit=view_window,
                    read_only=True,
                    source_id=self.get(file_agent, file_path, "source_id", str),
                )
            )

        message_list = self.items(agent, path, "messages", dict)
        messages = {
            self.get(message, message_path, "id", str): (message_path, message)
            for message_path, message in message_list
        }
        in_context = self.items(agent, path, "in_context_message_ids", str)
        stored = None
        if in_context:
            id_path, first_id = in_context[0]
            if first_id not in messages:
                self.fail(id_path, f"no message with id {first_id!r}")
            stored = self.message_text(messages[first_id][1], messages[first_id][0])

        tags = [tag for _, tag in self.items(agent, path, "tags", str)]
        return Agent(
            file=self.file,
            index=index,
            id=self.get(agent, path, "id", str),
            name=self.get(agent, path, "name", str),
            agent_type=self.agent_type(agent, path, DEFAULT_AGENT_TYPE),
            system=self.get(agent, path, "system", str),
            timezone=self.get(agent, path, "timezone", str, DEFAULT_TIMEZONE) or DEFAULT_TIMEZONE,
            llm_config=llm_config,
            blocks=agent_blocks,
            git_enabled=GIT_MEMORY_TAG in tags,
            tool_rules=[rule for _, rule in self.items(agent, path, "tool_rules", dict)],
            sources=agent_sources,
            file_blocks=file_blocks,
            max_files_open=self.get(agent, path, "max_files_open", int, default_max_files_open),
            stored_system_message=stored,
            message_count=len(message_list),
            in_context_message_count=len(in_context),
        )

    # -- v1 --------------------------------------------------------------------

    def v1_agent(self, doc: dict[str, Any]) -> Agent:
        llm_config, context_window = self.llm_config(doc, "")
        messages = self.items(doc, "", "messages", dict)
        in_context = self.items(doc, "", "in_context_message_indices", int)
        stored = None
        if in_context:
            index_path, first = in_context[0]
            if not 0 <= first < len(messages):
                self.fail(index_path, f"no message at index {first} ({len(messages)} messages)")
            stored = self.message_text(messages[first][1], messages[first][0])
        tags = [self.get(tag, tag_path, "tag", str) for tag_path, tag in self.items(doc, "", "tags", dict)]
        return Agent(
            file=self.file,
            index=0,
            # A v1 file carries no agent id; "agent-0" is what a v2 export would call it.
            id="agent-0",
            name=self.get(doc, "", "name", str),
            agent_type=self.agent_type(doc, ""),
            system=self.get(doc, "", "system", str),
            timezone=DEFAULT_TIMEZONE,
            llm_config=llm_config,
            blocks=[self.block(block, block_path) for block_path, block in self.items(doc, "", "core_memory", dict)],
            git_enabled=GIT_MEMORY_TAG in tags,
            tool_rules=[rule for _, rule in self.items(doc, "", "tool_rules", dict)],
            sources=[],
            file_blocks=[],
            max_files_open=_file_defaults(context_window)[0],
            stored_system_message=stored,
            message_count=len(messages),
            in_context_message_count=len(in_context),
        )


def _file_defaults(context_window: int | None) -> tuple[int, int]:
    """Letta's ``max_files_open`` and per-file view window for an agent that sets neither, by context window."""
    if not context_window:
        return 5, 50_000
    for up_to, max_files_open, view_window in (
        (8_000, 3, 5_000),
        (32_000, 5, 15_000),
        (128_000, 10, 25_000),
        (200_000, 10, 40_000),
    ):
        if context_window <= up_to:
            return max_files_open, view_window
    return 15, 40_000


def _visible_content(content: str, is_open: bool, view_window: int) -> str:
    """What a file block shows: nothing when closed; clipped, with a note, beyond the view window."""
    visible = content if is_open else ""
    if len(visible) > view_window:
        visible = visible[: view_window - len(_TRUNCATION_MARK)] + _TRUNCATION_MARK
    return visible
