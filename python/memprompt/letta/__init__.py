"""Run a stock letta 0.16.8 on memprompt's Rust core.

``install()`` replaces, on Letta's own classes, the functions that render the system prompt; each
replacement returns what the Letta function returns::

    import memprompt.letta

    memprompt.letta.install()                  # mode "render"; or: with memprompt.letta.installed(): ...
    memprompt.letta.install(mode="rebuild")    # the same as install(rebuild=True)

Modes:

- ``render`` (``rendering``): the renderers only; every byte as stock.
- ``rebuild``: also Letta's decisions to rebuild message[0], made exactly (``decisions``), the shared-block
  fan-out batched (``fanout``), and what each message[0] was built from recorded (``stamps``). Every mode but
  ``render`` also makes the context-window overview's sections of message[0] exact (``context``).
- ``stable``: as ``rebuild``, and a forced refresh (compaction, memory tools, fan-out) leaves message[0]
  byte for byte as it is unless its template or memory section changed; its blocks in label order.
- ``deferred``: as ``stable``, and an edit an agent made with its own memory tool waits to reach its message[0]
  until the next compaction, message reset, recompile or outside edit, or more than
  ``$MEMPROMPT_DEFERRED_EDITS`` (default 10) edits wait (``deferral``).

Without writing code: ``memprompt run [--mode MODE] -- COMMAND`` or ``MEMPROMPT_LETTA=MODE`` in the
environment (``autoinstall``). Importing this package does not import Letta; ``install()`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional

from . import patching
from .decisions import Mode

__all__ = [
    "MODES",
    "SUPPORTED_LETTA_VERSION",
    "Mode",
    "install",
    "installed",
    "installed_mode",
    "is_installed",
    "uninstall",
]

#: The only Letta release whose output memprompt is proven to reproduce.
SUPPORTED_LETTA_VERSION = "0.16.8"
MODES: tuple[Mode, ...] = ("render", "rebuild", "stable", "deferred")

_RANK = {mode: rank for rank, mode in enumerate(MODES)}
_mode: Optional[Mode] = None


def is_installed() -> bool:
    """Whether memprompt currently renders Letta's prompts."""
    return patching.any_replaced()


def installed_mode() -> Optional[Mode]:
    """The mode installed, or None."""
    return _mode if is_installed() else None


def install(*, allow_other_versions: bool = False, rebuild: bool = False, mode: Optional[Mode] = None) -> None:
    """Make Letta render its prompts with memprompt (``mode``, default ``render``; ``rebuild=True`` means
    ``mode="rebuild"``). Installing the installed mode again does nothing; another mode replaces it.
    Raises ``RuntimeError`` for a Letta other than 0.16.8 unless ``allow_other_versions=True``.
    """
    global _mode
    wanted: Mode = mode if mode is not None else ("rebuild" if rebuild else "render")
    if wanted not in _RANK:
        raise ValueError(f"memprompt mode must be one of {', '.join(MODES)}, not {wanted!r}")
    with patching.lock:
        current = installed_mode()
        if current == wanted or (mode is None and current is not None and _RANK[current] >= _RANK[wanted]):
            return  # install() and install(rebuild=True) keep a stronger mode installed earlier
        _check_version(allow_other_versions)
        if current is not None:
            patching.restore_all()
        from . import rendering

        rendering.install(ordered=wanted in ("stable", "deferred"))
        if wanted != "render":
            from . import context, decisions, deferral, fanout, stamps

            deferred = wanted == "deferred"
            context.install()
            decisions.install(wanted)
            fanout.install(stable=wanted in ("stable", "deferred"), deferred=deferred)
            if deferred:
                deferral.install()
            stamps.create_table(_database_uri(), *((deferral.CREATE,) if deferred else ()))
        _mode = wanted


def uninstall() -> None:
    """Put Letta's own functions back (the very objects ``install()`` replaced). Harmless when not installed."""
    global _mode
    with patching.lock:
        patching.restore_all()
        _mode = None


@contextmanager
def installed(
    *, allow_other_versions: bool = False, rebuild: bool = False, mode: Optional[Mode] = None
) -> Iterator[None]:
    """``install()`` for the ``with`` block; uninstalls on exit unless it was installed before."""
    already = is_installed()
    install(allow_other_versions=allow_other_versions, rebuild=rebuild, mode=mode)
    try:
        yield
    finally:
        if not already:
            uninstall()


def _check_version(allow_other_versions: bool) -> None:
    try:
        import letta
        import letta.helpers.tool_rule_solver  # noqa: F401  (what rendering replaces: all there, or a clear error)
        import letta.otel.tracing  # noqa: F401
        import letta.prompts.prompt_generator  # noqa: F401
        import letta.schemas.memory  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"memprompt.letta.install() needs letta=={SUPPORTED_LETTA_VERSION} installed: {exc}") from exc
    found = _letta_version(letta)
    if found != SUPPORTED_LETTA_VERSION and not allow_other_versions:
        raise RuntimeError(
            f"memprompt reproduces letta {SUPPORTED_LETTA_VERSION} but letta {found} is installed, "
            "whose prompts may differ; call memprompt.letta.install(allow_other_versions=True) to patch it anyway"
        )


def _letta_version(letta: Any) -> str:
    # letta.__version__ is what Letta reports about itself (it honours $LETTA_VERSION); else the installed metadata.
    version = getattr(letta, "__version__", None)
    if version is None:
        from importlib.metadata import version as metadata_version

        version = metadata_version("letta")
    return str(version)


def _database_uri() -> Optional[str]:
    from letta.settings import settings

    uri: Optional[str] = settings.letta_pg_uri_no_default
    return uri
