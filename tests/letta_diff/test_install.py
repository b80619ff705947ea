"""``memprompt.letta.install()``: a stock letta 0.16.8, patched, returns what it returns unpatched.

Every property test computes Letta's own result first, then installs memprompt,
calls the very same Letta function on the very same Letta objects, uninstalls,
and compares. Inputs are the shared Hypothesis strategies turned into Letta's
validated pydantic objects (items that Letta's validation refuses are dropped).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest

pytest.importorskip("letta.schemas.memory", reason="needs letta==0.16.8 installed")

try:  # the real Rust extension, not the pure-Python reference
    importlib.import_module("memprompt._core")
except ImportError as exc:
    pytest.fail(
        "tests/letta_diff/test_install.py needs memprompt's compiled extension in this venv: run "
        f"`{Path(sys.executable).parent}/pip install maturin==1.16.0 && VIRTUAL_ENV={sys.prefix} "
        f"{Path(sys.executable).parent}/maturin develop` in the repository ({exc})",
        pytrace=False,
    )

import letta  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from letta.helpers import (
    ToolRulesSolver,  # noqa: E402
    tool_rule_solver,  # noqa: E402
)
from letta.prompts.prompt_generator import PromptGenerator  # noqa: E402
from letta.schemas import tool_rule as lt  # noqa: E402
from letta.schemas.block import Block as LettaBlock  # noqa: E402
from letta.schemas.block import FileBlock as LettaFileBlock  # noqa: E402
from letta.schemas.embedding_config import EmbeddingConfig  # noqa: E402
from letta.schemas.llm_config import LLMConfig as LettaLLMConfig  # noqa: E402
from letta.schemas.memory import Memory as LettaMemory  # noqa: E402
from letta.schemas.source import Source as LettaSource  # noqa: E402
from strategies import (  # noqa: E402
    MODES,
    SOURCE_IDS,
    blocks,
    client_skills,
    memories,
    metadata_args,
    system_message_args,
    texts,
)

import memprompt.letta as mpl  # noqa: E402
from memprompt import _core  # noqa: E402
from memprompt.types import LLMConfig as MpLLMConfig  # noqa: E402
from memprompt.types import Source as MpSource  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# Every attribute install() replaces.
PATCHED = [
    (LettaMemory, "compile"),
    (LettaMemory, "compile_available_skills"),
    (LettaMemory, "_render_memory_filesystem"),
    (PromptGenerator, "compile_memory_metadata_block"),
    (PromptGenerator, "get_system_message_from_compiled_memory"),
    (ToolRulesSolver, "compile_tool_rule_prompts"),
]
STOCK = {(cls, name): vars(cls)[name] for cls, name in PATCHED}


@pytest.fixture(autouse=True)
def never_left_installed():
    mpl.uninstall()
    yield
    mpl.uninstall()
    assert all(vars(cls)[name] is STOCK[(cls, name)] for cls, name in PATCHED)


# --- stock versus installed ---------------------------------------------------------


def outcome(call):
    """("ok", result) or ("raised", exception type)."""
    try:
        return "ok", call()
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception type is part of the behaviour
        return "raised", type(exc)


def assert_patched_same(call, view=lambda result: result):
    """``call()`` with memprompt installed returns what it returns on stock Letta (or raises the same type)."""
    assert not mpl.is_installed()
    expected = outcome(call)
    mpl.install()
    try:
        actual = outcome(call)
    finally:
        mpl.uninstall()
    if expected[0] == actual[0] == "ok":
        assert view(actual[1]) == view(expected[1])
    else:
        assert actual == expected, f"installed {actual[0]} {actual[1]!r}, stock {expected[0]} {expected[1]!r}"
    return expected


# --- the shared strategies' inputs as Letta's validated objects ----------------------

EMBEDDING = EmbeddingConfig.default_config(provider="openai")
# Letta's ids must look like "source-<hex>": the strategies' three ids, made valid.
LETTA_SOURCE_IDS = {sid: f"source-{i:08x}-0000-4000-8000-000000000000" for i, sid in enumerate(SOURCE_IDS)}


def _valid(make):
    try:
        return make()
    except ValueError:  # pydantic's ValidationError: Letta refuses this item
        return None


def letta_block(b):
    return _valid(
        lambda: LettaBlock(
            label=b.label,
            value=b.value,
            description=b.description,
            limit=b.limit,
            read_only=getattr(b, "read_only", False),
        )
    )


def letta_file_block(b):
    source_id = getattr(b, "source_id", "source-1")
    return _valid(
        lambda: LettaFileBlock(
            label=b.label,
            value=b.value,
            description=b.description,
            limit=b.limit,
            read_only=getattr(b, "read_only", False),
            source_id=LETTA_SOURCE_IDS.get(source_id, source_id),
            file_id="file-0",
            is_open=bool(b.value),
        )
    )


def letta_memory(blocks=(), file_blocks=(), agent_type=None, git_enabled=False) -> LettaMemory:
    fields = {
        "blocks": [x for x in map(letta_block, blocks) if x is not None],
        "file_blocks": [x for x in map(letta_file_block, file_blocks) if x is not None],
        "git_enabled": git_enabled,
    }
    memory = _valid(lambda: LettaMemory(agent_type=agent_type, **fields))
    if memory is None:
        # A plain (non-str) Enum: pydantic refuses it, but Memory.compile reads any agent_type it holds.
        memory = LettaMemory(**fields)
        memory.__dict__["agent_type"] = agent_type
    return memory


def letta_source(s):
    if not isinstance(s, MpSource):
        return s  # a look-alike with some attributes missing: both renderers read it with getattr
    extra = {"id": LETTA_SOURCE_IDS[s.id]} if s.id in LETTA_SOURCE_IDS else {}
    made = _valid(
        lambda: LettaSource(
            name=s.name, description=s.description, instructions=s.instructions, embedding_config=EMBEDDING, **extra
        )
    )
    return s if made is None else made


def letta_llm_config(c):
    if not isinstance(c, MpLLMConfig):
        return c
    made = _valid(lambda: LettaLLMConfig(model="m", model_endpoint_type=c.model_endpoint_type, context_window=8192))
    return c if made is None else made


def letta_case(case):
    """A ``memories()`` case as (Letta Memory, Memory.compile kwargs with Letta's sources and config)."""
    memory_kwargs, compile_kwargs = case
    compile_kwargs = dict(compile_kwargs)
    if compile_kwargs["sources"] is not None:
        compile_kwargs["sources"] = [letta_source(s) for s in compile_kwargs["sources"]]
    compile_kwargs["llm_config"] = letta_llm_config(compile_kwargs["llm_config"])
    return letta_memory(**memory_kwargs), compile_kwargs


# --- Memory --------------------------------------------------------------------------


def check_compile(case):
    memory, kwargs = letta_case(case)
    assert_patched_same(lambda: memory.compile(**kwargs))


@given(memories())
def test_compile_any_mode(case):
    check_compile(case)


@pytest.mark.parametrize("mode", [m for m in MODES if m != "any"])
@given(data=st.data())
def test_compile_each_mode(mode, data):
    check_compile(data.draw(memories(mode=mode)))


def test_line_numbered_with_letta_anthropic_config():
    memory = LettaMemory(
        blocks=[LettaBlock(label="human", value="line one\nline two", limit=500)], agent_type="letta_v1_agent"
    )
    config = LettaLLMConfig(model="claude-sonnet-4", model_endpoint_type="anthropic", context_window=200000)
    expected = assert_patched_same(lambda: memory.compile(llm_config=config))
    assert expected[0] == "ok" and "1\u2192 line one" in expected[1]


@given(texts(), texts())
def test_subclasses_inherit_the_patch(persona, human):
    from letta.schemas.memory import ChatMemory

    memory = _valid(lambda: ChatMemory(persona=persona, human=human))
    if memory is not None:
        assert_patched_same(lambda: memory.compile())


@given(memories())
def test_compile_async(case):
    memory, kwargs = letta_case(case)
    assert_patched_same(lambda: asyncio.run(memory.compile_async(**kwargs)))


@pytest.mark.parametrize("reserved", ["__value__", "__description__", "__label__"])
def test_git_fallback_calls_letta(reserved):
    """The labels the Rust core leaves to Python: the original Letta method renders them."""
    memory = LettaMemory(
        blocks=[
            LettaBlock(label="system/persona", value="me"),
            LettaBlock(label=f"system/a/{reserved}", value="odd"),
            LettaBlock(label="system/a", value="leaf"),
        ],
        git_enabled=True,
    )
    assert _core.compile_memory(memory.blocks, memory.file_blocks, memory.agent_type, memory.git_enabled) is None
    assert_patched_same(lambda: memory.compile())


@given(blocks(), st.one_of(st.none(), client_skills()))
def test_available_skills(memory_blocks, skills):
    memory = letta_memory(memory_blocks)
    assert_patched_same(lambda: memory.compile_available_skills(skills))


@given(blocks(), st.one_of(st.none(), st.just([]), client_skills()), st.sampled_from(["", "before\n"]))
def test_memory_filesystem_writes_into_the_buffer(memory_blocks, skills, already):
    memory = letta_memory(memory_blocks)

    def render():
        out = StringIO()
        out.write(already)
        returned = memory._render_memory_filesystem(out, client_skills=skills)
        return returned, out.getvalue()

    assert_patched_same(render)


# --- PromptGenerator -------------------------------------------------------------------


@given(metadata_args())
def test_metadata_block(args):
    assert_patched_same(lambda: PromptGenerator.compile_memory_metadata_block(**args))


@given(metadata_args())
def test_metadata_block_positional(args):
    assert_patched_same(lambda: PromptGenerator.compile_memory_metadata_block(*args.values()))


@given(system_message_args())
def test_system_message(args):
    assert_patched_same(lambda: PromptGenerator.get_system_message_from_compiled_memory(**args))


def server_module(name: str):
    """One of Letta's agent or service modules; they need its postgres extra (asyncpg)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        pytest.skip(f"{name} does not import here ({exc}); install asyncpg==0.30.0 (letta's postgres extra)")


def test_modules_that_imported_the_class_see_the_patch():
    # Every letta module that imports PromptGenerator imports the class (none imports its functions by value).
    names = ("agents.letta_agent_v2", "agents.base_agent", "agents.voice_agent", "services.agent_manager")
    modules = [server_module(f"letta.{name}") for name in (*names, "services.helpers.agent_manager_helper")]
    agent_manager_helper = modules[-1]
    assert all(m.PromptGenerator is PromptGenerator for m in modules)
    assert agent_manager_helper.Memory is LettaMemory and agent_manager_helper.ToolRulesSolver is ToolRulesSolver
    with mpl.installed():
        for module in modules:
            for name in ("compile_memory_metadata_block", "get_system_message_from_compiled_memory"):
                function = vars(module.PromptGenerator)[name]
                # Same shape as Letta's: trace_method's plain wrapper around a staticmethod of memprompt's function.
                assert type(function) is type(STOCK[(PromptGenerator, name)])
                assert isinstance(function.__wrapped__, staticmethod)
                assert function.__wrapped__.__func__.__module__ == "memprompt.letta.rendering"
                assert function.__name__ == name and function.__qualname__ == f"PromptGenerator.{name}"


def test_traced_calls_bind_letta_signatures(monkeypatch):
    """With tracing on, trace_method binds the arguments to the signature: it must be Letta's."""
    import inspect

    from letta.otel import tracing

    monkeypatch.setattr(tracing, "_is_tracing_initialized", True)
    when = dt.datetime(2026, 1, 1, 12, tzinfo=dt.timezone.utc)
    assert_patched_same(
        lambda: PromptGenerator.get_system_message_from_compiled_memory(
            system_prompt="Hi {CORE_MEMORY}",
            memory_with_sources="<m/>",
            agent_id="agent-1",
            in_context_memory_last_edit=when,
            timezone="UTC",
        )
    )
    assert_patched_same(lambda: PromptGenerator.compile_memory_metadata_block(when, "Europe/Paris", "agent-1"))
    with mpl.installed():
        for cls, name in PATCHED:
            # inspect follows __wrapped__ through trace_method's wrapper and the staticmethod.
            stock = inspect.signature(STOCK[(cls, name)]).parameters.values()
            patched = inspect.signature(vars(cls)[name]).parameters.values()
            assert [(p.name, p.kind, p.default) for p in patched] == [(p.name, p.kind, p.default) for p in stock]


# --- tool rules -------------------------------------------------------------------------

tool_names = st.one_of(st.sampled_from(["send_message", "search", "a", "", "b c", "x,y"]), texts(max_pieces=4))
prompt_templates = st.one_of(st.none(), texts(max_pieces=4))


@st.composite
def child_rule(draw):
    children = draw(st.lists(tool_names, max_size=4))
    named = draw(st.lists(st.sampled_from(children), max_size=2)) if children else []
    nodes = [lt.ToolCallNode(name=n, args=draw(st.one_of(st.none(), st.just({"q": 1})))) for n in named]
    return lt.ChildToolRule(
        tool_name=draw(tool_names),
        children=children,
        child_arg_nodes=nodes or None,
        prompt_template=draw(prompt_templates),
    )


@st.composite
def letta_tool_rule(draw):
    name = draw(tool_names)
    template = draw(prompt_templates)
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return draw(child_rule())
    if kind == 1:
        return lt.InitToolRule(
            tool_name=name, prompt_template=template, args=draw(st.one_of(st.none(), st.just({"x": "y"})))
        )
    if kind == 2:
        return lt.TerminalToolRule(tool_name=name, prompt_template=template)
    if kind == 3:
        mapping = draw(
            st.dictionaries(
                st.one_of(st.text(max_size=3), st.integers(-2, 2), st.booleans()), tool_names, min_size=1, max_size=3
            )
        )
        return lt.ConditionalToolRule(
            tool_name=name,
            prompt_template=template,
            default_child=draw(st.one_of(st.none(), tool_names)),
            child_output_mapping=mapping,
            require_output_mapping=draw(st.booleans()),
        )
    if kind == 4:
        return lt.ContinueToolRule(tool_name=name, prompt_template=template)
    if kind == 5:
        return lt.RequiredBeforeExitToolRule(tool_name=name, prompt_template=template)
    if kind == 6:
        return lt.MaxCountPerStepToolRule(
            tool_name=name, prompt_template=template, max_count_limit=draw(st.integers(-1, 10**6))
        )
    if kind == 7:
        return lt.ParentToolRule(
            tool_name=name, prompt_template=template, children=draw(st.lists(tool_names, max_size=4))
        )
    return lt.RequiresApprovalToolRule(tool_name=name, prompt_template=template)


def block_fields(block):
    """A Letta Block by its fields (its id is new on every call, in Letta too)."""
    if block is None:
        return None
    return type(block), block.model_dump(exclude={"id"})


@given(st.one_of(st.none(), st.lists(letta_tool_rule(), max_size=8)))
def test_tool_rule_prompts(rules):
    solver = ToolRulesSolver(tool_rules=rules)
    expected = assert_patched_same(lambda: solver.compile_tool_rule_prompts(), view=block_fields)
    if expected[1] is not None:
        assert type(expected[1]) is tool_rule_solver.Block


@given(st.lists(letta_tool_rule(), max_size=8), memories())
def test_tool_rules_in_the_compiled_memory(rules, case):
    memory, kwargs = letta_case(case)
    solver = ToolRulesSolver(tool_rules=rules)
    assert_patched_same(lambda: memory.compile(**{**kwargs, "tool_usage_rules": solver.compile_tool_rule_prompts()}))


@given(st.lists(letta_tool_rule(), max_size=6), memories(), system_message_args())
def test_whole_system_message(rules, case, args):
    """Letta's own composers, unpatched themselves, built from the patched pieces."""
    compile_system_message = server_module("letta.services.helpers.agent_manager_helper").compile_system_message
    memory, kwargs = letta_case(case)
    common = {
        "system_prompt": args["system_prompt"],
        "in_context_memory": memory,
        "agent_id": args["agent_id"],
        "in_context_memory_last_edit": args["in_context_memory_last_edit"],
        "timezone": args["timezone"],
        "previous_message_count": args["previous_message_count"],
        "tool_rules_solver": ToolRulesSolver(tool_rules=rules),
        "sources": kwargs["sources"],
        "max_files_open": kwargs["max_files_open"],
        "llm_config": kwargs["llm_config"],
        "conversation_id": args["conversation_id"],
    }
    assert_patched_same(lambda: compile_system_message(**common, archival_memory_size=args["archival_memory_size"]))
    assert_patched_same(
        lambda: asyncio.run(
            PromptGenerator.compile_system_message_async(**common, archival_memory_size=args["archival_memory_size"])
        )
    )


# --- install, uninstall, version ---------------------------------------------------------


def test_install_twice_uninstall_twice():
    assert not mpl.is_installed()
    mpl.install()
    first = {(cls, name): vars(cls)[name] for cls, name in PATCHED}
    mpl.install()  # harmless: nothing is wrapped twice
    assert all(vars(cls)[name] is first[(cls, name)] for cls, name in PATCHED)
    assert all(first[key] is not STOCK[key] for key in PATCHED)
    assert mpl.is_installed()
    mpl.uninstall()
    assert all(vars(cls)[name] is STOCK[(cls, name)] for cls, name in PATCHED)
    mpl.uninstall()
    assert not mpl.is_installed()
    assert all(vars(cls)[name] is STOCK[(cls, name)] for cls, name in PATCHED)


def test_context_manager_restores_even_on_error():
    with pytest.raises(KeyError):
        with mpl.installed():
            assert mpl.is_installed()
            assert vars(LettaMemory)["compile"] is not STOCK[(LettaMemory, "compile")]
            raise KeyError("boom")
    assert not mpl.is_installed()
    assert all(vars(cls)[name] is STOCK[(cls, name)] for cls, name in PATCHED)


def test_context_manager_keeps_an_earlier_install():
    mpl.install()
    with mpl.installed():
        with mpl.installed():
            pass
        assert mpl.is_installed()
    assert mpl.is_installed()
    mpl.uninstall()


def test_other_letta_version_is_refused(monkeypatch):
    monkeypatch.setattr(letta, "__version__", "0.17.0")
    with pytest.raises(RuntimeError, match=r"0\.16\.8.*0\.17\.0.*allow_other_versions=True"):
        mpl.install()
    assert not mpl.is_installed()
    assert all(vars(cls)[name] is STOCK[(cls, name)] for cls, name in PATCHED)
    with pytest.raises(RuntimeError, match="allow_other_versions"):
        with mpl.installed():
            pass
    mpl.install(allow_other_versions=True)
    assert mpl.is_installed()


def test_importing_memprompt_letta_does_not_import_letta():
    code = (
        "import sys, memprompt, memprompt.letta; "
        "assert 'letta' not in sys.modules, sorted(m for m in sys.modules if m.startswith('letta'))"
    )
    # The memprompt this test session imported (installed, or a source tree with a built extension).
    package_root = str(Path(_core.__file__).resolve().parent.parent)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": package_root})
