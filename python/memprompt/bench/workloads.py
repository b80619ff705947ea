"""The benchmark workloads: one input per case, and one callable per implementation on it.

Every case is rendered by each implementation from the very same input objects:

- ``memprompt``: the Rust core, through the public API (``memprompt.Memory`` ...).
- ``reference``: ``memprompt.reference``, the pure-Python oracle.
- ``letta``: letta 0.16.8 itself, when it is importable (else the column is absent).
- ``read``, the read floor: CPython's own ``getattr`` (``operator.attrgetter``, in C) of each
  field Letta's renderer reads on the case's input objects, once per object
  (``memprompt.bench.reads``: the fields, the floor, and the check that they are Letta's reads).
- ``copy``, the copy floor: ``s[:-1]`` of the output ``s``, a fresh ``str`` of the
  output's own width and length made from one in memory (one allocation, one copy):
  the least any renderer must do.
- ``decode``, the decode floor: ``bytes.decode("utf-8")`` of the output's UTF-8 bytes,
  what a renderer that writes UTF-8 and decodes it at the end cannot go below.

When Letta is importable the inputs are Letta's own pydantic objects (``Block``,
``FileBlock``, ``Source``, ``LLMConfig``, ``ClientSkillSchema``, tool rules
validated by ``ToolRulesSolver``), and memprompt and the reference read those same
objects (both read with ``getattr``). Without Letta they read memprompt's own
``Block``, ``FileBlock``... and agent-file rule dicts.

A memprompt ``Memory`` remembers its last compile and returns it while no input
changed (see README). A full render is what is compared with Letta, so every
memprompt render below clears that cache first (``memory.clear_cache()``),
except in the ``recompile`` workload, which measures exactly the cache hit.

This module is shared by the pytest-benchmark suite (``memprompt.bench.suite``) and by
the memory probe (``memprompt.bench.memory``). ``python -m memprompt.bench.workloads``
lists the cases.
"""

from __future__ import annotations

import importlib
import json
import math
import operator
import random
import re
import sys
import warnings
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from io import StringIO
from pathlib import Path
from typing import Any, Callable, Sequence

from . import reads
from .reads import Inputs, ReadPlan

#: The implementations every case runs, in the report's order: the one list of them.
IMPLEMENTATIONS = ("memprompt", "reference", "letta", "read", "copy", "decode")

#: The floors (not renderers: they read the inputs' fields, or copy or decode the expected output).
FLOORS = ("read", "copy", "decode")

#: The Letta release memprompt reproduces; another version is reported as absent.
LETTA_VERSION = "0.16.8"

KB = 1000
MB = 1000 * 1000

# One timestamp for every system message, so that outputs compare equal.
NOW = datetime(2026, 1, 15, 17, 30, 5, tzinfo=timezone.utc)


# -- cases -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One input of one renderer (a row of the report)."""

    renderer: str
    name: str
    prepare: Callable[["Env"], "Prepared"] = field(repr=False, compare=False)
    #: Part of ``--quick`` (pytest ``-m quick``).
    quick: bool = False
    #: Measured by the memory phase of ``memprompt bench``.
    memory: bool = False
    #: Why the Letta column is skipped for this case (None: Letta runs).
    letta_skip: str | None = None
    #: Parameters shown in the report (blocks, value size, depth, files ...).
    params: dict[str, Any] = field(default_factory=dict, compare=False)
    #: The case's place in the report (set by ``all_cases``).
    order: int = 0

    @property
    def id(self) -> str:
        return f"{self.renderer}/{self.name}"


def _repeated(run: Callable[[], Any], calls: int) -> Callable[[], Any]:
    """``run`` called ``calls`` times in one timed call; returns the last result."""
    others = range(calls - 1)

    def repeated() -> Any:
        for _ in others:
            run()
        return run()

    return repeated


@dataclass
class Prepared:
    """A case's inputs, bound into one zero-argument callable per implementation."""

    run: dict[str, Callable[[], Any]]
    #: The reference's output on the input: what every implementation must return.
    expected: Any
    #: The text whose size is the case's "output size", and which the floors copy and decode.
    text: str
    #: ``check(result, expected)``: does an implementation's result equal the expected one?
    check: Callable[[Any, Any], bool] = operator.eq
    info: dict[str, Any] = field(default_factory=dict)
    #: Calls per timed run, for sub-microsecond cases where the harness's own ~0.1 us per call
    #: would count; the report divides the medians by it.
    calls: int = 1
    #: The fields Letta's run reads of the case's input objects: the read floor reads them.
    reads: ReadPlan = field(default_factory=ReadPlan)
    #: Bytes of the str one step of the call hands to the next (the memory section a system message
    #: is built around): an input of that step, not working memory of the call.
    passed: int = 0

    def __post_init__(self) -> None:
        self.encoded = self.text.encode("utf-8", "surrogatepass")
        encoded, text = self.encoded, self.text
        if self.reads.count:  # a case that reads no field has a read floor of nothing: not timed
            self.run["read"] = self.reads.floor()
        self.run["copy"] = lambda: text[:-1]
        if _has_surrogates(text):
            self.run["decode"] = lambda: encoded.decode("utf-8", "surrogatepass")
        else:
            self.run["decode"] = encoded.decode
        #: One call of each implementation, as ``run`` repeats it ``calls`` times.
        self.once = dict(self.run)
        if self.calls > 1:
            self.run = {impl: _repeated(run, self.calls) for impl, run in self.run.items()}
        self.info.setdefault("output_chars", len(self.text))
        self.info.setdefault("output_bytes", len(self.encoded))
        self.info.setdefault("calls", self.calls)
        self.info.setdefault("reads", self.reads.count)

    def check_reads(self, where: str) -> None:
        """The read floor reads each field it lists once, through getattr, and (with Letta) exactly Letta's reads."""
        if "read" in self.once:
            reads.check_reads(self.reads, self.once["read"], self.once.get("letta"), where)
        elif "letta" in self.once:
            reads.check_reads(self.reads, lambda: None, self.once["letta"], where)

    def verify(self, impl: str, result: Any) -> None:
        """Assert that ``impl`` returned what the reference returned on the same input."""
        if impl == "read":
            assert result == self.reads.expected(), "the read floor read other values than getattr gives"
            return
        if impl in FLOORS:
            assert result == (self.text[:-1] if impl == "copy" else self.text)
            return
        if self.check(result, self.expected):
            return
        if isinstance(result, str) and isinstance(self.expected, str):
            at = next(
                (i for i, (a, b) in enumerate(zip(result, self.expected)) if a != b),
                min(len(result), len(self.expected)),
            )
            raise AssertionError(
                f"{impl} differs from the reference at code point {at} (lengths {len(result)} and {len(self.expected)}): "
                f"{result[max(0, at - 40) : at + 40]!r} != {self.expected[max(0, at - 40) : at + 40]!r}"
            )
        raise AssertionError(f"{impl} returned {result!r}, the reference {self.expected!r}")


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# -- the implementations' modules ------------------------------------------------


class Letta:
    """The parts of letta 0.16.8 that the workloads call."""

    def __init__(self) -> None:
        import letta
        from letta.helpers import ToolRulesSolver
        from letta.prompts.prompt_generator import PromptGenerator
        from letta.schemas.block import Block, FileBlock
        from letta.schemas.letta_request import ClientSkillSchema
        from letta.schemas.llm_config import LLMConfig
        from letta.schemas.memory import Memory
        from letta.schemas.source import Source

        self.version = getattr(letta, "__version__", "?")
        self.Memory = Memory
        self.Block = Block
        self.FileBlock = FileBlock
        self.Source = Source
        self.LLMConfig = LLMConfig
        self.ClientSkill = ClientSkillSchema
        self.PromptGenerator = PromptGenerator
        self.ToolRulesSolver = ToolRulesSolver


def load_letta() -> tuple[Letta | None, str | None]:
    """Letta, or None and why it is absent."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            letta = Letta()
    except ImportError as e:
        return None, f"letta is not importable ({e})"
    if letta.version != LETTA_VERSION:
        return None, f"letta {letta.version} is installed, not {LETTA_VERSION}"
    return letta, None


class Env:
    """The implementations, the object builders (Letta's classes when Letta is present), and the current case."""

    def __init__(self, with_letta: bool = True) -> None:
        try:
            self.mp = importlib.import_module("memprompt")
            self.ref = importlib.import_module("memprompt.reference")
            self.ref_rules = importlib.import_module("memprompt.reference.tool_rules")
        except ImportError as e:
            raise ImportError(
                f"the benchmarks need memprompt with its compiled extension: build it into this Python ({e})"
            ) from e
        if with_letta:
            self.letta, self.letta_absent = load_letta()
        else:
            self.letta, self.letta_absent = None, "letta disabled"
        self._current: tuple[str, Prepared] | None = None
        self._mp_memories: list[Any] = []

    def prepare(self, case: Case) -> Prepared:
        """The case's prepared input, built once and shared by the implementations (one case at a time)."""
        if self._current is None or self._current[0] != case.id:
            self._current = None  # free the previous case's inputs first
            self._mp_memories = []
            self._current = (case.id, case.prepare(self))
        return self._current[1]

    def forget(self) -> None:
        """Drop the current case's inputs: the next ``prepare`` builds its case anew."""
        self._current = None
        self._mp_memories = []

    def letta_classes(self) -> Letta:
        """Letta, where a case already knows it is present (its Letta memory was built)."""
        assert self.letta is not None
        return self.letta

    def clear_caches(self) -> None:
        """Drop the last compile that the current case's memprompt memories hold."""
        for memory in self._mp_memories:
            memory.clear_cache()

    # -- object builders: Letta's classes when Letta is present --------------------

    def block(
        self, value: str, label: str, description: str | None = None, limit: int = 5000, read_only: bool = False
    ) -> Any:
        if self.letta is None:
            return self.mp.Block(value, label, description, limit, read_only)
        fields = dict(value=value, label=label, description=description, limit=limit, read_only=read_only)
        try:
            return self.letta.Block(**fields)
        except ValueError:  # pydantic refuses it: keep Letta's class, unvalidated
            return self.letta.Block.model_construct(**fields)

    def file_block(
        self,
        value: str,
        label: str,
        source_id: str,
        file_id: str,
        description: str | None = None,
        limit: int = 5000,
        read_only: bool = True,
    ) -> Any:
        if self.letta is None:
            return self.mp.FileBlock(value, label, description, limit, read_only, source_id)
        fields = dict(
            value=value,
            label=label,
            description=description,
            limit=limit,
            read_only=read_only,
            source_id=source_id,
            file_id=file_id,
            is_open=bool(value),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # FileBlock.source_id is deprecated
            try:
                return self.letta.FileBlock(**fields)
            except ValueError:
                return self.letta.FileBlock.model_construct(**fields)

    def source(self, id: str, name: str, description: str | None = None, instructions: str | None = None) -> Any:
        if self.letta is None:
            return self.mp.Source(id, name, description, instructions)
        # A Source needs an embedding config, which rendering never reads.
        return self.letta.Source.model_construct(id=id, name=name, description=description, instructions=instructions)

    def llm_config(self, endpoint_type: str, model: str = "model", context_window: int = 128_000) -> Any:
        if self.letta is None:
            return self.mp.LLMConfig(endpoint_type)
        try:
            return self.letta.LLMConfig(model=model, model_endpoint_type=endpoint_type, context_window=context_window)
        except ValueError:
            return self.letta.LLMConfig.model_construct(
                model=model, model_endpoint_type=endpoint_type, context_window=context_window
            )

    def client_skill(self, name: str, description: str, location: str) -> Any:
        if self.letta is None:
            return self.mp.ClientSkill(name, description, location)
        return self.letta.ClientSkill(name=name, description=description, location=location)

    def tool_rules(self, rules: list[dict[str, Any]]) -> tuple[list[Any], Any]:
        """The rules as every implementation reads them, and Letta's solver (None without Letta).

        With Letta: Letta's validated rule objects (``ToolRulesSolver(tool_rules=...)``), read
        by all three. Without: the agent-file dicts.
        """
        if self.letta is None:
            return list(rules), None
        solver = self.letta.ToolRulesSolver(tool_rules=list(rules))
        return list(solver.tool_rules), solver

    def memories(
        self, blocks: list[Any], file_blocks: Sequence[Any] = (), agent_type: Any = None, git_enabled: bool = False
    ) -> tuple[Any, Any, Any]:
        """(memprompt Memory, reference Memory, Letta Memory or None) on the same blocks."""
        letta_memory = None
        if self.letta is not None:
            letta_memory = self.letta.Memory(
                blocks=list(blocks), file_blocks=list(file_blocks), agent_type=agent_type, git_enabled=git_enabled
            )
            blocks = letta_memory.blocks
            file_blocks = letta_memory.file_blocks
            agent_type = letta_memory.agent_type  # what Letta holds (its AgentType enum)
        mp_memory = self._mp_memory(blocks, file_blocks, agent_type, git_enabled)
        ref_memory = self.ref.Memory(blocks, file_blocks, agent_type, git_enabled)
        return mp_memory, ref_memory, letta_memory

    def own_memory(self, memory: Any) -> Any:
        """The same memory of memprompt's own Blocks (and a plain str agent type), whose writes its cache counts."""
        Block = self.mp.Block
        blocks = [Block(b.value, b.label, b.description, b.limit, b.read_only) for b in memory.blocks]
        agent_type = getattr(memory.agent_type, "value", memory.agent_type)  # Letta's AgentType is a str enum
        return self._mp_memory(blocks, [], agent_type, memory.git_enabled)

    def _mp_memory(self, *fields: Any) -> Any:
        """A memprompt Memory whose cache ``clear_caches`` clears."""
        memory = self.mp.Memory(*fields)
        self._mp_memories.append(memory)
        return memory


def full_render(memory: Any, method: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """A memprompt render with its compile cache cleared first: every call renders."""
    clear_cache = memory.clear_cache
    bound = getattr(memory, method)

    def render() -> Any:
        clear_cache()
        return bound(*args, **kwargs)

    return render


def letta_tree_view(memory: Any, client_skills: Any = None) -> Callable[[], str]:
    """Letta's ``_render_memory_filesystem`` writes into a StringIO: its text is what it writes."""

    def render() -> str:
        s = StringIO()
        memory._render_memory_filesystem(s, client_skills)
        return s.getvalue()

    return render


# -- input text ------------------------------------------------------------------

# Words for generated block values: plain ASCII prose in lines of 4 to 14 words.
_WORDS = (
    "the a an and or but of to in on at for with from by about as into over after before between "
    "agent user memory block note task project meeting deadline budget report draft review plan "
    "prefers likes dislikes asked said wants needs remembers mentioned decided agreed scheduled "
    "morning evening weekend monday friday january march july october today tomorrow yesterday "
    "coffee tea music travel hiking reading cooking running chess photography gardening "
    "python rust database server deploy release branch commit test benchmark cache latency "
    "Ann Bob Chen Dana Eli Fatima Gus Hana Ivan Jo Kim Lee Mia Noor Omar Pia "
    "is was will has had can should must may might does did not never always often "
    "1 2 3 5 8 13 21 42 100 2025 2026 v0.16.8 #42 (see notes) [todo] - * : ; , . !"
).split()


@lru_cache(maxsize=None)
def corpus(words_per_line: tuple[int, int] = (4, 14)) -> str:
    """About 2.2 MB of deterministic ASCII prose in lines of ``words_per_line`` words, sliced into block values."""
    rng = random.Random(20260115)
    words = rng.choices(_WORDS, k=380_000)
    lines = []
    i = 0
    while i < len(words):
        n = rng.randint(*words_per_line)
        lines.append(" ".join(words[i : i + n]))
        i += n
    return "\n".join(lines)


@lru_cache(maxsize=None)
def flavored_corpus(flavor: str) -> str:
    """The corpus with some non-ASCII characters, same length: ``latin1`` (é) or ``ucs2`` (é, em dashes);
    ``short-lines``: ASCII in lines of 2 or 3 words (a newline every ~13 characters)."""
    if flavor == "short-lines":
        return corpus((2, 3))
    base = corpus()
    if flavor == "ascii":
        return base
    base = base.replace("e ", "\u00e9 ")
    if flavor == "ucs2":
        base = base.replace(" - ", " \u2014 ")
    return base


def text(size: int, seed: int, flavor: str = "ascii") -> str:
    """``size`` characters of prose, a different slice for each seed (a new ``str`` object each call).

    ``flavor``: ``ascii`` (1 byte a character in UTF-8 and in Python), ``latin1`` (some
    é: 2 bytes in UTF-8, 1 in Python), ``ucs2`` (also em dashes: a 2-byte-per-character str)
    or ``short-lines`` (ASCII, a newline every ~13 characters).
    """
    if size <= 0:
        return ""
    base = flavored_corpus(flavor)
    if size > len(base) // 2:
        base = base * (size // len(base) + 2)
    start = (seed * 2_654_435_761) % (len(base) - size)
    return base[start : start + size]


_PLAIN_LABELS = ("persona", "human", "projects", "preferences", "scratchpad", "tasks", "contacts", "calendar")


def plain_blocks(env: Env, n: int, size: int, flavor: str = "ascii") -> list[Any]:
    """``n`` blocks of ``size`` characters: every 7th read-only, limits above their values."""
    blocks = []
    for i in range(n):
        label = _PLAIN_LABELS[i] if i < len(_PLAIN_LABELS) else f"notes_{i}"
        blocks.append(
            env.block(
                text(size, i, flavor),
                label,
                f"What the agent keeps about {label}: facts, preferences and open questions.",
                limit=max(5000, 2 * size),
                read_only=i % 7 == 6,
            )
        )
    return blocks


# Path part names, per level, for git-memory labels.
_DIRS = ("projects", "people", "areas", "archive", "inbox", "journal", "research", "ops", "reference", "drafts")


def _path(i: int, depth: int, base: int, offset: int = 0) -> list[str]:
    """``depth`` path parts: the digits of ``i`` in ``base`` (the top ones 0 when ``i`` is small), the leaf unique."""
    digits = []
    rest = i
    for _ in range(depth - 1):
        digits.append(rest % base)
        rest //= base
    parts = [f"{_DIRS[(level + offset) % len(_DIRS)]}{digit}" for level, digit in enumerate(reversed(digits))]
    parts.append(f"file{i}")
    return parts


def git_blocks(env: Env, n: int, depth: int, value_size: int = 500, skills: bool = True) -> list[Any]:
    """A git-memory agent of ``n`` blocks whose labels are ``depth`` parts deep below their top folder.

    ``system/persona`` first; then, of every 10 blocks, 7 ``system/...`` blocks (one
    in 50 is also a folder: its label is a prefix of others), 1 skill (``skills/<name>``,
    legacy ``skills/<name>/SKILL``, or a nested file of a skill) and 2 external files
    (``notes/...``) that git memory shows as a tree. With ``skills=False`` the skill
    becomes an eighth ``system/...`` block: no label is under ``skills/``.
    """
    base = max(2, math.ceil(n ** (1 / depth))) if depth > 1 else n
    blocks = [env.block(text(value_size, 0), "system/persona", "Who I am, how I speak, what I care about.", 20_000)]
    for i in range(1, n):
        kind = i % 10
        value = text(value_size, i)
        description: str | None
        if kind == 0 and skills:
            name = f"skill-{i}"
            variant = (i // 10) % 3
            if variant == 0:
                label = f"skills/{name}"
            elif variant == 1:
                label = f"skills/{name}/SKILL"
            else:
                label = "skills/" + "/".join([f"skill-{i - 10}", "refs", *_path(i, depth, base, 3)])
            description = f"Skill {name}: how to handle case {i}.\nSteps, pitfalls and examples follow in the file."
        elif kind in (1, 2):
            label = "notes/" + "/".join(_path(i, depth, base, 5))
            description = f"External note {i}." if kind == 1 else None
        else:
            parts = _path(i, depth, base)
            if i % 50 == 3 and depth > 1:
                parts = parts[:-1]  # a leaf that is also a folder of other blocks
            label = "system/" + "/".join(parts)
            description = f"Memory file {i}: what it holds and when to update it." if i % 3 else ""
        blocks.append(env.block(value, label, description, 20_000, read_only=i % 13 == 0))
    return blocks


def client_skills(env: Env) -> list[Any]:
    """Six client skills: three location roots, a default location, and a name already in memory."""
    return [
        env.client_skill(
            "pdf-tools", "Read, split and merge PDF files.\nUses poppler.", "/home/ann/.letta/skills/pdf-tools/SKILL.md"
        ),
        env.client_skill("deploy", "Deploy the app to staging.", "/home/ann/.letta/skills/deploy/SKILL.md"),
        env.client_skill("lint", "Run the linters of this repository.", "project/.skills/dev/lint/SKILL.md"),
        env.client_skill("notes", "Keep meeting notes.", ""),
        env.client_skill("standalone", "A skill kept as one file.", "/opt/skills/standalone.md"),
        env.client_skill("skill-10", "Shadowed by the agent's own skill of that name.", "/tmp/skill-10/SKILL.md"),
    ]


#: The system prompt template of the synthetic agents (no ``{CORE_MEMORY}``: memory is appended).
TEMPLATE = (
    "You are Ava, an assistant that remembers. You talk with one person over many sessions, "
    "and what you keep in your memory blocks is all you know about them between sessions.\n\n"
    "How to work:\n"
    + "".join(
        f"- Rule {i}: keep answers short, check your memory before asking a question, and write down what changes ({i}).\n"
        for i in range(1, 25)
    )
    + "\nYour memory follows."
)

#: Tool rules as agent files store them: one of each type.
RULES: list[dict[str, Any]] = [
    {"tool_name": "memory_rethink", "type": "run_first"},
    {"tool_name": "conversation_search", "type": "continue_loop"},
    {"tool_name": "web_search", "type": "constrain_child_tools", "children": ["fetch_webpage", "send_message"]},
    {"tool_name": "fetch_webpage", "type": "max_count_per_step", "max_count_limit": 3},
    {
        "tool_name": "route",
        "type": "conditional",
        "child_output_mapping": {"a": "send_message"},
        "default_child": "send_message",
    },
    {"tool_name": "archival_memory_search", "type": "parent_last_tool", "children": ["archival_memory_insert"]},
    {"tool_name": "send_message", "type": "exit_loop"},
    {"tool_name": "delete_file", "type": "requires_approval"},
]


def sources_and_files(env: Env, files: int, file_size: int = 3000) -> tuple[list[Any], list[Any]]:
    """One source per 20 files; two files in three open (``file_size`` characters), the rest closed."""
    count = max(1, files // 20)
    sources = [
        env.source(
            f"source-{j:04d}",
            f"folder_{j}",
            f"Documents of folder {j}." if j % 2 == 0 else None,
            "Cite the file name when you quote it." if j % 3 == 0 else None,
        )
        for j in range(count)
    ]
    file_blocks = [
        env.file_block(
            text(file_size, 10_000 + i) if i % 3 != 2 else "",
            f"folder_{i % count}/doc_{i}.md",
            source_id=f"source-{i % count:04d}",
            file_id=f"file-{i:05d}",
            description=f"Document {i}." if i % 4 == 0 else None,
            limit=max(5000, file_size),
        )
        for i in range(files)
    ]
    return sources, file_blocks


# -- renderers -------------------------------------------------------------------


def _read_plan(parts: Sequence[str], memory: Any, **inputs: Any) -> ReadPlan:
    """The read floor of ``parts`` on ``memory`` (Letta's, else the reference's) and the other inputs."""
    return reads.plan(parts, Inputs(memory, **inputs))


def _memory_compile(
    env: Env, parts: Sequence[str], mp_memory: Any, ref_memory: Any, letta_memory: Any, **kwargs: Any
) -> Prepared:
    run: dict[str, Callable[[], Any]] = {
        "memprompt": full_render(mp_memory, "compile", **kwargs),
        "reference": lambda: ref_memory.compile(**kwargs),
    }
    if letta_memory is not None:
        run["letta"] = lambda: letta_memory.compile(**kwargs)
    expected = run["reference"]()
    return Prepared(run, expected, expected, reads=_read_plan(parts, letta_memory or ref_memory, **kwargs))


def prepare_plain(n: int, size: int, line_numbered: bool = False, flavor: str = "ascii") -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        blocks = plain_blocks(env, n, size, flavor)
        agent_type = "letta_v1_agent" if line_numbered else "memgpt_agent"
        memories = env.memories(blocks, agent_type=agent_type)
        llm_config = env.llm_config("anthropic" if line_numbered else "openai")
        parts = reads.RENDERER_PARTS["line-numbered" if line_numbered else "plain"]
        return _memory_compile(env, parts, *memories, llm_config=llm_config)

    return prepare


def prepare_git(n: int, depth: int) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        memories = env.memories(git_blocks(env, n, depth), agent_type="letta_v1_agent", git_enabled=True)
        return _memory_compile(env, reads.RENDERER_PARTS["git memory"], *memories)

    return prepare


def prepare_tree_view(n: int, depth: int) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        mp_memory, ref_memory, letta_memory = env.memories(git_blocks(env, n, depth), git_enabled=True)
        run = {
            "memprompt": mp_memory.render_memory_filesystem,
            "reference": ref_memory.render_memory_filesystem,
        }
        if letta_memory is not None:
            run["letta"] = letta_tree_view(letta_memory)
        expected = run["reference"]()
        parts = reads.RENDERER_PARTS["tree view"]
        return Prepared(run, expected, expected, reads=_read_plan(parts, letta_memory or ref_memory))

    return prepare


def prepare_skills(n: int, depth: int, with_skills: bool = True) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        blocks = git_blocks(env, n, depth, skills=with_skills)
        mp_memory, ref_memory, letta_memory = env.memories(blocks, git_enabled=True)
        skills = client_skills(env)
        run = {
            "memprompt": lambda: mp_memory.compile_available_skills(skills),
            "reference": lambda: ref_memory.compile_available_skills(skills),
        }
        if letta_memory is not None:
            run["letta"] = lambda: letta_memory.compile_available_skills(skills)
        expected = run["reference"]()
        parts = reads.RENDERER_PARTS["available skills"]
        read_plan = _read_plan(parts, letta_memory or ref_memory, client_skills=skills)
        return Prepared(run, expected, expected, reads=read_plan)

    return prepare


def prepare_directories(files: int) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        sources, file_blocks = sources_and_files(env, files)
        memories = env.memories([], file_blocks, agent_type="letta_v1_agent")
        parts = reads.RENDERER_PARTS["directories"]
        return _memory_compile(env, parts, *memories, sources=sources, max_files_open=max(5, files))

    return prepare


def prepare_metadata(env: Env) -> Prepared:
    args = dict(
        memory_edit_timestamp=NOW,
        timezone="America/New_York",
        agent_id="agent-2f6c1a9e-6d0b-4c8e-9d1c-0a7b5e3f4c21",
        conversation_id="default",
        previous_message_count=128,
        archival_memory_size=42,
        archive_tags=["projects", "people", "travel"],
    )
    run = {
        "memprompt": lambda: env.mp.compile_memory_metadata_block(**args),
        "reference": lambda: env.ref.compile_memory_metadata_block(**args),
    }
    if env.letta is not None:
        generator = env.letta.PromptGenerator
        run["letta"] = lambda: generator.compile_memory_metadata_block(**args)
    expected = run["reference"]()
    # Its arguments are a datetime, strs and ints: no field of an object is read.
    return Prepared(run, expected, expected, reads=ReadPlan())


@dataclass
class AgentInputs:
    """Everything a whole system message is built from, as every implementation reads it."""

    system: str
    agent_id: str
    timezone: str
    previous_message_count: int
    memories: tuple[Any, Any, Any]
    rules: list[Any]
    solver: Any
    sources: list[Any]
    max_files_open: int | None
    llm_config: Any
    #: The parts of the render whose fields the read floor reads (``reads.PARTS``).
    parts: Sequence[str]

    def read_plan(self) -> ReadPlan:
        mp_memory, ref_memory, letta_memory = self.memories
        return _read_plan(
            self.parts,
            letta_memory or ref_memory,
            llm_config=self.llm_config,
            sources=self.sources,
            max_files_open=self.max_files_open,
            rules=self.rules,
        )


def _memory_section(env: Env, a: AgentInputs, fingerprinted: bool = False) -> Prepared:
    """The memory section alone, as Letta's rebuild compiles it: tool rules, then ``Memory.compile``.

    ``fingerprinted``: memprompt and the reference run ``compile_with_fingerprint`` instead;
    Letta, which has no fingerprint, still runs ``compile``.
    """
    mp, ref_rules = env.mp, env.ref_rules
    mp_memory, ref_memory, letta_memory = a.memories
    method = "compile_with_fingerprint" if fingerprinted else "compile"
    compile_mp, compile_ref = getattr(mp_memory, method), getattr(ref_memory, method)
    compile_kwargs = dict(sources=a.sources, max_files_open=a.max_files_open, llm_config=a.llm_config)
    clear_cache = mp_memory.clear_cache

    def run_memprompt() -> Any:
        clear_cache()
        return compile_mp(tool_usage_rules=mp.compile_tool_rule_prompts(a.rules), **compile_kwargs)

    def run_reference() -> Any:
        return compile_ref(tool_usage_rules=ref_rules.compile_tool_rule_prompts(a.rules), **compile_kwargs)

    run = {"memprompt": run_memprompt, "reference": run_reference}
    if letta_memory is not None:
        solver = a.solver

        def run_letta() -> Any:
            return letta_memory.compile(tool_usage_rules=solver.compile_tool_rule_prompts(), **compile_kwargs)

        run["letta"] = run_letta
    expected = run["reference"]()
    if fingerprinted:
        return Prepared(run, expected, expected.text, check=_same_compiled, reads=a.read_plan())
    return Prepared(run, expected, expected, reads=a.read_plan())


def _same_compiled(result: Any, expected: Any) -> bool:
    """A ``Compiled`` equal to the reference's, or (Letta's) its text."""
    return bool(result == (expected.text if isinstance(result, str) else expected))


def _fingerprinted_memory_section(env: Env, a: AgentInputs) -> Prepared:
    """The memory section with its fingerprint and section offsets (see ``_memory_section``)."""
    return _memory_section(env, a, fingerprinted=True)


def _system_message(env: Env, a: AgentInputs) -> Prepared:
    """Letta's rebuild of message[0]: tool rules, memory, then the message around the template.

    Letta: ``ToolRulesSolver.compile_tool_rule_prompts``, ``Memory.compile`` and
    ``PromptGenerator.get_system_message_from_compiled_memory``, as ``_rebuild_memory`` calls them.
    """
    mp, ref = env.mp, env.ref
    memory_section = _memory_section(env, a)
    section = memory_section.run
    message_kwargs = dict(previous_message_count=a.previous_message_count, archival_memory_size=0)
    compile_mp, compile_ref = section["memprompt"], section["reference"]

    def run_memprompt() -> Any:
        memory = compile_mp()
        return mp.get_system_message_from_compiled_memory(
            a.system, memory, a.agent_id, NOW, a.timezone, **message_kwargs
        )

    def run_reference() -> Any:
        memory = compile_ref()
        return ref.get_system_message_from_compiled_memory(
            a.system, memory, a.agent_id, NOW, a.timezone, **message_kwargs
        )

    run = {"memprompt": run_memprompt, "reference": run_reference}
    if "letta" in section:
        generator = env.letta_classes().PromptGenerator
        compile_letta = section["letta"]

        def run_letta() -> Any:
            return generator.get_system_message_from_compiled_memory(
                system_prompt=a.system,
                memory_with_sources=compile_letta(),
                agent_id=a.agent_id,
                in_context_memory_last_edit=NOW,
                timezone=a.timezone,
                **message_kwargs,
            )

        run["letta"] = run_letta
    expected = run["reference"]()
    passed = sys.getsizeof(memory_section.text)
    return Prepared(run, expected, expected, reads=memory_section.reads, passed=passed)


def prepare_system_message(n: int, size: int) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        sources, file_blocks = sources_and_files(env, 8, 2000)
        rules, solver = env.tool_rules(RULES)
        memories = env.memories(plain_blocks(env, n, size), file_blocks, agent_type="letta_v1_agent")
        inputs = AgentInputs(
            TEMPLATE,
            "agent-2f6c1a9e",
            "America/New_York",
            57,
            memories,
            rules,
            solver,
            sources,
            10,
            env.llm_config("openai"),
            reads.RENDERER_PARTS["system message"],
        )
        return _system_message(env, inputs)

    return prepare


# -- real agents -----------------------------------------------------------------


#: The renders of each agent: the memory section alone, with its fingerprint, and the whole system message.
AGENT_PARTS = {
    "memory section": _memory_section,
    "fingerprinted memory section": _fingerprinted_memory_section,
    "system message": _system_message,
}


@lru_cache(maxsize=None)
def _load_agent_file(path: str) -> Any:
    from memprompt.agentfile import load

    return load(path)


def agent_cases(agent_files: Sequence[str | Path]) -> list[Case]:
    """Three cases (memory section, fingerprinted memory section, system message) per agent of the given agent files.

    The renderers are ``real agents: memory section``, ``real agents: fingerprinted memory section``
    and ``real agents: system message``;
    a case is named by its file's stem (``[i]`` for the i-th of several agents).
    """
    names: set[str] = set()
    cases = []
    for path in agent_files:
        agent_file = _load_agent_file(str(path))
        stem = Path(path).stem
        for index, agent in enumerate(agent_file.agents):
            name = stem if len(agent_file.agents) == 1 else f"{stem}[{index}]"
            while name in names:  # two files of the same name in different folders
                name += "'"
            names.add(name)
            params = {"agent": agent.name, "blocks": len(agent.blocks), "agent_type": agent.agent_type}
            for part, render in AGENT_PARTS.items():
                cases.append(
                    Case(
                        f"real agents: {part}",
                        name,
                        _prepare_agent(str(path), index, render),
                        quick=True,
                        params=params,
                    )
                )
    return cases


def _prepare_agent(path: str, index: int, render: Callable[[Env, AgentInputs], Prepared]) -> Callable[[Env], Prepared]:
    def prepare(env: Env) -> Prepared:
        agent = _load_agent_file(path).agents[index]
        blocks = [env.block(b.value, b.label, b.description, b.limit, b.read_only) for b in agent.blocks]
        file_blocks = [
            env.file_block(f.value, f.label, f.source_id, f"file-{i}", f.description, f.limit, f.read_only)
            for i, f in enumerate(agent.file_blocks)
        ]
        sources = [env.source(s.id, s.name, s.description, s.instructions) for s in agent.sources]
        rules, solver = env.tool_rules(agent.tool_rules)
        memories = env.memories(blocks, file_blocks, agent.agent_type, agent.git_enabled)
        inputs = AgentInputs(
            agent.system,
            agent.id,
            agent.timezone,
            agent.previous_message_count,
            memories,
            rules,
            solver,
            sources,
            agent.max_files_open,
            env.llm_config(agent.llm_config.model_endpoint_type),
            reads.compile_parts(memories[2] or memories[1], sources, rules=True),
        )
        return render(env, inputs)

    return prepare


# -- rebuild decision and recompile ----------------------------------------------


def prepare_rebuild(n: int, size: int) -> Callable[[Env], Prepared]:
    """Is message[0] current? memprompt: recorded fingerprints. Letta: two substring searches.

    The memory is unchanged (the common case: no rebuild); each implementation holds
    the memory it compiled this step, as Letta's ``_rebuild_memory`` does. The
    reference takes memprompt's decision in Python: it has no fingerprint from
    rendering, so it hashes the template and the memory with ``xxhash``.
    """

    def prepare(env: Env) -> Prepared:
        mp = env.mp
        mp_memory, ref_memory, letta_memory = env.memories(plain_blocks(env, n, size), agent_type="letta_v1_agent")
        compiled = mp_memory.compile_with_fingerprint()
        built = mp.build_system_message(TEMPLATE, compiled, "agent-1", NOW, "UTC", previous_message_count=12)
        message, stamp = built.text, built.stamp
        ref_memory_text = ref_memory.compile()
        fingerprint = env.ref.fingerprint
        template = TEMPLATE

        def run_memprompt() -> Any:
            return mp.needs_rebuild(template, compiled, message, stamp=stamp)

        def run_reference() -> Any:
            return fingerprint(template) != stamp.template or fingerprint(ref_memory_text) != stamp.memory

        run = {"memprompt": run_memprompt, "reference": run_reference}
        if letta_memory is not None:
            letta_memory_text = letta_memory.compile()
            assert letta_memory_text == compiled.text and letta_memory_text is not compiled.text
            letta_message = env.letta_classes().PromptGenerator.get_system_message_from_compiled_memory(
                system_prompt=template,
                memory_with_sources=letta_memory_text,
                agent_id="agent-1",
                in_context_memory_last_edit=NOW,
                timezone="UTC",
                previous_message_count=12,
            )
            assert letta_message == message

            def run_letta(force: bool = False) -> bool:
                # LettaAgentV2._rebuild_memory: both searches run, then the decision.
                system_prompt_changed = template not in message
                memory_changed = letta_memory_text not in message
                return force or system_prompt_changed or memory_changed

            run["letta"] = run_letta

        # A changed memory (not a substring of the stored one) must be rebuilt by all three.
        changed = mp.Memory(list(mp_memory.blocks[:-1]), agent_type="letta_v1_agent").compile_with_fingerprint()
        assert mp.needs_rebuild(template, changed, message, stamp=stamp)
        assert fingerprint(changed.text) != stamp.memory
        assert changed.text not in message
        expected = run["reference"]()
        assert expected is False
        # Letta's decision reads no field of an object: two substring searches.
        return Prepared(run, expected, message, check=lambda got, want: bool(got) == want, reads=ReadPlan())

    return prepare


def prepare_recompile(kind: str, n: int, size: int, objects: str = "own", calls: int = 1) -> Callable[[Env], Prepared]:
    """``Memory.compile()`` again with nothing changed: memprompt's second call is a cache hit; Letta renders in full.

    ``objects="own"``: memprompt's ``Memory`` holds memprompt's own ``Block`` objects (with the
    same values as Letta's), so its cache proves "nothing changed" from counted writes.
    ``objects="letta"``: it holds Letta's pydantic blocks, and reads and compares every field.
    """

    def prepare(env: Env) -> Prepared:
        if kind == "git":
            memories = env.memories(git_blocks(env, n, size), agent_type="letta_v1_agent", git_enabled=True)
            config = None
        else:
            memories = env.memories(plain_blocks(env, n, size), agent_type="letta_v1_agent")
            config = env.llm_config("anthropic" if kind == "line-numbered" else "openai")
        mp_memory, ref_memory, letta_memory = memories
        mp_config = config
        if objects == "own":
            mp_memory = env.own_memory(mp_memory)
            mp_config = None if config is None else env.mp.LLMConfig(config.model_endpoint_type)
        # The same call, with an explicit keyword, for every implementation (`**kwargs` costs ~0.2 us).
        first = mp_memory.compile(llm_config=mp_config)
        run = {
            "memprompt": lambda: mp_memory.compile(llm_config=mp_config),
            "reference": lambda: ref_memory.compile(llm_config=config),
        }
        if letta_memory is not None:
            run["letta"] = lambda: letta_memory.compile(llm_config=config)
        expected = run["reference"]()
        assert first == expected
        memory = letta_memory or ref_memory
        read_plan = _read_plan(reads.compile_parts(memory, None, rules=False), memory, llm_config=config)
        return Prepared(run, expected, expected, calls=calls, reads=read_plan)

    return prepare


# -- the suite -------------------------------------------------------------------


def _size(n: int) -> str:
    return f"{n // MB}MB" if n >= MB and n % MB == 0 else f"{n // KB}KB" if n >= KB and n % KB == 0 else f"{n}B"


#: Sweep labels: the chart draws each sweep as a line (other cases as points).
VALUES_SWEEP = "5 blocks, value size varies"
BLOCKS_SWEEP = "1 KB values, block count varies"
DEPTH5_SWEEP = "depth 5, block count varies"
DEPTH_SWEEP = "1,000 blocks, depth varies"


def _block_cases(renderer: str, line_numbered: bool) -> list[Case]:
    # (blocks, value size, sweep, quick). 10,000 blocks x 1 MB would be a 10 GB prompt: the grid
    # spans both extremes along two sweeps, with outputs up to ~15 MB.
    grid = [
        (5, 100, VALUES_SWEEP, True),
        (5, 2 * KB, VALUES_SWEEP, True),
        (5, 20 * KB, VALUES_SWEEP, True),
        (5, 200 * KB, VALUES_SWEEP, False),
        (5, 1 * MB, VALUES_SWEEP, False),
        (1, 1 * KB, BLOCKS_SWEEP, True),
        (10, 1 * KB, BLOCKS_SWEEP, False),
        (100, 1 * KB, BLOCKS_SWEEP, True),
        (1000, 1 * KB, BLOCKS_SWEEP, True),
        (10_000, 1 * KB, BLOCKS_SWEEP, False),
        (1, 100, None, False),
        (20, 5 * KB, None, True),
        (10_000, 100, None, False),
        (10, 1 * MB, None, False),
    ]
    cases = [
        Case(
            renderer,
            f"{n}x{_size(size)}",
            prepare_plain(n, size, line_numbered),
            quick=quick,
            memory=(n, size) in ((10, 1 * MB), (1000, 1 * KB)),
            params={"blocks": n, "value": size, **({"sweep": sweep} if sweep else {})},
        )
        for n, size, sweep, quick in grid
    ]
    # The same ~100 KB with non-ASCII values: Python holds them as Latin-1 or UCS-2, not as UTF-8.
    cases += [
        Case(
            renderer,
            f"20x5KB-{flavor}",
            prepare_plain(20, 5 * KB, line_numbered, flavor),
            params={"blocks": 20, "value": 5 * KB, "text": flavor},
        )
        for flavor in ("latin1", "ucs2")
    ]
    if line_numbered:
        # ~7,700 lines of ~13 characters: the per-line cost of numbering, which long lines hide.
        cases.append(
            Case(
                renderer,
                "20x5KB-short-lines",
                prepare_plain(20, 5 * KB, line_numbered, "short-lines"),
                quick=True,
                params={"blocks": 20, "value": 5 * KB, "text": "short-lines"},
            )
        )
    return cases


def _git_grid(
    renderer: str, prepare: Callable[[int, int], Callable[[Env], Prepared]], memory: tuple[tuple[int, int], ...]
) -> list[Case]:
    # (blocks, label depth, sweep, quick). 10,000 blocks at depth 50 would be a ~50 MB prompt: not run.
    grid = [
        (10, 5, DEPTH5_SWEEP, True),
        (100, 5, DEPTH5_SWEEP, True),
        (1000, 5, DEPTH5_SWEEP, True),
        (10_000, 5, DEPTH5_SWEEP, False),
        (1000, 1, DEPTH_SWEEP, False),
        (1000, 20, DEPTH_SWEEP, False),
        (1000, 50, DEPTH_SWEEP, False),
        (10, 1, None, False),
        (10, 50, None, False),
        (10_000, 1, None, False),
    ]
    return [
        Case(
            renderer,
            f"{n}-blocks-depth-{depth}",
            prepare(n, depth),
            quick=quick,
            memory=(n, depth) in memory,
            params={"blocks": n, "depth": depth, **({"sweep": sweep} if sweep else {})},
        )
        for n, depth, sweep, quick in grid
    ]


def all_cases(agent_files: Sequence[str | Path] = ()) -> list[Case]:
    """Every case, grouped by renderer in the report's order; ``agent_files`` are the real agents' workloads."""
    cases: list[Case] = []
    cases += _block_cases("plain", line_numbered=False)
    cases += _block_cases("line-numbered", line_numbered=True)
    # Memory is measured where the output is large enough for page-granular RSS (~0.5 MB and more).
    cases += _git_grid("git memory", prepare_git, memory=((1000, 5), (10_000, 5)))
    cases += _git_grid("tree view", prepare_tree_view, memory=((1000, 50), (10_000, 5)))
    cases += _git_grid("available skills", prepare_skills, memory=((10_000, 5),))
    cases += [
        Case(
            "available skills",
            "1000-blocks-depth-5-no-skills",
            prepare_skills(1000, 5, with_skills=False),
            quick=True,
            params={"blocks": 1000, "depth": 5},
        )
    ]
    cases += [
        Case(
            "directories",
            f"{files}-files",
            prepare_directories(files),
            quick=files in (10, 1000),
            memory=files == 1000,
            params={"files": files, "sweep": "files vary"},
        )
        for files in (1, 10, 100, 1000)
    ]
    cases += [Case("metadata", "block", prepare_metadata, quick=True)]
    cases += [
        Case(
            "system message",
            f"{n}x{_size(size)}",
            prepare_system_message(n, size),
            quick=quick,
            memory=n == 200,
            params={"blocks": n, "value": size, "files": 8, "rules": len(RULES), "sweep": "blocks vary"},
        )
        for n, size, quick in ((5, 2 * KB, True), (20, 5 * KB, True), (200, 5 * KB, False))
    ]
    cases += agent_cases(agent_files)
    cases += [
        Case(
            "rebuild decision",
            label,
            prepare_rebuild(n, size),
            quick=quick,
            params={"blocks": n, "value": size, "sweep": "message size varies"},
        )
        for label, n, size, quick in (
            ("10KB", 5, 2 * KB, True),
            ("100KB", 20, 5 * KB, True),
            ("1MB", 20, 50 * KB, False),
        )
    ]
    cases += [
        Case(
            "recompile",
            name,
            prepare_recompile(kind, n, size, objects, calls),
            quick=quick,
            params={"kind": kind, "blocks": n, "objects": objects},
        )
        for name, kind, n, size, objects, calls, quick in (
            ("plain-5x2KB", "plain", 5, 2 * KB, "own", 100, True),
            ("plain-20x5KB", "plain", 20, 5 * KB, "own", 100, True),
            ("line-numbered-20x5KB", "line-numbered", 20, 5 * KB, "own", 100, True),
            ("git-1000-blocks-depth-5", "git", 1000, 5, "own", 1, False),
            ("plain-5x2KB-letta-objects", "plain", 5, 2 * KB, "letta", 100, True),
            ("git-1000-blocks-depth-5-letta-objects", "git", 1000, 5, "letta", 1, False),
        )
    ]
    return [replace(case, order=order) for order, case in enumerate(cases)]


#: The report's panels, in order.
RENDERERS = (
    "plain",
    "line-numbered",
    "git memory",
    "tree view",
    "available skills",
    "directories",
    "metadata",
    "system message",
    "real agents: memory section",
    "real agents: fingerprinted memory section",
    "real agents: system message",
    "rebuild decision",
    "recompile",
)


def cases_of(renderer: str, cases: Sequence[Case]) -> list[Case]:
    return [case for case in cases if case.renderer == renderer]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\[\]-]+", "-", text).strip("-")


def describe(cases: Sequence[Case]) -> str:
    """The cases, one per line (``python -m memprompt.bench.workloads [FILE.af ...]``)."""
    return "\n".join(
        f"{case.id}{'  [quick]' if case.quick else ''}{'  [memory]' if case.memory else ''}  {json.dumps(case.params)}"
        for case in cases
    )


if __name__ == "__main__":
    import sys

    print(describe(all_cases(sys.argv[1:])))
