"""Parameter validation inside an Amaranth component's constructor.

Amaranth warns (``UnusedElaboratable``) at garbage collection about every elaboratable that was
created and never elaborated, and it creates the object before ``__init__`` runs, so a component
whose constructor rejects its parameters would warn too. Amaranth 0.5 has no public switch for
that; :func:`rejecting_construction` sets the private ``_MustUse__silence`` flag (the same one
``amaranth.hdl._unused.MustUse`` reads, through :func:`ahasd.hw.compat.silence_unused`) only on
that failure path.
"""

import contextlib

from ahasd.hw.compat import silence_unused

__all__ = ["rejecting_construction"]


@contextlib.contextmanager
def rejecting_construction(component):
    """Wrap parameter validation in a component's ``__init__``.

    Amaranth warns (``UnusedElaboratable``) about every elaboratable that is created and never
    elaborated; a component whose constructor rejects its parameters was never meant to be used,
    so the warning is silenced for it and the error propagates unchanged::

        def __init__(self, *, depth=4):
            with rejecting_construction(self):
                if depth < 1:
                    raise ValueError(f"depth must be >= 1, not {depth}")
    """
    try:
        yield
    except Exception:
        silence_unused(component)
        raise
