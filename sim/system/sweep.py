"""Parameter sweeps: the cartesian product of value lists, run as independent simulator cells.

A sweep axis is ``KEY=V1,V2,...`` where KEY is a configuration key (``SECTION.KEY``, e.g.
``pim.internal_bw_gbps``, ``npu.int8_tops``, ``controller.max_lookahead_batches``), an EDC
parameter (``edc.h_max_nats``; ``edc.bucket_bits`` and ``edc.llr_bits``, which set the PHT size
``2**(2*bucket_bits + llr_bits)``), or ``acceptance_pair`` (a golden pair name: the acceptance
level). Cells run through :func:`ahasd.sim.system.parallel.run_cells` (this process, local
processes, or a dask.distributed scheduler), with identical results either way.

The cross-layer trade-off: a sweep with a ``pim.units`` axis (and, say, ``memory.placement``)
given the GEMV unit's area (``gemv_mm2``, from the area flow: ``ahasd area gemv``) adds each
point's added PIM area (``pim.units x gemv_mm2``) and energy per token to its row and draws
``pim_units.png``: throughput and energy per token against the added area, one line per other
axis value (:func:`pim_units_plot`).

The same machinery runs other kinds of sweep: a kind builds its cells, names its cell evaluator
for :func:`ahasd.sim.system.parallel.run_cells` and writes its rows with :func:`write_rows`
(``sweep.csv`` and ``sweep.json`` in the output folder, as here). The area sweep of the
application layer (``ahasd sweep area``, ``ahasd.bench.area_sweep``) is one.
"""

import csv
import itertools
import json

from ahasd.sim.system.config import ConfigError, load_config, parse_override

__all__ = ["parse_axis", "sweep_cells", "run_sweep", "write_rows", "pim_units_plot", "EDC_KEYS"]

EDC_KEYS = ("h_max_nats", "bucket_bits", "llr_bits", "history_depth", "counter_bits")
METRICS = ("throughput_tok_s", "tokens_per_mj", "acceptance_rate", "mean_draft_len",
           "preverifies", "edc_suppressed")


def parse_axis(text):
    """``"KEY=V1,V2"`` -> ``(key, [values])``, every value validated."""
    if "=" not in text:
        raise ConfigError(f"a sweep axis needs KEY=V1,V2,..., not {text!r}")
    name, raw = text.split("=", 1)
    name = name.strip()
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not values:
        raise ConfigError(f"sweep axis {name} has no values")
    if name == "acceptance_pair":
        from ahasd.sim.decoding.pairs import pair_choices
        for v in values:
            if v not in pair_choices():
                raise ConfigError(f"acceptance_pair must be one of {', '.join(pair_choices())}, "
                                  f"not {v!r}")
        return name, values
    if name.startswith("edc."):
        key = name[4:]
        if key not in EDC_KEYS:
            raise ConfigError(f"unknown EDC parameter {name} (known: {', '.join(EDC_KEYS)})")
        out = []
        for v in values:
            _, _, parsed = parse_override(f"edc.{key}={v}")
            from ahasd.sim.blocks.edc import EDCParams
            EDCParams(**{key: parsed})   # raises ValueError naming a bad value
            out.append(parsed)
        return name, out
    out = []
    for v in values:
        o = parse_override(f"{name}={v}")
        load_config([o])                 # validates the key and the value
        out.append(o[2])
    return name, out


def sweep_cells(axes, *, system="ahasd", pair="opt", policy="adaedl", tokens=256, seed=0,
                offload=True, max_files=None):
    cells = []
    names = [a[0] for a in axes]
    for combo in itertools.product(*(a[1] for a in axes)):
        cell = {"system": system, "pair": pair, "policy": policy, "tokens": tokens,
                "seed": seed, "offload": offload, "overrides": (), "edc_params": {}}
        if max_files is not None:
            cell["max_files"] = max_files
        overrides, edc = [], {}
        for name, v in zip(names, combo):
            if name == "acceptance_pair":
                cell["acceptance_pair"] = v
            elif name.startswith("edc."):
                edc[name[4:]] = v
            else:
                section, key = name.split(".", 1)
                overrides.append((section, key, v))
        cell["overrides"] = tuple(overrides)
        cell["edc_params"] = edc
        cell["point"] = dict(zip(names, combo))
        cells.append(cell)
    return cells


def run_sweep(axes, out, *, jobs=1, scheduler=None, progress=None, plots=True, gemv_mm2=None,
              **kw):
    """Run the sweep into folder ``out`` (sweep.csv, sweep.json, sweep.png; with a
    ``pim.units`` axis and ``gemv_mm2`` also the area columns and pim_units.png); return the
    rows."""
    from ahasd.sim.system.parallel import run_cells
    cells = sweep_cells(axes, **kw)
    sim_cells = [{k: v for k, v in c.items() if k != "point"} for c in cells]
    rows = run_cells(sim_cells, jobs=jobs, scheduler=scheduler, progress=progress)
    names = [a[0] for a in axes]
    metrics = list(METRICS)
    if "pim.units" in names and gemv_mm2 is not None:
        metrics += ["energy_per_token_mj", "pim_added_mm2"]
        for c, r in zip(cells, rows):
            r["pim_added_mm2"] = c["point"]["pim.units"] * gemv_mm2
            if "error" not in r:
                r["energy_per_token_mj"] = 1 / r["tokens_per_mj"]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names + metrics + ["error"])
        for c, r in zip(cells, rows):
            w.writerow([c["point"][n] for n in names]
                       + [r.get(m, "") for m in metrics] + [r.get("error", "")])
    (out / "sweep.json").write_text(json.dumps(
        [{"point": c["point"], **{m: r.get(m) for m in metrics}, "error": r.get("error")}
         for c, r in zip(cells, rows)], indent=1, sort_keys=True) + "\n")
    if plots:
        _plot(axes, cells, rows, out)
        if "pim_added_mm2" in metrics:
            pim_units_plot(names, cells, rows, out / "pim_units.png", gemv_mm2)
    return rows


def write_rows(out, columns, rows):
    """Write ``rows`` (dicts) to ``out/sweep.csv`` (``columns`` in order, empty where a row has
    no value) and ``out/sweep.json`` (each row with every column, null where missing)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in columns])
    (out / "sweep.json").write_text(json.dumps(
        [{c: r.get(c) for c in columns} for r in rows], indent=1, allow_nan=False) + "\n")


def _plot(axes, cells, rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, len(axes), figsize=(5 * len(axes), 3.5), squeeze=False)
    for ax, (name, values) in zip(axs[0], axes):
        # Each axis against throughput, averaged over the other axes.
        ys = []
        for v in values:
            sel = [r["throughput_tok_s"] for c, r in zip(cells, rows)
                   if c["point"][name] == v and "error" not in r]
            ys.append(sum(sel) / len(sel) if sel else float("nan"))
        ax.plot([str(v) for v in values], ys, marker="o")
        ax.set_xlabel(name)
        ax.set_ylabel("throughput (tok/s)")
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=100)
    plt.close(fig)


def pim_units_plot(names, cells, rows, path, gemv_mm2):
    """``pim_units.png``: throughput (left) and energy per token (right) against the PIM's
    added area (``pim.units x gemv_mm2``), one line per value of the other axes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    others = [n for n in names if n != "pim.units"]
    lines: dict = {}
    for c, r in zip(cells, rows):
        if "error" in r:
            continue
        label = ", ".join(f"{n}={c['point'][n]}" for n in others) or "AHASD"
        lines.setdefault(label, []).append((r["pim_added_mm2"], c["point"]["pim.units"],
                                            r["throughput_tok_s"], r["energy_per_token_mj"]))
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, pts in lines.items():
        pts.sort()
        area = [p[0] for p in pts]
        ax_t.plot(area, [p[2] for p in pts], marker="o", label=label)
        ax_e.plot(area, [p[3] for p in pts], marker="o", label=label)
        for a, u, t, _ in pts:
            ax_t.annotate(f"{u}", (a, t), textcoords="offset points", xytext=(3, 3), fontsize=7)
    for ax, ylabel in ((ax_t, "throughput (tok/s)"), (ax_e, "energy per token (mJ)")):
        ax.set_xscale("log")
        ax.set_xlabel(f"PIM GEMV area added (mm², units x {gemv_mm2:.4f} mm² at 28 nm)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    ax_t.legend(fontsize=7)
    ax_t.set_title("labels: pim.units", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
