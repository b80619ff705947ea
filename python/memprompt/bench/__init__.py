"""``memprompt bench``: the benchmark suite and its report, shipped with the package.

Modules, by what they do: ``workloads`` (every case's input and one callable per
implementation), ``suite`` (the pytest-benchmark tests over them), ``timing`` (the
timed run), ``memory`` (the memory probe), ``results``, ``goals`` (the goals as a
table), ``report`` and ``chart`` (``REPORT.md`` and ``chart.png``), and ``command``
(``memprompt bench`` itself).
"""

from .command import BenchError, add_arguments, run

__all__ = ["BenchError", "add_arguments", "run"]
