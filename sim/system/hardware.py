"""Hardware models: each device's roofline and energy, apart from the workload (LLMCompass style).

A :class:`Device` runs :class:`ahasd.sim.system.workload.Work` in
``max(macs / (peak_macs * compute_util), bytes / (bandwidth * bw_util))`` per layer (AttAcc's
per-layer max with utilisation caps), plus its nonlinear work:

The LPDDR5-PIM's rates come from the RTL up: ``pim.units`` GEMV units at
``unit_burst_bytes / t_ccd_s x f x efficiency_raw`` MACs (= weight bytes) per second each
(:attr:`ahasd.sim.system.config.Pim.pim_mac_per_s`), with no utilisation cap.

* on a PIM with AAUs (one per rank, :class:`AauTiming`), the RTL AAU's measured occupancy:
  per operator ``base + per_elem * lanes * ceil(elements / (lanes * units))`` PIM cycles, the
  elements split evenly over the ranks' AAUs and padded to whole 16-lane requests (the RTL
  takes one vector per request). The figures are the RTL's cycles, measured by
  ``ahasd bench rtl-timing`` into ``configs/rtl_timing.toml`` (softmax 37, GELU 26, LayerNorm 83
  cycles per vector). A softmax or LayerNorm row longer than 16 lanes also needs its vectors'
  max and sums combined; the RTL does not do that step and the model does not charge it.
* on any other device (NPU vector unit, GPUs), ``passes * elements / vector_rate``, with
  3 passes for softmax (max, exponent-sum, normalise), 1 for the MLP activation and 2 for
  LayerNorm (mean/variance, normalise).

Energy of a pass: ``macs * pj_per_mac + bytes * pj_per_byte`` (the memory level the device reads
its weights and KV cache from) ``+ elements * pj_per_elem``; background power is charged by the
engine over the whole run. :func:`build_devices` turns a :class:`Platform` into the devices.
"""

import math
from dataclasses import dataclass

__all__ = ["Device", "AauTiming", "PASSES", "build_devices", "gemv_slice_cycles"]

#: Passes over the data per nonlinear element kind.
PASSES = {"softmax": 3, "act": 1, "norm": 2}


@dataclass(frozen=True)
class AauTiming:
    """``units`` RTL AAUs at ``freq_hz``: per operator kind ("softmax", "act", "norm") the
    measured ``(base_cycles, cycles_per_elem)`` of one AAU (see the module docstring)."""
    lanes: int
    units: int
    freq_hz: float
    fit: dict

    @classmethod
    def from_config(cls, aau, units, freq_hz):
        return cls(aau.lanes, units, freq_hz, {
            "softmax": (aau.softmax_base_cycles, aau.softmax_cycles_per_elem),
            "act": (aau.gelu_base_cycles, aau.gelu_cycles_per_elem),
            "norm": (aau.layernorm_base_cycles, aau.layernorm_cycles_per_elem)})

    def cycles(self, kind, elems):
        """Cycles of one AAU for its share of ``elems`` elements of ``kind`` (0 for none)."""
        if elems <= 0:
            return 0.0
        base, per_elem = self.fit[kind]
        vectors = math.ceil(elems / (self.lanes * self.units))
        return base + per_elem * self.lanes * vectors

    def seconds(self, work):
        return (self.cycles("softmax", work.softmax_elems) + self.cycles("act", work.act_elems)
                + self.cycles("norm", work.norm_elems)) / self.freq_hz


@dataclass(frozen=True)
class Device:
    """One compute device and the memory it reads (rates in units per second, energy in pJ)."""
    name: str
    macs_per_s: float            #: peak MAC rate
    bytes_per_s: float           #: peak rate of the memory it streams weights/KV from
    compute_util: float
    bw_util: float
    vector_elems_per_s: float    #: nonlinear elements per second per pass (no ``aau``)
    pj_per_mac: float
    pj_per_byte: float
    pj_per_elem: dict            #: {"softmax", "act", "norm"} -> pJ per element
    background_w: float
    capacity_bytes: float
    freq_hz: float
    aau: AauTiming | None = None  #: the RTL AAUs (PIM devices); None: the vector path above

    def roofline_s(self, work):
        """Linear-algebra time of one operator group (no nonlinear part)."""
        return max(work.macs / (self.macs_per_s * self.compute_util),
                   work.bytes / (self.bytes_per_s * self.bw_util))

    def nonlinear_s(self, work):
        if self.aau is not None:
            return self.aau.seconds(work)
        passes = (PASSES["softmax"] * work.softmax_elems + PASSES["act"] * work.act_elems
                  + PASSES["norm"] * work.norm_elems)
        return passes / self.vector_elems_per_s

    def pass_s(self, layer, head, layers, *, nonlinear=True):
        """A whole pass: ``layers`` identical layers and the LM head."""
        t = layers * self.roofline_s(layer) + self.roofline_s(head)
        if nonlinear:
            t += layers * self.nonlinear_s(layer) + self.nonlinear_s(head)
        return t

    def energy_pj(self, work, *, nonlinear=True):
        e = work.macs * self.pj_per_mac + work.bytes * self.pj_per_byte
        if nonlinear:
            e += (work.softmax_elems * self.pj_per_elem["softmax"]
                  + work.act_elems * self.pj_per_elem["act"]
                  + work.norm_elems * self.pj_per_elem["norm"])
        return e

    def min_weight_s(self, weight_bytes):
        """Memory-roofline lower bound of reading ``weight_bytes`` (peak, no utilisation cap)."""
        return weight_bytes / self.bytes_per_s


def gemv_slice_cycles(dram, m, n, efficiency):
    """PIM cycles the model gives one GEMV unit for an ``m x n`` slice: the MACs over the unit's
    raw DRAM rate (:meth:`ahasd.spec.dram.DRAMConfig.raw_mac_bound`, one lane per burst
    byte, one burst per tCCD) times the RTL's measured ``pim.efficiency_raw``: the rate
    :attr:`ahasd.sim.system.config.Pim.unit_mac_per_s` gives each unit in :func:`build_devices`."""
    return m * n / (float(dram.raw_mac_bound()) * efficiency)


def build_devices(cfg):
    """Every device of the platform, by name: npu, pim, gpu, phone-gpu, hbm-pim."""
    npu, pim, gpu, ph, hbm = cfg.npu, cfg.pim, cfg.gpu, cfg.phone_gpu, cfg.hbm_pim
    gb = 1e9
    lpddr5_bytes = pim.offchip_bw_gbps * gb
    offchip_pj_byte = pim.offchip_pj_per_bit * 8
    vec_pj = {k: npu.pj_per_vector_op * PASSES[k] for k in PASSES}
    aau_pj = {"softmax": pim.aau_pj_softmax, "act": pim.aau_pj_gelu, "norm": pim.aau_pj_layernorm}
    # One AAU per PIM rank, at the PIM clock (SpecPIM's HBM-PIM is given the same AAUs; its
    # execution model ships the nonlinear operators to the GPU, so they are never used there).
    aau = AauTiming.from_config(cfg.aau, pim.ranks, pim.freq_mhz * 1e6)
    lanes_rate = aau.lanes * aau.units * aau.freq_hz  # lane-cycles/s (time comes from ``aau``)
    return {
        "npu": Device("npu", npu.int8_tops * 1e12 * npu.chips, lpddr5_bytes, npu.compute_util,
                      npu.bw_util, npu.vector_tops * 1e12 * npu.chips, npu.pj_per_mac,
                      offchip_pj_byte, vec_pj, npu.background_mw / 1e3, pim.mem_gb * gb,
                      npu.freq_mhz * 1e6),
        # The GEMV units at their measured rate: no AttAcc cap (efficiency_raw replaces it).
        "pim": Device("pim", pim.pim_mac_per_s, pim.pim_bytes_per_s, 1.0, 1.0, lanes_rate,
                      pim.pj_per_mac, pim.bank_pj_per_bit * 8,
                      aau_pj, pim.background_mw / 1e3, pim.mem_gb * gb, pim.freq_mhz * 1e6, aau),
        "gpu": Device("gpu", gpu.int8_tops * 1e12, gpu.mem_bw_gbps * gb, gpu.compute_util,
                      gpu.bw_util, gpu.int8_tops * 1e12, gpu.pj_per_mac, gpu.dram_pj_per_bit * 8,
                      {k: gpu.pj_per_mac * PASSES[k] for k in PASSES}, gpu.background_mw / 1e3,
                      gpu.mem_gb * gb, 1e9),
        "phone-gpu": Device("phone-gpu", ph.int8_tops * 1e12, lpddr5_bytes, ph.compute_util,
                            ph.bw_util, ph.int8_tops * 1e12, ph.pj_per_mac, offchip_pj_byte,
                            {k: ph.pj_per_mac * PASSES[k] for k in PASSES},
                            ph.background_mw / 1e3, pim.mem_gb * gb, 1e9),
        "hbm-pim": Device("hbm-pim", hbm.int8_gops * 1e9, hbm.internal_bw_gbps * gb,
                          hbm.compute_util, 1.0, lanes_rate, hbm.pj_per_mac,
                          hbm.bank_pj_per_bit * 8, aau_pj, hbm.background_mw / 1e3,
                          hbm.mem_gb * gb, 1e9, aau),
    }
