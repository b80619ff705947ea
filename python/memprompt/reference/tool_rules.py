"""Tool rules: the text of the ``<tool_usage_rules>`` block, as Letta 0.16.8 builds it.

``compile_tool_rule_prompts(rules)`` returns what Letta's
``ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts()`` returns: None,
or a block whose ``description`` is :data:`DESCRIPTION` and whose ``value`` is
the rendered prompts joined by ``"\\n"``.

How Letta 0.16.8 renders a rule
-------------------------------
There is no template engine. Each rule class writes one fixed text with the
rule's fields put in as an f-string does; ``prompt_template`` is read, validated
(it must be a str or None) and then ignored, so the Jinja-style templates that
older Letta versions stored in agent files (``{{ tool_name }}``,
``{{ children | join(', ') }}``) change nothing. The texts:

- continue_loop: ``<tool_rule>\\n{tool_name} requires continuing your response when called\\n</tool_rule>``
- constrain_child_tools: ``<tool_rule>\\nAfter using {tool_name}, you must use one of these tools: {children joined by ", "}\\n</tool_rule>``
- conditional: ``<tool_rule>\\n{tool_name} will determine which tool to use next based on its output\\n</tool_rule>``
- max_count_per_step: ``<tool_rule>\\n{tool_name}: at most {max_count_limit} use(s) per response\\n</tool_rule>``
- parent_last_tool: ``<tool_rule>\\n{children joined by ", "} can only be used after {tool_name}\\n</tool_rule>``
- exit_loop: ``<tool_rule>\\n{tool_name} ends your response (yields control) when called\\n</tool_rule>``
- run_first and requires_approval: nothing. required_before_exit has a text
  (``<tool_rule>{tool_name} must be called before ending the conversation</tool_rule>``)
  but the block never asks for it.

Order: first the run_first rules, then continue_loop, then the "child-based"
rules (constrain_child_tools, conditional, max_count_per_step, in input order
among themselves), then parent_last_tool, then exit_loop; input order within
each group. An empty text is skipped. The block's value has its NUL characters
removed (Letta's Block validator does it).

The Rust core renders the common inputs itself and hands the others, one rule
at a time, to :func:`validate_rule` and :meth:`ValidatedRule.render` here.

Inputs, as Letta validates them
-------------------------------
Letta's solver is a pydantic model: ``rules`` and every rule in it go through
pydantic's lax validation before anything renders, and a failure raises
pydantic's ``ValidationError``, a ``ValueError``; we raise ``ValueError``.

- ``rules``: None, or any iterable but str, bytes, bytearray and mappings.
  None or empty gives None.
- A rule is a mapping (keys are field names; any key that is not a field of
  its type is an error, and so is a key that is not a str), or an object read
  by attribute (missing attributes take the field's default). Its ``type`` is
  one of Letta's ``ToolRuleType`` values: a str (an enum member with a str
  value counts) equal to ``"run_first"``, ``"exit_loop"``, ...
- An instance of Letta's own rule class for that type (a pydantic object,
  recognised by its class's module ``letta.schemas.tool_rule``) is taken as it
  is, without validation, as pydantic does; its fields render as an f-string
  renders them, unless its ``render_prompt`` (looked up as Python does: the
  instance, then its class) is not Letta's own function: a subclass's, a
  function set on the instance or patched into Letta's class renders through
  ``render_prompt()`` itself.
- Field types (pydantic's lax mode): str fields accept a str (a subclass is
  read as its plain text, which must then hold no lone surrogate: pydantic
  reads it as UTF-8), UTF-8 bytes or bytearray, or an enum member (its value
  as ``str()``); ``max_count_limit`` accepts an int, a bool, an integral
  float or Decimal, a str of an integer in pydantic's syntax (surrounding
  whitespace, ``+``, ``_`` between digits, leading zeros, a ``.0`` tail), or
  any object with ``__float__``/``__index__`` holding an integral value;
  ``require_output_mapping`` accepts a bool, 0/1, or ``"true"``/``"no"``/... ;
  list fields accept any iterable but str, bytes, bytearray and mappings; dict
  fields any mapping. ``child_output_mapping`` must not be empty, and every
  ``child_arg_nodes`` entry (a mapping, or Letta's ``ToolCallNode``) must name
  one of ``children``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from decimal import Decimal
from enum import Enum
from types import FunctionType
from typing import Any, cast

from ..types import ToolUsageRules

#: The block's description (letta 0.16.8 ``tool_rule_solver.COMPILED_PROMPT_DESCRIPTION``, verbatim).
DESCRIPTION = (
    "The following constraints define rules for tool usage and guide desired behavior. "
    "These rules must be followed to ensure proper tool execution and workflow. "
    "A single response may contain multiple tool calls."
)

#: The block's label in Letta (our block has no label field).
LABEL = "tool_usage_rules"

# Rule types (letta ToolRuleType values).
RUN_FIRST = "run_first"
EXIT_LOOP = "exit_loop"
CONTINUE_LOOP = "continue_loop"
CONDITIONAL = "conditional"
CONSTRAIN_CHILD_TOOLS = "constrain_child_tools"
MAX_COUNT_PER_STEP = "max_count_per_step"
PARENT_LAST_TOOL = "parent_last_tool"
REQUIRED_BEFORE_EXIT = "required_before_exit"
REQUIRES_APPROVAL = "requires_approval"

# Groups, in the order the block lists them; the last two never render.
INIT = "init"
CONTINUE = "continue"
CHILD_BASED = "child_based"
PARENT = "parent"
TERMINAL = "terminal"
BEFORE_EXIT = "required_before_exit"
APPROVAL = "requires_approval"
RENDERED_GROUPS = (INIT, CONTINUE, CHILD_BASED, PARENT, TERMINAL)

GROUP_OF = {
    RUN_FIRST: INIT,
    CONTINUE_LOOP: CONTINUE,
    CONSTRAIN_CHILD_TOOLS: CHILD_BASED,
    CONDITIONAL: CHILD_BASED,
    MAX_COUNT_PER_STEP: CHILD_BASED,
    PARENT_LAST_TOOL: PARENT,
    EXIT_LOOP: TERMINAL,
    REQUIRED_BEFORE_EXIT: BEFORE_EXIT,
    REQUIRES_APPROVAL: APPROVAL,
}

# The Letta class that holds each type (letta.schemas.tool_rule).
LETTA_MODULE = "letta.schemas.tool_rule"
LETTA_CLASS = {
    RUN_FIRST: "InitToolRule",
    EXIT_LOOP: "TerminalToolRule",
    CONTINUE_LOOP: "ContinueToolRule",
    CONDITIONAL: "ConditionalToolRule",
    CONSTRAIN_CHILD_TOOLS: "ChildToolRule",
    MAX_COUNT_PER_STEP: "MaxCountPerStepToolRule",
    PARENT_LAST_TOOL: "ParentToolRule",
    REQUIRED_BEFORE_EXIT: "RequiredBeforeExitToolRule",
    REQUIRES_APPROVAL: "RequiresApprovalToolRule",
}

# Every field of each type: (name, required). "type" is the tag itself.
_COMMON = (("tool_name", True), ("type", True), ("prompt_template", False))
FIELDS = {
    RUN_FIRST: _COMMON + (("args", False),),
    EXIT_LOOP: _COMMON,
    CONTINUE_LOOP: _COMMON,
    CONDITIONAL: _COMMON
    + (("default_child", False), ("child_output_mapping", True), ("require_output_mapping", False)),
    CONSTRAIN_CHILD_TOOLS: _COMMON + (("children", True), ("child_arg_nodes", False)),
    MAX_COUNT_PER_STEP: _COMMON + (("max_count_limit", True),),
    PARENT_LAST_TOOL: _COMMON + (("children", True),),
    REQUIRED_BEFORE_EXIT: _COMMON,
    REQUIRES_APPROVAL: _COMMON,
}

_MISSING = object()


class InvalidRule(ValueError):
    """A rule (or the list of rules) that Letta's validation refuses."""


# --- rendering ------------------------------------------------------------------


def render_prompt(kind: str, tool_name: Any, children: Any = (), max_count_limit: Any = None) -> str | None:
    """The text of one rule of type ``kind``; None for the types that have none."""
    if kind == CONTINUE_LOOP:
        return f"<tool_rule>\n{tool_name} requires continuing your response when called\n</tool_rule>"
    if kind == CONSTRAIN_CHILD_TOOLS:
        return f"<tool_rule>\nAfter using {tool_name}, you must use one of these tools: {', '.join(children)}\n</tool_rule>"
    if kind == CONDITIONAL:
        return f"<tool_rule>\n{tool_name} will determine which tool to use next based on its output\n</tool_rule>"
    if kind == MAX_COUNT_PER_STEP:
        return f"<tool_rule>\n{tool_name}: at most {max_count_limit} use(s) per response\n</tool_rule>"
    if kind == PARENT_LAST_TOOL:
        return f"<tool_rule>\n{', '.join(children)} can only be used after {tool_name}\n</tool_rule>"
    if kind == EXIT_LOOP:
        return f"<tool_rule>\n{tool_name} ends your response (yields control) when called\n</tool_rule>"
    if kind == REQUIRED_BEFORE_EXIT:
        return f"<tool_rule>{tool_name} must be called before ending the conversation</tool_rule>"
    return None  # run_first, requires_approval


class ValidatedRule:
    """One rule after Letta's validation: its type, its group, and what it renders."""

    __slots__ = ("kind", "group", "tool_name", "children", "max_count_limit", "instance")

    def __init__(
        self, kind: str, tool_name: Any = None, children: Any = (), max_count_limit: Any = None, instance: Any = None
    ):
        self.kind = kind
        self.group = GROUP_OF[kind]
        self.tool_name = tool_name
        self.children = children
        self.max_count_limit = max_count_limit
        #: Letta's own rule object, taken as it is: its fields are read when it renders.
        self.instance = instance

    def render(self) -> Any:
        """The rule's prompt (None when it has none), as the rule's ``render_prompt()`` returns it."""
        rule: Any = self.instance
        if rule is None:
            return render_prompt(self.kind, self.tool_name, self.children, self.max_count_limit)
        if not renders_as_letta(type(rule)) or "render_prompt" in getattr(rule, "__dict__", ()):
            return rule.render_prompt()  # not Letta's own render_prompt: it decides the text
        if self.kind in (RUN_FIRST, REQUIRES_APPROVAL):
            return None
        children_text = ""
        if self.kind in (CONSTRAIN_CHILD_TOOLS, PARENT_LAST_TOOL):
            children_text = ", ".join(rule.children)  # joined before tool_name is read, as in Letta
        tool_name = rule.tool_name
        max_count_limit = rule.max_count_limit if self.kind == MAX_COUNT_PER_STEP else None
        return render_prompt(self.kind, tool_name, [children_text], max_count_limit)

    def __repr__(self) -> str:
        return f"ValidatedRule({self.kind!r}, tool_name={self.tool_name!r})"


def compile_tool_rule_prompts(rules: Any) -> ToolUsageRules | None:
    """``ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts()`` of Letta 0.16.8."""
    if rules is None:
        return None
    items = _as_list(rules, "tool_rules")
    validated = [validate_rule(rule, i) for i, rule in enumerate(items)]
    prompts = []
    for group in RENDERED_GROUPS:
        for rule in validated:
            if rule.group == group:
                text = rule.render()
                if text:
                    prompts.append(text)
    if not prompts:
        return None
    return ToolUsageRules(description=DESCRIPTION, value="\n".join(prompts).replace("\x00", ""))


# --- validation (pydantic's lax mode, for the fields a rule has) -----------------


def validate_rule(rule: Any, index: int = 0) -> ValidatedRule:
    """One rule as Letta's solver validates it; InvalidRule (a ValueError) when Letta refuses it."""
    where = f"tool rule {index}"
    if isinstance(rule, Mapping):
        tag = rule.get("type", _MISSING)
    elif _reads_attributes(rule):
        tag = getattr(rule, "type", _MISSING)
    else:
        raise InvalidRule(f"{where}: must be a mapping or an object with attributes, not {type(rule).__name__}")
    if tag is _MISSING:
        raise InvalidRule(f"{where}: has no 'type'")
    kind = str.__str__(tag) if isinstance(tag, str) else None
    if kind not in GROUP_OF:
        raise InvalidRule(f"{where}: unknown type {tag!r}")
    where = f"{where} ({kind})"

    if _letta_class(type(rule), LETTA_CLASS[kind]) is not None:
        return ValidatedRule(kind, instance=rule)  # Letta's own object: pydantic takes it as it is

    if isinstance(rule, Mapping):
        data = dict(rule)
        for key in data:
            if not isinstance(key, str):
                raise InvalidRule(f"{where}: keys must be str, not {type(key).__name__}")
        allowed = {name for name, _ in FIELDS[kind]}
        extra = [key for key in data if key not in allowed]
        if extra:
            raise InvalidRule(f"{where}: unexpected field {extra[0]!r}")

        def get(name: str) -> Any:
            return data.get(name, _MISSING)

    else:

        def get(name: str) -> Any:
            return getattr(rule, name, _MISSING)

    for name, required in FIELDS[kind]:
        if required and get(name) is _MISSING:
            raise InvalidRule(f"{where}: missing field {name!r}")

    tool_name = _as_str(get("tool_name"), f"{where}: tool_name")
    _optional(get("prompt_template"), _as_str, f"{where}: prompt_template")
    children: list[str] = []
    max_count_limit = None

    if kind == RUN_FIRST:
        _optional(get("args"), _as_str_keyed_mapping, f"{where}: args")
    elif kind in (CONSTRAIN_CHILD_TOOLS, PARENT_LAST_TOOL):
        children = [
            _as_str(c, f"{where}: children[{i}]") for i, c in enumerate(_as_list(get("children"), f"{where}: children"))
        ]
        if kind == CONSTRAIN_CHILD_TOOLS:
            nodes = _optional(get("child_arg_nodes"), _as_list, f"{where}: child_arg_nodes")
            names = [_node_name(node, f"{where}: child_arg_nodes[{i}]") for i, node in enumerate(nodes or ())]
            for name in names:
                if name not in set(children):
                    raise InvalidRule(f"{where}: child_arg_nodes names {name!r}, which is not in children")
    elif kind == CONDITIONAL:
        _optional(get("default_child"), _as_str, f"{where}: default_child")
        mapping = _as_mapping(get("child_output_mapping"), f"{where}: child_output_mapping")
        for value in mapping.values():
            _as_str(value, f"{where}: child_output_mapping value")
        _optional(get("require_output_mapping"), _as_bool, f"{where}: require_output_mapping", none_ok=False)
        if not mapping:
            raise InvalidRule(f"{where}: child_output_mapping must not be empty")
    elif kind == MAX_COUNT_PER_STEP:
        max_count_limit = _as_int(get("max_count_limit"), f"{where}: max_count_limit")

    return ValidatedRule(kind, tool_name, children, max_count_limit)


def _letta_class(cls: type, name: str) -> type | None:
    """Letta's rule class ``name`` when ``cls`` is it or derives from it (no import of Letta)."""
    for base in cls.__mro__:
        if base.__name__ == name and base.__module__ == LETTA_MODULE:
            return base
    return None


def renders_as_letta(cls: type) -> bool:
    """Whether the ``render_prompt`` instances of ``cls`` find on their class is Letta's own
    function: defined in Letta's module by the Letta class that holds it, itself the class
    Letta's module names (no subclass's override, no patch, no ``__getattribute__`` of its own).
    A class with none at all (a stand-in of Letta's class where Letta is absent) has nothing
    of its own to call."""
    plain_lookup = getattr(cls, "__getattribute__") is getattr(object, "__getattribute__")
    owner = next((base for base in cls.__mro__ if "render_prompt" in vars(base)), None)
    if owner is None:
        return plain_lookup
    name, letta = owner.__name__, sys.modules.get(LETTA_MODULE)
    if letta is None or getattr(letta, name, None) is not owner:
        return False
    function = vars(owner)["render_prompt"]
    return (
        plain_lookup
        and type(function) is FunctionType
        and function.__module__ == LETTA_MODULE
        and function.__qualname__ == f"{name}.render_prompt"
        and function.__code__.co_filename == getattr(letta, "__file__", None)
    )


def _reads_attributes(obj: Any) -> bool:
    """Whether pydantic reads fields from ``obj``'s attributes: not for builtins' own objects."""
    return type(obj).__module__ not in ("builtins", "datetime", "collections")


def _optional(value: Any, check: Callable[[Any, str], Any], what: str, none_ok: bool = True) -> Any:
    if value is _MISSING or (none_ok and value is None):
        return None
    return check(value, what)


def _node_name(node: Any, what: str) -> Any:
    """The ``name`` of a child_arg_nodes entry (a mapping, or Letta's ToolCallNode taken as it is)."""
    if _letta_class(type(node), "ToolCallNode") is not None:
        return node.name
    if not isinstance(node, Mapping):
        raise InvalidRule(f"{what}: must be a mapping, not {type(node).__name__}")
    data = dict(node)
    if "name" not in data:
        raise InvalidRule(f"{what}: missing field 'name'")
    name = _as_str(data["name"], f"{what}: name")
    _optional(data.get("args", _MISSING), _as_str_keyed_mapping, f"{what}: args")
    return name


def _as_str(value: Any, what: str) -> str:
    if type(value) is str:
        return value
    if isinstance(value, str):
        # A subclass (a str enum too): its plain text, which pydantic reads as UTF-8.
        text = str.__str__(value)
        if not _is_utf8(text):
            raise InvalidRule(f"{what}: a str subclass with lone surrogates")
        return text
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRule(f"{what}: bytes are not UTF-8") from None
    if isinstance(value, Enum):
        return str(value.value)
    raise InvalidRule(f"{what}: must be a str, not {type(value).__name__}")


def _as_list(value: Any, what: str) -> list[Any]:
    if isinstance(value, (str, bytes, bytearray, Mapping)):
        raise InvalidRule(f"{what}: must be a list, not {type(value).__name__}")
    try:
        return list(iter(value))
    except TypeError:
        raise InvalidRule(f"{what}: must be a list, not {type(value).__name__}") from None


def _as_mapping(value: Any, what: str) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise InvalidRule(f"{what}: must be a dict, not {type(value).__name__}")
    return dict(value)


def _as_str_keyed_mapping(value: Any, what: str) -> dict[str, Any]:
    mapping = _as_mapping(value, what)
    for key in mapping:
        _as_str(key, f"{what} key")
    return mapping


def _as_bool(value: Any, what: str) -> bool:
    if type(value) is bool:
        return value
    text = _plain_text(value, what)
    if text is not None:
        lowered = text.lower() if text.isascii() else None
        if lowered in ("0", "f", "n", "no", "off", "false"):
            return False
        if lowered in ("1", "t", "y", "on", "yes", "true"):
            return True
        raise InvalidRule(f"{what}: cannot read {value!r} as a bool")
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
        raise InvalidRule(f"{what}: cannot read {value!r} as a bool")
    number = _float_of(value)
    if number is not None and math.isfinite(number) and number in (0.0, 1.0):
        return bool(number)
    raise InvalidRule(f"{what}: must be a bool, not {type(value).__name__}")


def _as_int(value: Any, what: str) -> int:
    if type(value) is int:
        return value
    text = _plain_text(value, what)
    if text is not None:
        return _int_from_text(text, what)
    if isinstance(value, int):
        return int.__int__(value)  # bool, IntEnum, any int subclass: its plain value
    if type(value) is float:
        return _int_from_float(value, what)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidRule(f"{what}: must be finite")
        numerator, denominator = value.as_integer_ratio()
        if denominator != 1:
            raise InvalidRule(f"{what}: has a fractional part")
        return numerator
    number = _float_of(value)
    if number is not None:
        return _int_from_float(number, what)
    if isinstance(value, Enum):
        return cast(int, value.value)
    raise InvalidRule(f"{what}: must be an int, not {type(value).__name__}")


def _is_utf8(text: str) -> bool:
    """Whether ``text`` has no lone surrogates (pydantic reads a str subclass as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain_text(value: Any, what: str) -> str | None:
    """A str (plain text of a subclass) or UTF-8 bytes; None for anything else."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRule(f"{what}: bytes are not UTF-8") from None
    return None


def _float_of(value: Any) -> float | None:
    """``float(value)`` through ``__float__`` or ``__index__`` only (no parsing), else None."""
    kind = type(value)
    if not (hasattr(kind, "__float__") or hasattr(kind, "__index__")):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


_I64_BOUND = 9223372036854775808.0  # 2**63 as a float: the open bounds pydantic allows


def _int_from_float(number: float, what: str) -> int:
    if not math.isfinite(number):
        raise InvalidRule(f"{what}: must be finite")
    if number % 1.0 != 0.0:
        raise InvalidRule(f"{what}: has a fractional part")
    if not -_I64_BOUND < number < _I64_BOUND:
        raise InvalidRule(f"{what}: too large")
    return int(number)


# pydantic trims with Rust's str::trim: Unicode White_Space, which is not str.isspace().
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)
_MAX_LENGTH = 4300


def _int_from_text(text: str, what: str) -> int:
    """An int from text, with pydantic's syntax: a JSON integer, or one that cleans up into one."""
    number = _json_int(text)
    if number is None:
        cleaned = _clean_int_text(text)
        number = _json_int(cleaned) if cleaned is not None else None
    if number is None:
        raise InvalidRule(f"{what}: cannot read {text[:40]!r} as an integer")
    return number


def _json_int(text: str) -> int | None:
    """``-?(0|[1-9][0-9]*)`` of at most 4300 characters (the sign counts), else None."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or len(text) > _MAX_LENGTH or not all("0" <= c <= "9" for c in digits):
        return None
    if digits[0] == "0" and len(digits) > 1:
        return None
    return int(text)


def _clean_int_text(text: str) -> str | None:
    """Trim, drop a ``+``, leading zeros, a ``.0...`` tail and ``_`` between digits; None if nothing changed."""
    original_length = len(text)
    s = text.strip(_RUST_WHITESPACE)
    if s.startswith("+"):
        if s[1:2] == "-":
            return None
        s = s[1:]
    negative = s.startswith("-")
    if negative:
        if s[1:2] in ("-", "+"):
            return None
        s = s[1:]
    stripped = _strip_leading_zeros(s)
    if stripped is None:
        return None
    s = stripped
    dot = s.find(".")
    if dot >= 0:
        decimals = s[dot + 1 :]
        if decimals and all(c == "0" for c in decimals):
            s = s[:dot]
    if "_" in s and not (s.startswith("_") or s.endswith("_") or "__" in s):
        return ("-" if negative else "") + s.replace("_", "")
    if len(s) == original_length:
        return None
    return ("-" if negative else "") + s


def _strip_leading_zeros(s: str) -> str | None:
    if not s:
        return None
    if s[0] != "0":
        return s if ("1" <= s[0] <= "9" or s[0] == "-") else None
    for i in range(1, len(s)):
        c = s[i]
        if c in "0_":
            continue
        if "1" <= c <= "9" or c == "-":
            return s[i:]
        if c == ".":
            return s[i - 1 :]
        return None
    return s[-1]
