"""The README's usage example runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_usage_example_runs(capsys):
    example = re.search(r"## Usage\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert example is not None, "README has no Usage example"
    exec(compile(example.group(1), str(README), "exec"), {})
    assert capsys.readouterr().out == "<memory_blocks>\nTrue memory changed\n"
