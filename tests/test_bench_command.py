"""``memprompt bench``: agent files checked first (compile's one-line errors), and ``--report-only``."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench_sample import sample

from memprompt.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_an_unreadable_agent_file_gets_compiles_error(tmp_path, capsys):
    missing = str(tmp_path / "missing.af")
    assert main(["compile", missing]) == 2
    compile_error = capsys.readouterr().err
    assert (
        main(["bench", "--quick", "--out", str(tmp_path / "out"), "--agents", str(EXAMPLES / "plain.af"), missing]) == 2
    )
    assert capsys.readouterr().err == compile_error
    assert compile_error.startswith(f"memprompt: error: {missing}: ") and compile_error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_malformed_agent_file_gets_compiles_error(tmp_path, capsys):
    bad = tmp_path / "bad.af"
    bad.write_text('{"agents": [{"name": 1}]}')
    assert main(["compile", str(bad)]) == 2
    compile_error = capsys.readouterr().err
    assert main(["bench", "--agents", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == compile_error


def test_report_only_rewrites_the_report(tmp_path, capsys):
    sample(tmp_path)
    assert main(["bench", "--report-only", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "REPORT.md").read_text().startswith("# memprompt benchmarks")
    assert "wrote" in capsys.readouterr().out


def test_report_only_without_results_is_an_error(tmp_path, capsys):
    assert main(["bench", "--report-only", "--out", str(tmp_path)]) == 2
    assert "no benchmark results" in capsys.readouterr().err
    shutil.rmtree(tmp_path)
