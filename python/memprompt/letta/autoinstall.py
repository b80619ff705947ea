"""``MEMPROMPT_LETTA=render|rebuild|stable|deferred``: memprompt installed in a Python process without a line of code.

The wheel ships ``memprompt_letta.pth``; at interpreter start it calls ``activate()`` only when the variable
is set (unset, site imports nothing of memprompt). ``activate()`` imports no Letta either: it puts a finder
in front of ``sys.meta_path`` that waits for the ``letta`` package to finish importing, then installs
memprompt in the mode named. Every process started with the variable, and every child it starts (uvicorn
and granian workers are fresh interpreters, and inherit the environment), does the same.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Optional

VARIABLE = "MEMPROMPT_LETTA"
logger = logging.getLogger("memprompt.letta")


def activate() -> None:
    """Install memprompt as soon as ``letta`` is imported, in the mode ``$MEMPROMPT_LETTA`` names."""
    mode = os.environ.get(VARIABLE, "").strip()
    if not mode:
        return
    if "letta" in sys.modules:
        _install(mode)
    elif not any(isinstance(finder, _LettaFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LettaFinder(mode))


def _install(mode: str) -> None:
    from . import MODES, install

    if mode not in MODES:
        logger.warning("%s=%r is not one of %s: memprompt not installed", VARIABLE, mode, ", ".join(MODES))
        return
    try:
        install(mode=mode)
        # One line per process in the server's log: which workers run memprompt, and in which mode.
        print(f"memprompt: installed in mode {mode} (pid {os.getpid()})", file=sys.stderr, flush=True)
    except Exception:
        # A Letta that cannot be patched runs as it is: memprompt must never stop a server from starting.
        logger.exception("memprompt could not be installed in mode %s; Letta runs unpatched", mode)


class _LettaFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of ``letta`` so that memprompt installs once it has run."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != "letta":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _InstallAfter(spec.loader, self.mode)
        return spec


class _InstallAfter(importlib.abc.Loader):
    def __init__(self, loader: Any, mode: str) -> None:
        self.loader = loader
        self.mode = mode

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        module: Optional[ModuleType] = self.loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The real loader stays the module's (__loader__, resources); memprompt installs once letta/__init__ ran.
        module.__spec__.loader = self.loader  # type: ignore[union-attr]
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        _install(self.mode)
