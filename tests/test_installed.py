"""The tests run against an installed memprompt, never the source tree (which could hide a file missing from the wheel)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import memprompt

SOURCE_TREE = Path(__file__).resolve().parents[1] / "python"


def test_memprompt_is_not_imported_from_the_source_tree():
    assert not Path(memprompt.__file__).resolve().is_relative_to(SOURCE_TREE), memprompt.__file__


@pytest.mark.skipif(os.environ.get("MEMPROMPT_TEST_INSTALLED") != "1", reason="set by `make test-wheel`")
def test_memprompt_is_the_installed_wheel():
    package = Path(memprompt.__file__).resolve().parent
    assert package.parent.name == "site-packages", package
    assert (package / "_core.pyi").is_file() and (package / "py.typed").is_file()
    assert (package / "bench" / "suite" / "test_workloads.py").is_file()
