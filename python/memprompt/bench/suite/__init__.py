"""The pytest-benchmark suite of ``memprompt bench``, shipped with the package.

Run it from any folder (``memprompt bench`` does this, then writes the report); its plugin
adds ``--agents`` and must be loaded before the command line is read, hence ``-p``::

    python -m pytest -p memprompt.bench.suite.plugin --pyargs memprompt.bench.suite [--benchmark-disable]
        [-m quick] [--agents FILE.af ...]
"""
