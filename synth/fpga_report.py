"""The FPGA report of ``ahasd fpga``: place and route of a block, its README section.

:func:`fpga_report` writes a block's Verilog under ``build_dir/family/name`` and places and
routes it (:func:`ahasd.synth.fpga.fpga_of_verilog`); :func:`table_rows` are the cells of the
terminal table (:data:`TABLE_COLUMNS`) and :func:`markdown_fpga` the README's generated section
``fpga-FAMILY``.
"""

from pathlib import Path

from ahasd.synth.export import block_verilog
from ahasd.synth.fpga import fpga_of_verilog
from ahasd.synth.markdown import markdown_table

__all__ = ["fpga_report", "TABLE_COLUMNS", "table_rows", "markdown_fpga"]

#: The columns of the terminal table (:func:`table_rows`).
TABLE_COLUMNS = ("block", "part", "LUTs", "FFs", "DSPs", "BRAMs", "Fmax [MHz]",
                 "utilisation / note", "time [s]")


def fpga_report(name, family, build_dir, *, params=None, top=None, **options):
    """Place and route block ``name`` (constructor ``params``; module ``top``, default ``name``)
    on ``family`` under ``build_dir/family/top``; return its :class:`ahasd.synth.fpga.FpgaReport`."""
    top = top or name
    work = Path(build_dir) / family / top
    work.mkdir(parents=True, exist_ok=True)
    verilog = block_verilog(name, work / f"{top}.v", params, top)
    return fpga_of_verilog(verilog, top, family, work, **options)


def table_rows(reports):
    """The cells (strings) of the terminal table, one row per report (:data:`TABLE_COLUMNS`)."""
    rows = []
    for r in reports:
        util = ", ".join(f"{bel} {u['used']:,}/{u['available']:,}" for bel, u in r.utilisation.items()
                         if not bel.startswith(("SB_GB", "DCC", "SB_IO")))
        rows.append((r.block, r.part, f"{r.luts:,}", f"{r.ffs:,}", f"{r.dsps:,}", f"{r.brams:,}",
                     "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}", r.note or util,
                     f"{r.seconds:,.0f}"))
    return rows


def markdown_fpga(reports, freq_mhz):
    """The README's section ``fpga-FAMILY`` of ``reports`` placed at clock target ``freq_mhz``."""
    rows = []
    for r in reports:
        fmax = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}"
        rows.append((r.block, r.part, f"{r.luts:,}", f"{r.ffs:,}", r.dsps, r.brams, fmax,
                     r.note or "fits"))
    return markdown_table(("block", "part", "LUTs", "FFs", "DSPs", "BRAMs",
                           f"Fmax [MHz] (target {freq_mhz:g})", "note"), rows)
