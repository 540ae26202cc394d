"""Where the project keeps its caches (trained language models, compiled Verilator models)."""

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir():
    """Where compiled models are kept (``$AHASD_CACHE`` or ``$XDG_CACHE_HOME/ahasd``)."""
    if "AHASD_CACHE" in os.environ:
        return Path(os.environ["AHASD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ahasd"
