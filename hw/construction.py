"""Parameter validation inside an Amaranth component's constructor, and the target a block is
elaborated for (:func:`on_fpga`).

Amaranth warns (``UnusedElaboratable``) at garbage collection about every elaboratable that was
created and never elaborated, and it creates the object before ``__init__`` runs, so a component
whose constructor rejects its parameters would warn too. Amaranth 0.5 has no public switch for
that; :func:`rejecting_construction` sets the private ``_MustUse__silence`` flag (the same one
``amaranth.hdl._unused.MustUse`` reads, through :func:`ahasd.hw.compat.silence_unused`) only on
that failure path.
"""

import contextlib

from ahasd.hw.compat import silence_unused

__all__ = ["rejecting_construction", "FPGA_TARGETS", "on_fpga"]


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


#: The ``platform`` names the FPGA flow elaborates blocks for (:mod:`ahasd.synth.fpga_report`
#: passes the family): a block may build its arithmetic for the target's resources.
FPGA_TARGETS = ("ecp5", "ice40")


def on_fpga(platform):
    """Whether ``platform`` (the argument of ``elaborate``) is an FPGA: a family name of
    :data:`FPGA_TARGETS`, or an Amaranth platform object (a board build). ``None`` (plain
    Verilog, the 28 nm flows, simulation) and ``"formal"`` are not."""
    if platform is None or isinstance(platform, str):
        return platform in FPGA_TARGETS
    return True
