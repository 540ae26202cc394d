"""The two clocks of the platform, defined once: the PIM logic at 800 MHz and the NPU at 1 GHz
(docs/architecture.md; the paper's and the authors' configuration). The co-simulation harnesses,
the cocotb benches, TVC's default ``freq_ratio`` and the system simulator's ``npu.freq_mhz`` /
``pim.freq_mhz`` defaults all take them from here."""

from fractions import Fraction

__all__ = ["PIM_PERIOD_PS", "NPU_PERIOD_PS", "PIM_FREQ_MHZ", "NPU_FREQ_MHZ", "PIM_PER_NPU"]

#: PIM clock period: 800 MHz.
PIM_PERIOD_PS = 1250
#: NPU clock period: 1 GHz.
NPU_PERIOD_PS = 1000
PIM_FREQ_MHZ = 1e6 / PIM_PERIOD_PS
NPU_FREQ_MHZ = 1e6 / NPU_PERIOD_PS
#: f_PIM / f_NPU, exactly (4/5).
PIM_PER_NPU = Fraction(NPU_PERIOD_PS, PIM_PERIOD_PS)
