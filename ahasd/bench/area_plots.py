"""Plots of an area sweep (:mod:`ahasd.bench.area_sweep`; points: :mod:`ahasd.bench.area_points`).

``sweep.png``: for each block and each parameter that takes more than one value (and, for the
EDC, its PHT entries), total area in mm² against that parameter, one line per combination of the
block's other parameters (nothing averaged away). ``edc_area_accuracy.png``: each EDC point's
prediction accuracy on the recorded traces against its area in mm² and in logic gate
equivalents, beside the accuracy of the best constant predictor of each trace.
"""

from ahasd.bench.area_points import SWEPT

__all__ = ["plot_area", "plot_edc_tradeoff"]


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _panels(rows):
    """``[(block, x, [(label, [(x value, row)])])]`` for every varying parameter of a block.

    A parameter that moves only together with others (the queues' feedback depth set to half
    the draft depth) gets one line over its values with the others named in the label, and no
    panel of its own for the others; one that neither varies alone nor determines the others
    (the EDC's LLR bits, paired with bucket bits) gets no panel: the PHT-entries panel shows it.
    """
    good = [r for r in rows if not r.get("error")]
    panels = []
    for block in dict.fromkeys(r["block"] for r in good):
        mine = [r for r in good if r["block"] == block]
        params = [k for k in SWEPT[block] if any(k in r for r in mine)]
        varying = [k for k in params if len({r.get(k) for r in mine}) > 1]
        xs = list(varying)
        if block == "edc" and len({r["pht_entries"] for r in mine}) > 1:
            xs.append("pht_entries")
        covered = set()
        for x in xs:
            if x in covered:
                continue
            # pht_entries is derived from bucket_bits and llr_bits: group by the rest.
            derived = ("bucket_bits", "llr_bits") if x == "pht_entries" else ()
            others = [k for k in varying if k != x and k not in derived]
            lines = {}
            for r in mine:
                label = ", ".join(f"{k}={r.get(k)}" for k in others) or block
                lines.setdefault(label, []).append((r[x], r))
            if others and all(len(v) == 1 for v in lines.values()):
                if len({r[x] for r in mine}) < len(mine):
                    continue             # not a function of x alone
                lines = {f"{', '.join(others)} moving with {x}": [(r[x], r) for r in mine]}
                covered.update(others)
            panels.append((block, x, [(k, sorted(v, key=lambda t: t[0]))
                                      for k, v in lines.items()]))
    return panels


def plot_area(rows, path):
    """Write ``sweep.png`` (see the module docstring) to ``path``."""
    plt = _pyplot()
    panels = _panels(rows)
    if not panels:                   # one point per block: a bar per point instead
        fig, ax = plt.subplots(figsize=(6, 3.5))
        good = [r for r in rows if not r.get("error")]
        ax.bar(range(len(good)), [r["total_mm2"] for r in good])
        ax.set_xticks(range(len(good)), [r["block"] for r in good])
        ax.set_ylabel("area (mm², 28 nm)")
    else:
        cols = min(3, len(panels))
        nrows = -(-len(panels) // cols)
        fig, axs = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
        for ax, (block, x, lines) in zip(axs.flat, panels):
            for label, pts in lines:
                ax.plot([p[0] for p in pts], [p[1]["total_mm2"] for p in pts], marker="o",
                        label=label)
            values = sorted({p[0] for _, pts in lines for p in pts})
            if all(v > 0 for v in values) and max(values) / min(values) >= 4:
                ax.set_xscale("log", base=2)
            ax.set_xticks(values, [str(v) for v in values])
            ax.set_xlabel(f"{block} {x}")
            ax.set_ylabel("area (mm², 28 nm)")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
            ax.set_title(block)
            if len(lines) > 1 or lines[0][0] != block:
                ax.legend(fontsize=7)
        for ax in list(axs.flat)[len(panels):]:
            ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _pareto(points):
    """Indices of ``(area, accuracy)`` points no other point beats on both (smaller area and
    at least the accuracy, or the same area and a higher accuracy)."""
    return [i for i, (a, q) in enumerate(points)
            if not any((a2 < a and q2 >= q) or (a2 == a and q2 > q) for a2, q2 in points)]


def plot_edc_tradeoff(rows, traces, path):
    """Write ``edc_area_accuracy.png`` to ``path``: ``rows`` of EDC points with accuracy,
    ``traces`` the traces' summaries (:func:`ahasd.bench.area_sweep.record_traces`).

    Left, one column per EDC point (sorted by area): area in mm² and in logic gate equivalents
    above, prediction accuracy on each trace and pooled below, beside each trace's best constant
    predictor. Right: pooled accuracy against mm², the points no other beats on both joined."""
    from ahasd.sim.blocks.edc import EDCParams
    plt = _pyplot()
    edc = sorted((r for r in rows if r["block"] == "edc" and not r.get("error")
                  and r.get("edc_accuracy") is not None), key=lambda r: r["total_mm2"])
    labels = [f"D{r.get('history_depth', EDCParams.history_depth)}/{r['pht_entries']}"
              for r in edc]
    x = list(range(len(edc)))
    mm2 = [r["total_mm2"] * 1e3 for r in edc]
    fig = plt.figure(figsize=(14, 6.5))
    grid = fig.add_gridspec(2, 2, width_ratios=(1.6, 1))
    ax_area = fig.add_subplot(grid[0, 0])
    ax_acc = fig.add_subplot(grid[1, 0], sharex=ax_area)
    ax_trade = fig.add_subplot(grid[:, 1])

    ax_area.bar([i - 0.2 for i in x], mm2, width=0.4, color="C0", label="total area, 10⁻³ mm²")
    ge = ax_area.twinx()
    ge.bar([i + 0.2 for i in x], [r["area_ge"] for r in edc], width=0.4, color="C7",
           label="logic, NAND2 GE")
    ax_area.set_ylabel("10⁻³ mm² (28 nm)")
    ge.set_ylabel("NAND2 gate equivalents")
    handles = ax_area.get_legend_handles_labels()
    more = ge.get_legend_handles_labels()
    ax_area.legend(handles[0] + more[0], handles[1] + more[1], fontsize=7, loc="upper left")
    ax_area.set_title("EDC area beside its prediction accuracy (history depth D / PHT entries; "
                      "PHT an SRAM macro from 512 bits)", fontsize=9)

    for n, t in enumerate(traces):
        color = f"C{n + 1}"
        ax_acc.plot(x, [r[f"accuracy_{t['name']}"] for r in edc], marker="o", color=color,
                    label=t["name"] + (f" (acceptance {t['acceptance_rate']:.2f})"
                                       if "acceptance_rate" in t else ""))
        ax_acc.axhline(t["constant_accuracy"], ls="--", lw=0.8, color=color,
                       label=f"{t['name']}: best constant predictor")
    ax_acc.plot(x, [r["edc_accuracy"] for r in edc], marker="x", color="black",
                label="pooled over the traces")
    ax_acc.set_xticks(x, labels, rotation=45, fontsize=8)
    ax_acc.set_ylabel("prediction accuracy")
    ax_acc.legend(fontsize=7, ncol=2)

    points = [(a, r["edc_accuracy"]) for a, r in zip(mm2, edc)]
    ax_trade.scatter([p[0] for p in points], [p[1] for p in points], color="black", s=18)
    front = sorted(_pareto(points), key=lambda i: points[i][0])
    ax_trade.plot([points[i][0] for i in front], [points[i][1] for i in front], color="C3",
                  marker="o", label="not beaten on area and accuracy")
    for i in front:
        ax_trade.annotate(labels[i], points[i], fontsize=7, xytext=(3, 3),
                          textcoords="offset points")
    scored = sum(t["scored"] for t in traces)
    full = sum(t["fully_accepted"] for t in traces)
    if scored:
        ax_trade.axhline(max(full, scored - full) / scored, ls="--", lw=0.8, color="gray",
                         label="best constant predictor, pooled")
    ax_trade.set_xlabel("EDC area (10⁻³ mm², 28 nm)")
    ax_trade.set_ylabel("prediction accuracy, pooled over the traces")
    ax_trade.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
