"""Import ``memprompt.reference`` with or without the compiled extension.

``memprompt/__init__.py`` imports the Rust extension ``memprompt._core``; the
reference itself is pure Python. When the package cannot be imported (no
extension built, or a Python that Letta runs on but memprompt was not built
for), we register a bare ``memprompt`` package whose ``__path__`` is the source
folder, so that its submodules import without running ``__init__.py``.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "python" / "memprompt"


def load_by_path():
    """``memprompt.reference`` from the source tree, never running ``memprompt/__init__.py``."""
    if "memprompt" not in sys.modules:
        package = types.ModuleType("memprompt")
        package.__path__ = [str(PACKAGE_DIR)]
        package.__file__ = None
        sys.modules["memprompt"] = package
    return importlib.import_module("memprompt.reference")


def load_reference():
    """The installed ``memprompt.reference`` when the package imports, else the source tree's."""
    try:
        return importlib.import_module("memprompt.reference")
    except ImportError:
        # A failed package import can leave half-imported submodules behind.
        for name in [n for n in sys.modules if n == "memprompt" or n.startswith("memprompt.")]:
            del sys.modules[name]
        return load_by_path()
