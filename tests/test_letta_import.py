"""Importing memprompt (and memprompt.letta) never imports Letta; only ``memprompt.letta.install()`` does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import memprompt

# The folder holding the memprompt package that this interpreter imports.
PACKAGE_ROOT = str(Path(memprompt.__path__[0]).resolve().parent)


def run(code: str, *extra_path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*extra_path, PACKAGE_ROOT])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_import_memprompt_does_not_import_letta():
    result = run("import memprompt, sys; assert 'letta' not in sys.modules")
    assert result.returncode == 0, result.stderr


def test_import_memprompt_letta_does_not_import_letta(tmp_path):
    # A letta that fails loudly when imported: even a guarded `import letta` would show.
    (tmp_path / "letta").mkdir()
    (tmp_path / "letta" / "__init__.py").write_text("raise SystemExit('letta was imported')\n")
    code = (
        "import sys, memprompt, memprompt.letta; "
        "assert not any(m == 'letta' or m.startswith('letta.') for m in sys.modules); "
        "assert not memprompt.letta.is_installed()"
    )
    result = run(code, str(tmp_path))
    assert result.returncode == 0, result.stderr


def test_install_without_letta_says_what_is_missing(tmp_path):
    code = (
        "import memprompt.letta\n"
        "try:\n"
        "    memprompt.letta.install()\n"
        "except ImportError as exc:\n"
        "    assert 'letta==0.16.8' in str(exc), exc\n"
        "    assert not memprompt.letta.is_installed()\n"
        "else:\n"
        "    raise AssertionError('installed without letta')\n"
    )
    # An empty `letta` that has none of the modules install() needs.
    (tmp_path / "letta").mkdir()
    (tmp_path / "letta" / "__init__.py").write_text("")
    result = run(code, str(tmp_path))
    assert result.returncode == 0, result.stderr
