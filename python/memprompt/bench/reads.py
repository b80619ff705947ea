"""The read floor: CPython's own ``getattr`` of each field Letta's renderer reads, once per object.

A renderer of Letta's Python objects must read their fields; Letta reads them with
``getattr`` (``block.value``), and so may any renderer that gives CPython's own answer.
The read floor of a case reads, on the very objects every implementation gets, each
field Letta 0.16.8 reads there, once per object, by ``operator.attrgetter`` in C
(``list(map(attrgetter(*fields), objects))``: no Python frame per read), and nothing else.
Beside the copy floor (one fresh ``str`` of the output) it is what no renderer that
reads the objects and returns a new ``str`` can pass.

The fields are data: :data:`PARTS` lists, per part of a render, the fields Letta reads
of each kind of input object and which objects of that kind; :data:`RENDERER_PARTS`
says which parts each renderer runs (a compile's parts follow its memory, as
``Memory.compile`` chooses them: :func:`compile_parts`). :func:`check_reads` holds
them to Letta: it records, through the objects' own attribute lookup, every field
Letta's run reads of every input object, and every field the floor reads, and fails
unless the floor reads exactly Letta's (object, field) pairs, each once. The suite runs
it on every case (``memprompt bench`` and ``make bench-check-letta``).
"""

from __future__ import annotations

import inspect
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memprompt.reference.fields import read_tree_labels
from memprompt.reference.skills import skill_name
from memprompt.reference.tree_view import TreeView

# -- what Letta reads, as data ------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """``fields`` of the input objects of kind ``of`` that :data:`SELECTIONS` ``[of, which]`` picks."""

    of: str
    fields: tuple[str, ...]
    which: str = "every"

    def describe(self) -> str:
        fields = " ".join(f".{name}" for name in self.fields)
        return f"{self.of} {fields}" if self.which == "every" else f"{self.of} {fields} ({self.which})"


BLOCK_FIELDS = ("label", "value", "description", "limit", "read_only")

#: Each part of a render: the fields Letta 0.16.8 reads there, of which objects.
PARTS: dict[str, tuple[Read, ...]] = {
    # Memory.compile itself: the agent type (an enum's value), and the endpoint when an llm_config is given.
    "compile": (
        Read("memory", ("agent_type",)),
        Read("agent type", ("value",), "an enum"),
        Read("llm config", ("model_endpoint_type",), "if given"),
    ),
    # _render_memory_blocks_standard and _line_numbered.
    "memory blocks": (
        Read("memory", ("git_enabled", "blocks")),
        Read("block", BLOCK_FIELDS),
    ),
    "git memory": (
        Read("memory", ("git_enabled", "blocks")),
        Read("block", ("label",)),
        Read("block", ("value",), "the first system/persona"),
        Read("block", ("description", "value"), "the other system/ blocks with a path part"),
    ),
    "directories": (
        Read("memory", ("file_blocks",)),
        Read("source", ("name", "description", "instructions", "id")),
        Read("file block", ("source_id",), "every, while a source has an id"),
        Read("file block", ("label", "description", "limit", "read_only"), "in a source given"),
        Read("file block", ("value",), "every with max_files_open, else those in a source given"),
    ),
    # ToolRulesSolver.compile_tool_rule_prompts: each rule's render_prompt (run_first,
    # required_before_exit and requires_approval rules render nothing and read nothing).
    "tool rules": (
        Read("rule", ("children", "tool_name"), "constrain_child_tools, parent_last_tool"),
        Read("rule", ("tool_name",), "conditional, continue_loop, exit_loop"),
        Read("rule", ("tool_name", "max_count_limit"), "max_count_per_step"),
    ),
    "tree view": (
        Read("memory", ("blocks",)),
        Read("block", ("label",)),
        Read("block", ("description",), "the files it shows outside a system directory, and the skills"),
    ),
    "available skills": (
        Read("memory", ("blocks",)),
        Read("block", ("label",)),
        Read("block", ("description",), "the first of each skill"),
        Read("client skill", ("name",)),
        Read("client skill", ("description", "location"), "of a name not seen before"),
    ),
}

#: The parts each renderer's render runs. Cases of the others (``recompile``, the real
#: agents) run the parts their memory selects (:func:`compile_parts`).
RENDERER_PARTS: dict[str, tuple[str, ...]] = {
    "plain": ("compile", "memory blocks"),
    "line-numbered": ("compile", "memory blocks"),
    "git memory": ("compile", "git memory"),
    "tree view": ("tree view",),
    "available skills": ("available skills",),
    "directories": ("compile", "memory blocks", "directories"),
    "metadata": (),
    "system message": ("tool rules", "compile", "memory blocks", "directories"),
    "rebuild decision": (),
}

#: What the real agents' and recompile's parts are, for the report.
CHOSEN_PARTS = "tool rules (real agents), compile, then memory blocks, git memory or none (react agents), and directories when sources are given"

REACT_TYPES = ("react_agent", "workflow_agent")


def compile_parts(memory: Any, sources: Any, rules: bool) -> tuple[str, ...]:
    """The parts a ``Memory.compile`` of ``memory`` runs (with tool rules first when ``rules``)."""
    agent_type = memory.agent_type
    name = (agent_type.value if hasattr(agent_type, "value") else (agent_type or "")).lower()
    mode = () if name in REACT_TYPES else ("git memory",) if memory.git_enabled else ("memory blocks",)
    return (("tool rules",) if rules else ()) + ("compile", *mode) + (("directories",) if sources else ())


def describe_parts(parts: Iterable[str]) -> str:
    """The fields the parts read, for the report: one phrase per kind of object."""
    return "; ".join(read.describe() for part in parts for read in PARTS[part]) or "nothing"


# -- the input objects, and which of them each row reads -----------------------------


@dataclass
class Inputs:
    """Every input object of a case, as Letta's run gets them (and memprompt's and the reference's)."""

    memory: Any = None
    llm_config: Any = None
    sources: Any = None
    max_files_open: Any = None
    rules: Sequence[Any] = ()
    client_skills: Any = None

    def objects(self) -> dict[str, list[Any]]:
        """Each kind's objects, in the order the case holds them."""
        memory = self.memory
        agent_type = None if memory is None else memory.agent_type
        return {
            "memory": [] if memory is None else [memory],
            "agent type": [] if agent_type is None else [agent_type],
            "block": [] if memory is None else list(memory.blocks),
            "file block": [] if memory is None else list(memory.file_blocks or ()),
            "source": list(self.sources or ()),
            "rule": list(self.rules),
            "client skill": list(self.client_skills or ()),
            "llm config": [] if self.llm_config is None else [self.llm_config],
        }


def _rule_type(rule: Any) -> str:
    kind = rule.get("type") if isinstance(rule, Mapping) else rule.type
    return str(getattr(kind, "value", kind))


def _of_types(*types: str) -> Callable[[Inputs], list[Any]]:
    return lambda inputs: [rule for rule in inputs.rules if _rule_type(rule) in types]


def _git_system(inputs: Inputs) -> list[Any]:
    return [b for b in inputs.memory.blocks if b.label and b.label.startswith("system/")]


def _first_persona(inputs: Inputs) -> list[Any]:
    return [b for b in _git_system(inputs) if b.label == "system/persona"][:1]


def _system_files(inputs: Inputs) -> list[Any]:
    return [
        b
        for b in _git_system(inputs)
        if b.label != "system/persona" and any(b.label.removeprefix("system/").split("/"))
    ]


def _tree_view_described(inputs: Inputs) -> list[Any]:
    # The reference's tree, which the letta_diff tests hold to Letta's reads on any labels.
    blocks, labels = read_tree_labels(inputs.memory.blocks)
    return [blocks[i] for i in TreeView(labels, bool(inputs.client_skills)).described()]


def _first_of_each_skill(inputs: Inputs) -> list[Any]:
    seen: dict[str, Any] = {}
    for block in inputs.memory.blocks:
        name = skill_name(block.label or "")
        if name is not None:
            seen.setdefault(name, block)
    return list(seen.values())


def _new_client_skills(inputs: Inputs) -> list[Any]:
    seen = {skill_name(block.label or "") for block in inputs.memory.blocks}
    new = []
    for skill in inputs.client_skills or ():
        if skill.name not in seen:
            seen.add(skill.name)
            new.append(skill)
    return new


def _source_ids(inputs: Inputs) -> set[Any]:
    return {getattr(source, "id", None) for source in inputs.sources or ()} - {None}


def _files_while_an_id(inputs: Inputs) -> list[Any]:
    return list(inputs.memory.file_blocks) if _source_ids(inputs) else []


def _files_in_a_source(inputs: Inputs) -> list[Any]:
    ids = _source_ids(inputs)
    return [b for b in inputs.memory.file_blocks if ids and getattr(b, "source_id", None) in ids]


def _files_whose_value(inputs: Inputs) -> list[Any]:
    return list(inputs.memory.file_blocks) if inputs.max_files_open is not None else _files_in_a_source(inputs)


#: (kind, which) -> the objects a row reads. "every" is every object of the kind.
SELECTIONS: dict[tuple[str, str], Callable[[Inputs], list[Any]]] = {
    ("agent type", "an enum"): lambda inputs: [t for t in [inputs.memory.agent_type] if hasattr(t, "value")],
    ("llm config", "if given"): lambda inputs: [inputs.llm_config] if inputs.llm_config else [],
    ("block", "the first system/persona"): _first_persona,
    ("block", "the other system/ blocks with a path part"): _system_files,
    ("block", "the files it shows outside a system directory, and the skills"): _tree_view_described,
    ("block", "the first of each skill"): _first_of_each_skill,
    ("client skill", "of a name not seen before"): _new_client_skills,
    ("file block", "every, while a source has an id"): _files_while_an_id,
    ("file block", "in a source given"): _files_in_a_source,
    ("file block", "every with max_files_open, else those in a source given"): _files_whose_value,
    ("rule", "constrain_child_tools, parent_last_tool"): _of_types("constrain_child_tools", "parent_last_tool"),
    ("rule", "conditional, continue_loop, exit_loop"): _of_types("conditional", "continue_loop", "exit_loop"),
    ("rule", "max_count_per_step"): _of_types("max_count_per_step"),
}


# -- the floor -------------------------------------------------------------------------


@dataclass
class ReadPlan:
    """The (object, field) pairs a case's read floor reads, grouped by field list for one ``map`` each."""

    #: (objects, fields) per group: every object of a group is read for the same fields.
    groups: list[tuple[list[Any], tuple[str, ...]]] = field(default_factory=list)
    #: id of every input object -> its name ("block 3"), for messages.
    names: dict[int, str] = field(default_factory=dict)
    #: The input objects (kept alive, so that their ids stay theirs).
    objects: list[Any] = field(default_factory=list)
    parts: tuple[str, ...] = ()
    inputs: Inputs = field(default_factory=Inputs)

    @property
    def count(self) -> int:
        """How many fields the floor reads."""
        return sum(len(objects) * len(fields) for objects, fields in self.groups)

    def pairs(self) -> set[tuple[int, str]]:
        return {(id(obj), name) for objects, fields in self.groups for obj in objects for name in fields}

    def floor(self) -> Callable[[], list[list[Any]]]:
        """The read floor: one C-level ``map`` of ``attrgetter`` (``itemgetter`` for a dict) a group."""
        groups = [(_getter(objects[0], fields), objects) for objects, fields in self.groups]

        def read() -> list[list[Any]]:
            return [list(map(getter, objects)) for getter, objects in groups]

        return read

    def expected(self) -> list[list[Any]]:
        """What the floor returns, read one field at a time by Python (for ``verify``)."""
        return [[_one(obj, fields) for obj in objects] for objects, fields in self.groups]


def _getter(sample: Any, fields: tuple[str, ...]) -> Callable[[Any], Any]:
    # Without Letta the rules are agent-file dicts: their items, by the same names.
    return (operator.itemgetter if isinstance(sample, Mapping) else operator.attrgetter)(*fields)


def _one(obj: Any, fields: tuple[str, ...]) -> Any:
    values = tuple(obj[name] if isinstance(obj, Mapping) else getattr(obj, name) for name in fields)
    return values[0] if len(values) == 1 else values


def select(read: Read, inputs: Inputs) -> list[Any]:
    """The objects whose ``read.fields`` Letta reads."""
    return inputs.objects()[read.of] if read.which == "every" else SELECTIONS[read.of, read.which](inputs)


def plan(parts: Sequence[str], inputs: Inputs) -> ReadPlan:
    """The read floor of ``parts`` on ``inputs``: each object's fields merged, then grouped."""
    objects = inputs.objects()
    names = {id(obj): f"{kind} {i}" for kind, found in objects.items() for i, obj in enumerate(found)}
    fields_of: dict[int, tuple[Any, list[str]]] = {}
    for part in parts:
        for read in PARTS[part]:
            for obj in select(read, inputs):
                _, fields = fields_of.setdefault(id(obj), (obj, []))
                fields += [name for name in read.fields if name not in fields]
    groups: dict[tuple[bool, tuple[str, ...]], list[Any]] = {}
    for obj, fields in fields_of.values():
        if fields:
            groups.setdefault((isinstance(obj, Mapping), tuple(fields)), []).append(obj)
    all_objects = [obj for found in objects.values() for obj in found]
    grouped = [(group, fields) for (_, fields), group in groups.items()]
    return ReadPlan(grouped, names, all_objects, tuple(parts), inputs)


# -- holding the floor to Letta --------------------------------------------------------


class ReadsDiffer(AssertionError):
    """The read floor does not read what Letta reads (or reads a field twice)."""


def recorded_reads(call: Callable[[], Any], objects: Iterable[Any]) -> list[tuple[int, str]]:
    """Every attribute of ``objects`` that ``call()`` looks up by name, in order, as (id, name).

    Each object's class gets a ``__getattribute__`` for the call that notes the lookup and
    hands it on to the class's own: any read by ``getattr``, ``attrgetter`` or ``obj.name``
    goes through it, a shortcut around CPython's lookup (a ``__dict__`` read) does not.
    A method looked up to be called (a bound method of the object) is not a field read;
    dunder names are not either, nor what a property reads of its own object while it runs
    (an enum's ``value`` reads ``_value_``). A dict's items and an immutable type's are not seen.
    """
    tracked = {id(obj) for obj in objects}
    log: list[tuple[int, str]] = []
    reading: list[int] = []
    classes = {type(obj) for obj in objects if not isinstance(obj, Mapping)}
    # Each class's own lookup, taken before any class is patched (a subclass would find its base's patch).
    original: dict[type, Callable[[Any, str], Any]] = {cls: _lookup_of(cls) for cls in classes}
    patched: list[tuple[type, Any]] = []

    def patch(cls: type) -> None:
        own = original[cls]

        def noting(self: Any, name: str) -> Any:
            if id(self) not in tracked or id(self) in reading or (name.startswith("__") and name.endswith("__")):
                return own(self, name)
            reading.append(id(self))  # what a property reads of its own object is part of its read
            try:
                found = own(self, name)
            except AttributeError:
                log.append((id(self), name))  # a read that found nothing (hasattr, getattr's default)
                raise
            finally:
                reading.pop()
            if not (inspect.ismethod(found) and found.__self__ is self):
                log.append((id(self), name))
            return found

        previous = cls.__dict__.get("__getattribute__", _ABSENT)
        type.__setattr__(cls, "__getattribute__", noting)
        patched.append((cls, previous))

    try:
        for cls in classes:
            try:
                patch(cls)
            except TypeError:  # a built-in type: its objects are not seen
                pass
        call()
    finally:
        for cls, previous in reversed(patched):
            if previous is _ABSENT:
                type.__delattr__(cls, "__getattribute__")
            else:
                type.__setattr__(cls, "__getattribute__", previous)
    return log


_ABSENT = object()


def _lookup_of(cls: type) -> Callable[[Any, str], Any]:
    """The ``__getattribute__`` the class's instances use (its own or a base's)."""
    lookup: Callable[[Any, str], Any] = cls.__getattribute__  # type: ignore[assignment]
    return lookup


def check_reads(read_plan: ReadPlan, floor: Callable[[], Any], letta: Callable[[], Any] | None, where: str) -> None:
    """The floor reads each of its pairs once, and (with ``letta``) exactly the pairs Letta's run reads.

    Raises :class:`ReadsDiffer` naming the objects and fields that differ.
    """
    names = read_plan.names
    listed = read_plan.pairs()
    position = {id(obj): i for i, obj in enumerate(read_plan.objects)}

    def named(pairs: Iterable[tuple[int, str]]) -> str:
        ordered = sorted(pairs, key=lambda pair: (position.get(pair[0], -1), pair[1]))
        shown = [f"{names.get(obj, '?')}.{name}" for obj, name in ordered]
        return ", ".join(shown[:12]) + (f" and {len(shown) - 12} more" if len(shown) > 12 else "")

    floor_reads = Counter(recorded_reads(floor, read_plan.objects))
    twice = [pair for pair, n in floor_reads.items() if n > 1]
    if twice:
        raise ReadsDiffer(f"{where}: the read floor reads {named(twice)} more than once")
    # A dict's items (the agent-file rules, without Letta) are read by itemgetter: not seen, checked by value.
    seen = {id(obj) for obj in read_plan.objects if not isinstance(obj, Mapping)}
    expected = {pair for pair in listed if pair[0] in seen}
    if set(floor_reads) != expected:
        unseen, unlisted = expected - set(floor_reads), set(floor_reads) - expected
        raise ReadsDiffer(
            f"{where}: the read floor"
            + (f" does not read {named(unseen)} through getattr;" if unseen else "")
            + (f" reads {named(unlisted)}, which it does not list" if unlisted else "")
        )
    if letta is None:
        return
    letta_reads = set(recorded_reads(letta, read_plan.objects))
    missing, extra = letta_reads - listed, listed - letta_reads
    if missing or extra:
        parts = "+".join(read_plan.parts) or "no part"
        raise ReadsDiffer(
            f"{where}: the read floor ({parts}) differs from Letta's reads:"
            + (f" Letta reads {named(missing)}, which it does not list;" if missing else "")
            + (f" it lists {named(extra)}, which Letta does not read" if extra else "")
        )
