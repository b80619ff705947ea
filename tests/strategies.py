"""Hypothesis strategies shared by every property test (Rust core vs reference, reference vs Letta).

They aim at the traps of Python's str: lone surrogates, NUL, "\\r\\n", every
character that ``str.isspace()`` accepts, astral characters, sometimes large
values; path-like labels with empty parts, collisions, duplicates and Letta's
internal key names; agent types as enums, strings in any case, or None; skill
locations with ``..`` and ``//``; datetimes in years 1-9999, naive and aware,
in every pytz timezone. Everything they build is an input Letta accepts.

Import them as ``from strategies import ...`` with tests/ on ``sys.path``.
"""

from __future__ import annotations

import datetime as dt
import enum
import os

import pytz
from _load_reference import load_reference
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

load_reference()  # makes `memprompt` importable even where the Rust extension is not built

from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules  # noqa: E402

# --- profiles -------------------------------------------------------------------


def register_profiles() -> None:
    """Register the "ci" and "dev" profiles and load the one named by $HYPOTHESIS_PROFILE (default "ci")."""
    relaxed = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("ci", derandomize=True, max_examples=300, deadline=None, suppress_health_check=relaxed)
    settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=relaxed)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Rare choices are made on a roll of 1, not 0: Hypothesis draws zeros when an example
# runs out of data, and those must pick the usual case.


def mostly(usual, other, one_in: int = 6):
    """``usual``, except one time in ``one_in`` ``other`` (one_of would weigh them alike)."""
    return st.integers(0, one_in - 1).flatmap(lambda roll: other if roll == 1 else usual)


def rarely(draw, one_in: int) -> bool:
    """True one time in ``one_in``."""
    return draw(st.integers(0, one_in - 1)) == 1


# --- text -----------------------------------------------------------------------

WHITESPACE = tuple(chr(c) for c in range(0x110000) if chr(c).isspace())
TRICKY_PIECES = (
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\x00",
    "\ud800",
    "\udfff",
    "\U0001f600",
    "\U0010ffff",
    "→",
    "/",
    "//",
    "<",
    ">",
    '"',
    "{",
    "}",
    "{}",
    "{CORE_MEMORY}",
    "\n\n<memory_metadata>",
    ".",
    "..",
    "SKILL",
    "SKILL.md",
    "é",
    "İ",
    "ß",
    "ﬃ",
    "a",
    "b",
    "Z",
    "0",
)
any_char = st.characters(exclude_categories=())  # every code point, lone surrogates included
_piece = st.one_of(st.sampled_from(TRICKY_PIECES), st.sampled_from(WHITESPACE), any_char)
short_texts = st.lists(_piece, max_size=10).map("".join)


@st.composite
def texts(draw, max_pieces: int = 10) -> str:
    """Short text full of traps; now and then thousands of characters."""
    text = draw(st.lists(_piece, max_size=max_pieces).map("".join))
    if text and rarely(draw, 16):
        text *= draw(st.integers(100, 5000))
    return text


optional_texts = st.one_of(st.none(), texts())

# --- labels ---------------------------------------------------------------------

# Letta's git renderer keeps a leaf's fields under these keys; its filesystem tree uses __block__.
RESERVED_PARTS = ("__value__", "__description__", "__label__", "__block__")
LABEL_PARTS = (
    "system",
    "persona",
    "human",
    "skills",
    "SKILL",
    "notes",
    "a",
    "b",
    "a.md",
    "b.md",
    "x",
    "x.md",
    ".",
    "..",
    "",
    " ",
    "system ",
    "Skills",
    "projects",
)
FIXED_LABELS = (
    "persona",
    "human",
    "system",
    "system/human",
    "system/persona",
    "system/persona/extra",
    "system/",
    "system//persona",
    "/system/human",
    "system/human/",
    "system/a/b",
    "system/a",
    "system/a.md/b",
    "skills",
    "skills/",
    "skills/x",
    "skills/x/SKILL",
    "skills/x/SKILL/more",
    "skills//SKILL",
    "skills/x/notes",
    "skills/x/",
    "skills/y",
    "/",
    "//",
    "",
    " ",
    "notes",
    "notes/x",
    "notes/x.md/y",
    "notes/x/",
    "notes//x",
    "a",
    "a/",
    "a//",
    "a.md/b",
    " a",
    "a\t",
)
GIT_LABELS = (
    "system/persona",
    "system/persona",
    "system/persona",
    "system/human",
    "system/human/notes",
    "system/a/b",
    "system/b",
    "x",
    "x//",
    "x.md/y",
    "x.md/y/z",
    "notes/x",
    "notes/x.md/y",
    "notes/x.md/y.md/z",
    "notes/x/y",
)


@st.composite
def label_parts(draw) -> str:
    """One path part: mostly from a small pool (so labels collide), rarely reserved or free text."""
    if rarely(draw, 30):
        return draw(st.sampled_from(RESERVED_PARTS))
    if rarely(draw, 10):
        return draw(short_texts)
    return draw(st.sampled_from(LABEL_PARTS))


@st.composite
def path_labels(draw) -> str:
    prefix = draw(st.sampled_from(("", "", "system/", "system/", "skills/", "/", "system//")))
    parts = draw(st.lists(label_parts(), min_size=1, max_size=5))
    suffix = draw(st.sampled_from(("", "", "", "/", "//")))
    return prefix + "/".join(parts) + suffix


@st.composite
def _labels(draw, pool: tuple[str, ...]):
    roll = draw(st.integers(0, 9))
    if roll == 0:
        return None
    if roll == 1:
        return draw(texts(max_pieces=6))
    if roll <= 4:
        return draw(path_labels())
    return draw(st.sampled_from(pool))


labels = _labels(FIXED_LABELS)
# Git memory: system/ labels, and outside labels whose files and directories collide ("x" then "x.md/y").
git_labels = _labels(FIXED_LABELS + GIT_LABELS * 3)

# --- blocks ---------------------------------------------------------------------


class LooseBlock:
    """A look-alike block without ``read_only`` or ``source_id``: readers use their defaults."""

    def __init__(self, value, label, description, limit):
        self.value = value
        self.label = label
        self.description = description
        self.limit = limit

    def __repr__(self) -> str:
        return f"LooseBlock(label={self.label!r}, value={self.value!r})"


class HookedBlock(LooseBlock):
    """Shaped like Letta's pydantic blocks: fields in ``__dict__``, a ``__getattr__`` for what is not there."""

    def __getattr__(self, name):
        if name == "read_only":
            return True
        raise AttributeError(name)


limits = st.one_of(st.none(), st.integers(-3, 10**6), st.just(100000), st.booleans())


@st.composite
def block(draw, label_strategy=labels):
    """One block: memprompt's Block, or now and then a LooseBlock or a HookedBlock."""
    value = draw(st.one_of(texts(), st.none(), st.just("")))
    label = draw(label_strategy)
    description = draw(optional_texts)
    limit = draw(limits)
    if rarely(draw, 6):
        return draw(st.sampled_from((LooseBlock, HookedBlock)))(value, label, description, limit)
    return Block(value=value, label=label, description=description, limit=limit, read_only=draw(st.booleans()))


def blocks(max_size: int = 8, label_strategy=labels):
    """A list of blocks, labels often colliding."""
    return st.lists(block(label_strategy), max_size=max_size)


SOURCE_IDS = ("source-1", "source-2", "source-3")
source_ids = mostly(st.sampled_from(SOURCE_IDS), st.one_of(st.none(), short_texts), one_in=4)
file_labels = st.one_of(st.sampled_from(("notes.txt", "docs/a.md", "f", "", "f")), st.none(), texts(max_pieces=4))


@st.composite
def file_block(draw):
    """One file block; labels repeat often, source ids mostly match ``sources()``'s."""
    value = draw(mostly(texts(), st.sampled_from((None, ""))))
    label = draw(file_labels)
    description = draw(optional_texts)
    limit = draw(limits)
    if rarely(draw, 6):
        return LooseBlock(value, label, description, limit)
    return FileBlock(
        value=value,
        label=label,
        description=description,
        limit=limit,
        read_only=draw(st.booleans()),
        source_id=draw(source_ids),
    )


def file_blocks(max_size: int = 6):
    """A list of file blocks (before Memory drops repeated labels)."""
    return st.lists(file_block(), max_size=max_size)


# --- sources, skills, rules, configs ---------------------------------------------


class BareSource:
    """A look-alike source with only some attributes."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return f"BareSource({self.__dict__!r})"


@st.composite
def source(draw):
    """One source; its name may be any object (None, an int) since Letta renders it as an f-string."""
    name = draw(st.one_of(texts(max_pieces=6), st.none(), st.integers(-5, 5)))
    source_id = draw(mostly(st.sampled_from(SOURCE_IDS), st.none()))
    description = draw(st.one_of(optional_texts, st.just("")))
    instructions = draw(st.one_of(optional_texts, st.just("")))
    if rarely(draw, 6):
        present = draw(st.sets(st.sampled_from(("id", "name", "description", "instructions"))))
        fields = {"id": source_id, "name": name, "description": description, "instructions": instructions}
        return BareSource(**{key: fields[key] for key in present})
    return Source(source_id, name, description, instructions)


def sources(max_size: int = 4):
    """A list of sources, maybe empty."""
    return st.lists(source(), max_size=max_size)


SKILL_NAMES = ("x", "y", "b", "a/b", "a/x", "..", ".", "", "skills", "SKILL", "SKILL.md")
LOCATION_PARTS = ("..", ".", "", "skills", "x", "a", "b", "SKILL.md", "SKILL", "${MEMORY_DIR}", " ")
# Roots that blocks' skills and client skills share, so their trees meet.
SHARED_SKILL_ROOTS = ("${MEMORY_DIR}/skills", "/abs/skills")
SKILL_ROOTS = SHARED_SKILL_ROOTS + ("rel", "", "/", "//", "../up", "a/../b", "./x", "~", "../../../../../..")


@st.composite
def skill_locations(draw, name: str):
    kind = draw(st.integers(0, 5))
    root = draw(mostly(st.sampled_from(SHARED_SKILL_ROOTS), st.sampled_from(SKILL_ROOTS), one_in=2))
    if kind == 0:
        return draw(st.sampled_from((None, "", "   ", "/SKILL.md", "SKILL.md", "//SKILL.md")))
    if kind == 1:
        return draw(texts(max_pieces=6))
    if kind <= 3:
        # <root>/<name>/SKILL.md: the skill keeps its folder in the tree
        location = f"{root}/{name.split('/')[-1]}/SKILL.md"
    elif kind == 4:
        # a file beside other skills' folders: "<root>/x" and "<root>/x/SKILL.md" collide
        location = f"{root}/{draw(st.sampled_from(('x', 'y', 'b', 'SKILL.md', '..')))}"
    else:
        parts = draw(st.lists(st.one_of(st.sampled_from(LOCATION_PARTS), st.just(name)), min_size=1, max_size=5))
        location = draw(st.sampled_from(("", "/", "//"))) + "/".join(parts)
        if draw(st.booleans()):
            location += "/SKILL.md"
    padding = draw(st.sampled_from(("", "", " ", "\t\n", "\x1f")))
    return padding + location + padding


@st.composite
def client_skill(draw):
    name = draw(st.one_of(st.sampled_from(SKILL_NAMES), texts(max_pieces=4)))
    description = draw(optional_texts)
    return ClientSkill(name, description, draw(skill_locations(name)))


@st.composite
def client_skills(draw, max_size: int = 5):
    """A list of client skills, maybe empty; sometimes a file and a skill folder of the same name."""
    skills = draw(st.lists(client_skill(), max_size=max_size))
    if rarely(draw, 4):
        root = draw(st.sampled_from(SHARED_SKILL_ROOTS))
        name = draw(st.sampled_from(SKILL_NAMES))
        folder = name.split("/")[-1]
        file = ClientSkill(f"{name}-file", None, f"{root}/{folder}")
        skill = ClientSkill(name, None, f"{root}/{folder}/SKILL.md")
        skills[draw(st.integers(0, len(skills))) : 0] = draw(st.permutations([file, skill]))
    return skills


class BareRules:
    """tool_usage_rules without attributes: Letta's getattr defaults apply."""


tool_usage_rules = st.one_of(
    st.none(),
    st.builds(ToolUsageRules, optional_texts, optional_texts),
    st.just(BareRules()),
)


class FalsyConfig:
    """An LLM config that is falsy although it says "anthropic": no line numbers."""

    model_endpoint_type = "anthropic"

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "FalsyConfig()"


class Answer:
    """A model endpoint type whose ``== "anthropic"`` answers what it is told: no attribute is written."""

    def __init__(self, answer: bool):
        self.answer = answer

    def __eq__(self, other):
        return self.answer

    __hash__ = object.__hash__


class ConfigWithoutEndpoint:
    def __repr__(self) -> str:
        return "ConfigWithoutEndpoint()"


ANTHROPIC = LLMConfig("anthropic")
llm_configs = st.one_of(
    st.none(),
    st.just(ANTHROPIC),
    st.sampled_from([LLMConfig("openai"), LLMConfig(None), LLMConfig("Anthropic"), LLMConfig("anthropic ")]),
    st.just(FalsyConfig()),
    st.just(ConfigWithoutEndpoint()),
)
max_files_open = st.one_of(st.none(), st.integers(-3, 50), st.booleans())

# --- agent types -----------------------------------------------------------------

AGENT_TYPES = (
    "memgpt_agent",
    "memgpt_v2_agent",
    "letta_v1_agent",
    "react_agent",
    "workflow_agent",
    "split_thread_agent",
    "sleeptime_agent",
    "voice_convo_agent",
    "voice_sleeptime_agent",
)
REACT_TYPES = ("react_agent", "workflow_agent")
LINE_NUMBERED_TYPES = ("sleeptime_agent", "memgpt_v2_agent", "letta_v1_agent")


class LocalAgentType(enum.Enum):
    """A plain Enum with str values, not Letta's: the renderer reads ``.value``."""

    SLEEPTIME = "Sleeptime_Agent"
    V1 = "LETTA_V1_AGENT"
    V2 = "memgpt_v2_agent"
    MEMGPT = "memgpt_agent"
    REACT = "React_Agent"
    WORKFLOW = "workflow_agent"


@st.composite
def random_case(draw, name: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.upper() if flip else c for c, flip in zip(name, flips, strict=True))


def agent_types(names=AGENT_TYPES):
    """None, a name in random case (or with the Kelvin sign, which lowercases to "k"), or an enum."""
    members = [m for m in LocalAgentType if m.value.lower() in names]
    choices = [st.sampled_from(names).flatmap(random_case)]
    if members:
        choices.append(st.sampled_from(members))
    if "workflow_agent" in names:
        choices.append(st.just("WOR\u212aFLOW_AGENT"))
    if names == AGENT_TYPES:
        choices += [st.none(), st.just(""), short_texts]
    return st.one_of(choices)


# --- memories --------------------------------------------------------------------

MODES = ("plain", "line_numbered", "git", "react", "any")
NOT_SPECIAL = tuple(t for t in AGENT_TYPES if t not in REACT_TYPES + LINE_NUMBERED_TYPES)


@st.composite
def memories(draw, mode: str | None = None):
    """(kwargs for ``Memory``, kwargs for ``Memory.compile``), in one rendering mode or any."""
    mode = mode or draw(st.sampled_from(MODES))
    git_enabled = False
    llm_config = draw(llm_configs)
    if mode == "plain":
        agent_type = draw(st.one_of(st.none(), agent_types(NOT_SPECIAL), agent_types(LINE_NUMBERED_TYPES)))
        if agent_type is not None and llm_config is ANTHROPIC:
            llm_config = None
    elif mode == "line_numbered":
        agent_type = draw(agent_types(LINE_NUMBERED_TYPES))
        llm_config = ANTHROPIC
    elif mode == "git":
        agent_type = draw(st.one_of(st.none(), agent_types(NOT_SPECIAL + LINE_NUMBERED_TYPES)))
        git_enabled = True
    elif mode == "react":
        agent_type = draw(agent_types(REACT_TYPES))
        git_enabled = draw(st.booleans())
    else:
        agent_type = draw(agent_types())
        git_enabled = draw(st.booleans())
    memory_kwargs = {
        "blocks": draw(blocks(label_strategy=git_labels if git_enabled else labels)),
        "file_blocks": draw(file_blocks()),
        "agent_type": agent_type,
        "git_enabled": git_enabled,
    }
    compile_kwargs = {
        "tool_usage_rules": draw(tool_usage_rules),
        "sources": draw(st.one_of(st.none(), sources())),
        "max_files_open": draw(max_files_open),
        "llm_config": llm_config,
        "client_skills": draw(st.one_of(st.none(), client_skills())),
    }
    return memory_kwargs, compile_kwargs


# --- metadata and system message -------------------------------------------------

MIN_DATETIME = dt.datetime(1, 1, 1)
MAX_DATETIME = dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
SPECIAL_DATETIMES = (
    MIN_DATETIME,
    MAX_DATETIME,
    dt.datetime(1883, 11, 18, 12, 3, 58),
    dt.datetime(1969, 12, 31, 23, 59, 59),
    dt.datetime(1970, 1, 1),
    dt.datetime(2021, 3, 14, 2, 30),
    dt.datetime(2021, 11, 7, 1, 30),
    dt.datetime(2037, 7, 1, 12),
    dt.datetime(2038, 1, 19, 3, 14, 8),
    dt.datetime(2050, 7, 1, 12),
)
naive_datetimes = st.one_of(
    st.sampled_from(SPECIAL_DATETIMES), st.datetimes(min_value=MIN_DATETIME, max_value=MAX_DATETIME)
)
timezone_names = st.sampled_from(pytz.all_timezones)


@st.composite
def datetimes(draw) -> dt.datetime:
    """Naive; fixed offsets (seconds too); pytz-localized; or a raw pytz zone attached (its LMT offset)."""
    naive = draw(naive_datetimes)
    kind = draw(st.sampled_from(("naive", "fixed", "utc", "localized", "attached")))
    if kind == "naive":
        return naive
    if kind == "fixed":
        offset = dt.timedelta(seconds=draw(st.integers(-86399, 86399)))
        return naive.replace(tzinfo=dt.timezone(offset))
    if kind == "utc":
        return naive.replace(tzinfo=draw(st.sampled_from((dt.UTC, pytz.utc))))
    zone = pytz.timezone(draw(timezone_names))
    if kind == "localized":
        try:
            return zone.localize(naive)
        except (OverflowError, ValueError):
            pass  # pytz cannot localize at the very ends of the datetime range
    return naive.replace(tzinfo=zone)


timezones = st.one_of(
    st.none(),
    st.just(""),
    timezone_names,
    timezone_names.flatmap(random_case),
    st.sampled_from(
        ("UTC", "utc", "us/eastern", "US/EASTERN", "Etc/GMT+5", "GMT", "Z", " UTC", "Mars/Olympus", "local")
    ),
    short_texts,
)
counts = st.one_of(st.integers(-5, 10**12), st.none(), st.booleans())
# Where an int stops fitting 64 bits (the Rust side formats those that fit itself).
ints_at_i64_edges = st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**40])


@st.composite
def metadata_args(draw) -> dict:
    """Keyword arguments for ``compile_memory_metadata_block``."""
    return {
        "memory_edit_timestamp": draw(datetimes()),
        "timezone": draw(timezones),
        "agent_id": draw(st.one_of(st.just("agent-123"), texts(max_pieces=5), st.none(), st.integers())),
        "conversation_id": draw(st.one_of(st.just("default"), texts(max_pieces=5), st.none())),
        "previous_message_count": draw(
            st.one_of(st.integers(-5, 10**9), ints_at_i64_edges, st.booleans(), st.none(), short_texts)
        ),
        "archival_memory_size": draw(counts),
        "archive_tags": draw(st.one_of(st.none(), st.just([]), st.lists(texts(max_pieces=4), max_size=4))),
    }


TEMPLATE_PIECES = ("{CORE_MEMORY}", "{CORE_MEMORY", "CORE_MEMORY}", "{{CORE_MEMORY}}", "{", "}", "{}", "\n\n")
templates = st.lists(st.one_of(st.sampled_from(TEMPLATE_PIECES), texts(max_pieces=4)), max_size=6).map("".join)


@st.composite
def system_message_args(draw) -> dict:
    """Keyword arguments for ``get_system_message_from_compiled_memory``."""
    metadata = draw(metadata_args())
    return {
        "system_prompt": draw(templates),
        "memory_with_sources": draw(texts()),
        "agent_id": metadata["agent_id"],
        "in_context_memory_last_edit": metadata["memory_edit_timestamp"],
        "timezone": metadata["timezone"],
        "user_defined_variables": draw(mostly(st.none(), st.sampled_from(({}, {"name": "x"})), one_in=8)),
        "append_icm_if_missing": draw(st.booleans()),
        "template_format": draw(mostly(st.just("f-string"), st.sampled_from(("mustache", "F-STRING")))),
        "previous_message_count": metadata["previous_message_count"],
        "archival_memory_size": metadata["archival_memory_size"],
        "archive_tags": metadata["archive_tags"],
        "conversation_id": metadata["conversation_id"],
    }


FORMAT_PIECES = (
    "{}",
    "{x}",
    "{y}",
    "{x:>5}",
    "{x!r}",
    "{0}",
    "{",
    "}",
    "{{",
    "}}",
    "{x.real}",
    "{x[0]}",
    "{CORE_MEMORY}",
    "{ }",
    "{:}",
    "{x:{y}}",
    "{unknown}",
)
format_templates = st.lists(st.one_of(st.sampled_from(FORMAT_PIECES), short_texts), max_size=6).map("".join)
format_variables = st.dictionaries(
    st.sampled_from(("x", "y", "CORE_MEMORY", " ", "0")), st.one_of(short_texts, st.integers()), max_size=4
)
