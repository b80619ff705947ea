"""Reading a field: every form of Python attribute lookup gives what ``getattr`` gives, as the reference reads it.

memprompt reads a block's fields from its instance ``__dict__`` directly when the type has generic lookup
and nothing of that name (binding/attr.rs); every other case must still end where ``getattr`` ends.
"""

import gc

import pytest
from outcome import assert_same
from strategies import LooseBlock

import memprompt as mp
from memprompt import reference as ref


class Fields:
    """Fields in the instance ``__dict__``, generic lookup."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class Hooked(Fields):
    """Letta's pydantic shape: a ``__getattr__`` after the dict."""

    def __getattr__(self, name):
        if name == "description":
            return "from __getattr__"
        raise AttributeError(name)


class ValueProperty(Hooked):
    """A data descriptor wins over the dict."""

    @property
    def value(self):
        return "from the property"


class LabelOnClass(Hooked):
    """A plain class attribute loses to the dict, and is used where the dict has none."""

    label = "from the class"


class Rewriting(Fields):
    """``__getattribute__`` decides everything."""

    def __getattribute__(self, name):
        found = object.__getattribute__(self, name)
        return found.upper() if isinstance(found, str) else found


class StrangeDict(dict):
    """A ``__dict__`` whose ``__getitem__`` generic lookup never calls."""

    def __getitem__(self, key):
        return "from __getitem__"


class Failing(Fields):
    """A ``__getattr__`` that raises something other than ``AttributeError``."""

    def __getattr__(self, name):
        raise KeyError(name)


FIELDS = {"label": "human", "value": "v\u00e9", "description": "d", "limit": 10}


def strange_dict_block():
    block = Fields()
    block.__dict__ = StrangeDict(FIELDS)
    return block


def non_str_key_block():
    # A key that is not a str changes how CPython lays out the dict's entries.
    block = Hooked(**FIELDS)
    block.__dict__[1] = "one"
    return block


def deleted_entry_block():
    # The fields sit after an empty entry: each is one entry later than its position among the keys.
    block = Hooked(first="gone")
    block.__dict__.update(FIELDS)
    del block.__dict__["first"]
    return block


BLOCKS = {
    "plain": lambda: Fields(**FIELDS),
    # Fields assigned in __init__: instances share their dict's keys (CPython's split table).
    "fields assigned in __init__": lambda: LooseBlock(**FIELDS),
    "a key that is not a str": non_str_key_block,
    "an entry deleted before the fields": deleted_entry_block,
    "__getattr__ fills a missing field": lambda: Hooked(**{k: v for k, v in FIELDS.items() if k != "description"}),
    "__getattr__ gives read_only nothing": lambda: Hooked(**FIELDS),
    "a property over the dict": lambda: ValueProperty(**FIELDS),
    "the dict over a class attribute": lambda: LabelOnClass(**FIELDS),
    "a class attribute where the dict has none": lambda: LabelOnClass(
        **{k: v for k, v in FIELDS.items() if k != "label"}
    ),
    "__getattribute__": lambda: Rewriting(**FIELDS),
    "a dict subclass as __dict__": strange_dict_block,
    "__getattr__ raising KeyError": lambda: Failing(**{k: v for k, v in FIELDS.items() if k != "limit"}),
    "read_only in the dict": lambda: Fields(**FIELDS, read_only=True),
}


@pytest.mark.parametrize("make", BLOCKS.values(), ids=BLOCKS.keys())
def test_every_lookup_reads_what_getattr_reads(make):
    for agent_type, git_enabled in (("memgpt_agent", False), ("letta_v1_agent", True)):
        blocks = [make(), make()]
        assert_same(
            lambda: mp.Memory(blocks, [], agent_type, git_enabled).compile(),
            lambda: ref.Memory(blocks, [], agent_type, git_enabled).compile(),
        )
        assert_same(
            lambda: mp.Memory(blocks, [], agent_type, git_enabled).render_memory_filesystem(),
            lambda: ref.Memory(blocks, [], agent_type, git_enabled).render_memory_filesystem(),
        )


def test_blocks_of_every_kind_in_one_list_read_what_getattr_reads():
    # One call remembers, per attribute name, a type whose instance dict decides: the kinds alternate.
    kinds = [make for make in BLOCKS.values() if make is not BLOCKS["__getattr__ raising KeyError"]]
    blocks = [make() for _ in range(3) for make in kinds]
    for agent_type, git_enabled in (("memgpt_agent", False), ("letta_v1_agent", True)):
        assert_same(
            lambda: mp.Memory(blocks, [], agent_type, git_enabled).compile(),
            lambda: ref.Memory(blocks, [], agent_type, git_enabled).compile(),
        )


def test_a_property_added_to_a_class_is_read_next_time(monkeypatch):
    block = Hooked(**FIELDS)
    memory = mp.Memory([block])
    assert "\nv\u00e9\n" in memory.compile()
    monkeypatch.setattr(Hooked, "value", property(lambda self: "patched"), raising=False)
    memory.clear_cache()
    assert memory.compile() == ref.Memory([block]).compile()
    assert "\npatched\n" in memory.compile()


def test_a_getattr_added_to_a_class_is_called_next_time(monkeypatch):
    block = Fields(**{k: v for k, v in FIELDS.items() if k != "description"})
    with pytest.raises(AttributeError):
        mp.Memory([block]).compile()
    monkeypatch.setattr(
        Fields, "__getattr__", lambda self, name: "late" if name == "description" else None, raising=False
    )
    assert mp.Memory([block]).compile() == ref.Memory([block]).compile()
    assert "\nlate\n" in mp.Memory([block]).compile()


class Patching(Hooked):
    """Reading ``limit`` of a block that asks for it gives the class a ``description`` property."""

    @property
    def limit(self):
        if self.__dict__.get("patch") and "description" not in Patching.__dict__:
            Patching.description = property(lambda self: "from the class")
        return self.__dict__["limit"]


def test_a_class_changed_while_its_blocks_are_read_is_read_as_changed():
    # The second block's limit changes the class after the first block's description was read from the dict.
    def blocks():
        if "description" in Patching.__dict__:
            del Patching.description
        return [Patching(**FIELDS), Patching(**FIELDS, patch=True), Patching(**FIELDS)]

    try:
        expected = ref.Memory(blocks(), [], "memgpt_agent").compile()
        assert expected.count("from the class") == 1
        assert_same(lambda: mp.Memory(blocks(), [], "memgpt_agent").compile(), lambda: expected)
    finally:
        if "description" in Patching.__dict__:
            del Patching.description


# Where a field sat in one instance's dict is remembered across calls (crate::lookups), and
# read there only if the key found there is the field's name itself: these change the dict.


def reordered(order):
    block = Hooked()
    for name in order:
        block.__dict__[name] = FIELDS[name]
    return block


ORDERS = [list(FIELDS), list(reversed(FIELDS)), ["value", "limit", "label", "description"]]


def test_instances_of_one_class_with_their_fields_in_different_orders_read_what_getattr_reads():
    for first in ORDERS:
        blocks = [reordered(first)] + [reordered(order) for order in ORDERS]
        assert_same(lambda: mp.Memory(blocks).compile(), lambda: ref.Memory(blocks).compile())
        # One order per call, after another call learned another order.
        for order in ORDERS:
            assert_same(
                lambda: mp.Memory([reordered(order)]).compile(), lambda: ref.Memory([reordered(order)]).compile()
            )


def test_a_field_deleted_and_set_again_is_read_where_it_now_is():
    block = Hooked(**FIELDS)
    assert_same(lambda: mp.Memory([block]).compile(), lambda: ref.Memory([block]).compile())
    del block.__dict__["value"]
    block.__dict__["other"] = "o"
    block.__dict__["value"] = "moved \u2192"
    memory = mp.Memory([block, Hooked(**FIELDS)])
    assert_same(lambda: memory.compile(), lambda: ref.Memory([block, Hooked(**FIELDS)]).compile())
    assert "\nmoved \u2192\n" in memory.compile()


def not_interned(name):
    made = "".join(list(name))
    assert made == name and made is not name
    return made


def test_a_field_whose_key_is_an_equal_string_but_not_the_name_itself_is_read():
    def blocks(first_interned):
        interned = Hooked(**FIELDS)
        equal = Hooked()
        for name, value in FIELDS.items():
            equal.__dict__[not_interned(name)] = f"{value} (equal key)" if isinstance(value, str) else value
        return [interned, equal] if first_interned else [equal, interned]

    for first_interned in (True, False, True):
        assert_same(
            lambda: mp.Memory(blocks(first_interned)).compile(), lambda: ref.Memory(blocks(first_interned)).compile()
        )
        assert "human (equal key)" in mp.Memory(blocks(first_interned)).compile()


def test_a_property_removed_from_a_class_is_read_from_the_dict_next_time():
    class Temporary(Hooked):
        value = property(lambda self: "from the property")

    block = Temporary(**FIELDS)
    assert "\nfrom the property\n" in mp.Memory([block]).compile()
    del Temporary.value
    assert_same(lambda: mp.Memory([block]).compile(), lambda: ref.Memory([block]).compile())
    assert "\nv\u00e9\n" in mp.Memory([block]).compile()


def read_a_block_of_a_new_class(i):
    namespace = {"value": property(lambda self: "from the property")} if i % 2 else {}
    cls = type(f"Made{i}", (Hooked,), namespace)
    block = cls(**FIELDS)
    assert_same(lambda: mp.Memory([block]).compile(), lambda: ref.Memory([block]).compile())
    assert ("\nfrom the property\n" in mp.Memory([block]).compile()) == bool(i % 2)
    return id(cls)


def test_a_class_made_where_a_freed_one_was_is_read_as_itself():
    # Classes made and freed in turn reuse addresses; every other one has a property over the dict.
    addresses = set()
    for i in range(40):
        addresses.add(read_a_block_of_a_new_class(i))
        gc.collect()
    assert len(addresses) < 40
