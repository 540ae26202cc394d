"""Where simulation outputs go: ``build/`` of the checkout (gitignored)."""

from pathlib import Path

__all__ = ["build_root"]


def build_root(start=None):
    """``build/`` beside the ``pyproject.toml`` at or above ``start`` (default: the current
    folder); ``./build`` when there is none (an installed package run elsewhere)."""
    start = Path(start or Path.cwd()).resolve()
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").exists():
            return folder / "build"
    return Path.cwd() / "build"
