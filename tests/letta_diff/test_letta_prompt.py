"""<memory_metadata>, the whole system message, and safe_format."""

from __future__ import annotations

import datetime as dt
from functools import partial

import pytest
import pytz
from hypothesis import given
from letta_bridge import PromptGenerator, assert_same, ref
from strategies import SPECIAL_DATETIMES, format_templates, format_variables, metadata_args, system_message_args


@given(metadata_args())
def test_metadata_block(args):
    assert_same(
        lambda: ref.compile_memory_metadata_block(**args),
        lambda: PromptGenerator.compile_memory_metadata_block(**args),
    )


EVERY_ZONE_DATETIMES = [
    *SPECIAL_DATETIMES,
    *(d.replace(tzinfo=dt.UTC) for d in SPECIAL_DATETIMES),
    dt.datetime(2024, 1, 15, 9, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30, seconds=15))),
    dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-1))),
    dt.datetime(9999, 12, 31, 23, tzinfo=dt.timezone(dt.timedelta(hours=2))),
]


@pytest.mark.parametrize("zone", pytz.all_timezones)
def test_metadata_every_timezone(zone):
    for when in EVERY_ZONE_DATETIMES:
        assert_same(
            partial(ref.compile_memory_metadata_block, when, zone, "agent-1"),
            partial(PromptGenerator.compile_memory_metadata_block, when, zone, "agent-1"),
        )


@given(system_message_args())
def test_system_message(args):
    assert_same(
        lambda: ref.get_system_message_from_compiled_memory(**args),
        lambda: PromptGenerator.get_system_message_from_compiled_memory(**args),
    )


@given(format_templates, format_variables)
def test_safe_format(template, variables):
    assert_same(lambda: ref.safe_format(template, variables), lambda: PromptGenerator.safe_format(template, variables))
