"""Legal Python objects that attack memprompt's direct reads (binding/attr.rs, binding/strings.rs).

Each case builds fresh blocks from ``make(**fields)``, a maker of blocks whose fields sit in their
instance ``__dict__`` (a plain class here, Letta's pydantic ``Block`` in tests/letta_diff): a hostile
object acts once, so every compile it is compared in gets blocks of its own.
"""

from __future__ import annotations

import gc
import sys
import warnings
from typing import Any, Callable

FIELDS = {"label": "human", "value": "v\u00e9", "description": "d", "limit": 10}

Make = Callable[..., Any]


class Fields:
    """Fields in the instance ``__dict__``, generic lookup."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class KeyLike:
    """A dict key that hashes like the field name ``name``; once armed, comparing it answers ``equal``,
    and the first comparison runs ``act`` first (on the block whose dict holds it)."""

    def __init__(self, name: str, equal: bool):
        self.name, self.equal = name, equal
        self.armed = False
        self.act: Callable[[], None] | None = None

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        if not self.armed:
            return NotImplemented
        act, self.act = self.act, None
        if act is not None:
            act()
        return self.equal


def unspecialized(call: Callable[[], Any]) -> Callable[[], Any]:
    """``call`` run with every attribute read a plain ``getattr``: CPython 3.11 specializes a hot
    ``obj.name`` to read a remembered dict entry, and its specializer looks the name up first (a
    hostile ``__eq__`` then runs twice); with a trace function set, it runs each instruction unspecialized."""

    def run():
        previous = sys.gettrace()
        sys.settrace(lambda *_: None)
        try:
            return call()
        finally:
            sys.settrace(previous)

    return run


def with_key(block, key: KeyLike, value, act: Callable[[], None] | None, then: dict) -> Any:
    """``block`` with ``key`` (holding ``value``) in its dict before the entries of ``then``, armed with ``act``."""
    block.__dict__[key] = value
    block.__dict__.update(then)
    key.act, key.armed = act, True
    return block


def no(name: str) -> dict:
    return {k: v for k, v in FIELDS.items() if k != name}


# Crash: the dict searched is freed or changed by a key's __eq__ during the lookup.


def dict_replaced(make: Make, name: str = "value") -> list:
    """A key whose ``__eq__`` replaces the block's ``__dict__`` while ``name`` is looked up."""
    block = make(**no(name))
    key = KeyLike(name, equal=False)

    def replace():
        block.__dict__ = dict(FIELDS, **{name: "replaced"})

    return [with_key(block, key, "the key's", replace, {})]


def dict_replaced_and_collected(make: Make) -> list:
    """As ``dict_replaced``, the old dict and its entries collected at once (a cycle through it)."""
    block = make(**no("value"))
    key = KeyLike("value", equal=True)

    def replace():
        block.__dict__["self"] = block.__dict__
        block.__dict__ = dict(FIELDS, value="replaced")
        gc.collect()

    return [with_key(block, key, "the key's", replace, {})]


def dict_cleared(make: Make) -> list:
    """A key whose ``__eq__`` empties the dict being searched: CPython searches again, finds nothing."""
    block = make(**no("value"))
    key = KeyLike("value", equal=False)
    return [with_key(block, key, "the key's", lambda: block.__dict__.clear(), {})]


def class_replaced(make: Make) -> list:
    """A key whose ``__eq__`` gives the block a new class, with a ``value`` property, mid-lookup."""
    block = make(**no("value"))
    key = KeyLike("value", equal=False)

    def reclass():
        block.__class__ = type("Reclassed", (type(block),), {"value": property(lambda self: "from the new class")})

    return [with_key(block, key, "the key's", reclass, {})]


def class_changed_by_its_dict(make: Make) -> list:
    """A class whose own dict holds a key whose ``__eq__``, met while ``value`` is looked up on the class,
    gives the class a ``value`` property: every later block reads the property."""
    key = KeyLike("value", equal=False)
    cls = type("WithClassKey", (type(make()),), {key: "a class-dict key", "__module__": __name__})
    key.act, key.armed = lambda: setattr(cls, "value", property(lambda self: "from the class")), True
    blocks = []
    for _ in range(3):
        block = make(**FIELDS)
        block.__class__ = cls
        blocks.append(block)
    return blocks


def second_block_dict_replaced(make: Make) -> list:
    """A plain block first (its field positions remembered), then one whose key replaces its dict."""
    return [make(**FIELDS), *dict_replaced(make, "label"), make(**FIELDS)]


CRASH = {
    "a key's __eq__ replaces __dict__": lambda make: dict_replaced(make),
    "a key's __eq__ replaces __dict__ (label)": lambda make: dict_replaced(make, "label"),
    "a key's __eq__ replaces __dict__ and collects it": dict_replaced_and_collected,
    "a key's __eq__ clears the dict": dict_cleared,
    "a key's __eq__ replaces the block's class": class_replaced,
    "a class-dict key's __eq__ gives the class a property": class_changed_by_its_dict,
    "after a plain block, a key's __eq__ replaces __dict__": second_block_dict_replaced,
}


# Wrong output: a key that is not the interned field name but equal to it, which CPython's lookup finds first.


def equal_key_first(make: Make, name: str = "value") -> list:
    """A key equal to ``name`` (hash and ``__eq__``) before the name itself: CPython takes the key's entry."""
    block = make(**no(name))
    return [with_key(block, KeyLike(name, equal=True), "the equal key's", None, {name: FIELDS[name]})]


def equal_key_after_plain(make: Make) -> list:
    """Plain blocks around one with an equal key first: the remembered position holds the name itself."""
    return [make(**FIELDS), *equal_key_first(make), make(**FIELDS)]


class Name(str):
    """A str subclass key: equal to the field name, not the same object."""


def str_subclass_key(make: Make) -> list:
    block = make(**no("label"))
    block.__dict__[Name("label")] = "subclass key"
    return [make(**FIELDS), block]


def non_interned_key(make: Make) -> list:
    """An exact str key equal to ``value``, made at run time (not interned)."""
    block = make(**no("value"))
    block.__dict__["".join(["val", "ue"])] = "not interned"
    return [make(**FIELDS), block, make(**FIELDS)]


WRONG_OUTPUT = {
    "an equal key before the field name": lambda make: equal_key_first(make),
    "an equal key before the field name (description)": lambda make: equal_key_first(make, "description"),
    "an equal key, after a plain block": equal_key_after_plain,
    "a str subclass key": str_subclass_key,
    "a key equal to the name, not interned": non_interned_key,
}


def legacy_str(text: str) -> str | None:
    """A str made by CPython 3.11's deprecated ``PyUnicode_FromUnicode(NULL, n)`` and not yet made ready,
    from ``_testcapi.unicode_legacy_string`` (CPython's own test module); ``None`` where there is none."""
    try:
        from _testcapi import unicode_legacy_string  # type: ignore[import-not-found]
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return unicode_legacy_string(text)


def legacy_block(make: Make, **legacy: str) -> list:
    fields = dict(FIELDS)
    for name, text in legacy.items():
        fields[name] = legacy_str(text)
    return [make(**fields)]


LEGACY = {
    "a legacy value": lambda make: legacy_block(make, value="hello w\u00f6rld"),
    "a legacy label": lambda make: legacy_block(make, label="human"),
    "a legacy description": lambda make: legacy_block(make, description="d\u20ac\U0001f600"),
    "legacy label, value and description": lambda make: legacy_block(
        make, label="persona", value="\u4e2d\u6587", description="ascii"
    ),
}
