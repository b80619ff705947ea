"""memprompt.letta.autoinstall and ``memprompt run``: MEMPROMPT_LETTA installs memprompt in every Python
process (the wheel's .pth), lazily when Letta is imported, and does nothing at all when unset.

A stand-in ``letta`` package (on PYTHONPATH) records what happens; the real server is in tests/letta_e2e."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memprompt

SITE_PACKAGES = Path(memprompt.__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    not (SITE_PACKAGES / "memprompt_letta.pth").is_file(), reason="needs memprompt installed from its wheel (the .pth)"
)


def _python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "MEMPROMPT_LETTA"}
    environment.update(PYTHONPATH=str(tmp_path), **env)
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, cwd=tmp_path)


@pytest.fixture
def fake_letta(tmp_path: Path) -> Path:
    # A 'letta' whose import is seen, and that cannot be patched (no letta.helpers): install() must fail softly.
    package = tmp_path / "letta"
    package.mkdir()
    (package / "__init__.py").write_text("import sys\n__version__ = '0.16.8'\nsys.stderr.write('letta imported\\n')\n")
    return tmp_path


def test_unset_imports_nothing(tmp_path: Path) -> None:
    result = _python(
        "import sys; print(sorted(m for m in sys.modules if m.startswith(('memprompt', 'letta'))))", tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_set_waits_for_letta_and_never_imports_it(tmp_path: Path) -> None:
    code = (
        "import sys; from memprompt.letta.autoinstall import _LettaFinder; "
        "assert 'letta' not in sys.modules; "
        "assert any(isinstance(f, _LettaFinder) for f in sys.meta_path); print('waiting')"
    )
    result = _python(code, tmp_path, MEMPROMPT_LETTA="rebuild")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "waiting"


def test_importing_letta_triggers_the_install_and_a_failure_never_stops_the_process(fake_letta: Path) -> None:
    result = _python(
        "import letta, sys; print('still running', letta.__version__)", fake_letta, MEMPROMPT_LETTA="stable"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "still running 0.16.8"
    assert result.stderr.index("letta imported") < result.stderr.index(
        "memprompt could not be installed in mode stable"
    )


def test_unknown_mode_is_reported_and_ignored(fake_letta: Path) -> None:
    result = _python("import letta; print('ok')", fake_letta, MEMPROMPT_LETTA="fast")
    assert result.returncode == 0 and result.stdout.strip() == "ok"
    assert "MEMPROMPT_LETTA='fast' is not one of render, rebuild, stable, deferred" in result.stderr


@pytest.mark.parametrize(
    "args, mode",
    [
        ([], "rebuild"),
        (["--mode", "render"], "render"),
        (["--mode", "stable"], "stable"),
        (["--mode", "deferred"], "deferred"),
    ],
)
def test_memprompt_run_sets_the_mode_for_the_command_and_its_children(
    tmp_path: Path, args: list[str], mode: str
) -> None:
    memprompt_command = shutil.which("memprompt", path=str(Path(sys.executable).parent))
    assert memprompt_command is not None
    child = "import os, subprocess, sys; subprocess.run([sys.executable, '-c', 'import os, sys; print(os.environ[\"MEMPROMPT_LETTA\"], \"memprompt.letta.autoinstall\" in sys.modules)'])"
    result = subprocess.run(
        [memprompt_command, "run", *args, "--", sys.executable, "-c", child],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "MEMPROMPT_LETTA"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{mode} True"


def test_memprompt_run_without_a_command_is_an_error(tmp_path: Path) -> None:
    from memprompt.cli import main

    assert main(["run"]) == 2
    assert main(["run", "--"]) == 2
