"""The timing report of ``ahasd timing``: a block's static timing from the area flow's mapped
netlist (reused when its key matches the design), table rows and the README section."""

from pathlib import Path

from ahasd.hw.blocks import make_block, to_verilog
from ahasd.synth import sta
from ahasd.synth.area_report import area_report
from ahasd.synth.markdown import markdown_table
from ahasd.synth.yosys import LIBERTY, mapped_key

__all__ = ["timing_report", "columns", "HEADER", "markdown_timing"]


def timing_report(name, build_dir, *, target_mhz=None, wire_pf=None):
    """:class:`ahasd.synth.sta.TimingReport` of block ``name`` (default parameters) from the
    area flow's netlist under ``build_dir/name``: reused when its key matches the design,
    synthesised otherwise. Returns ``(report, reused)``."""
    work = Path(build_dir) / name
    key = mapped_key(to_verilog(make_block(name), name))
    stamp = work / "mapped.key"
    reused = ((work / "mapped.json").exists() and stamp.exists()
              and stamp.read_text().strip() == key)
    if not reused:
        area_report(name, build_dir, timing=False)
    netlist = sta.read_netlist(work / "mapped.json", name)
    options = {k: v for k, v in (("target_mhz", target_mhz), ("wire_pf", wire_pf))
               if v is not None}
    return sta.analyse(netlist, sta.read_liberty(LIBERTY), block=name, **options), reused


def columns(r):
    fmax = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:,.0f}"
    return (r.block, f"{r.critical_ns:.3f}", fmax, "yes" if r.meets_target else "no",
            str(r.logic_depth), f"{r.failing_endpoints:,} / {r.endpoints:,}", r.start, r.end)


HEADER = ("block", "critical path ns", "Fmax MHz", "meets {target:g} MHz", "depth",
           "late end points", "from", "to")


def markdown_timing(reports):
    target = reports[0].target_mhz if reports else 800
    return markdown_table([h.format(target=target) for h in HEADER],
                          [columns(r) for r in reports])
