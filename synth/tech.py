"""Technology figures that turn gate equivalents and memory bits into mm² at 28 nm.

Every figure is stated here once, with where it comes from; :mod:`ahasd.synth.area_report` uses
them, and ``ahasd area`` prints them beside the results and takes overrides on the command line.

* ``NAND2_UM2`` = 0.309 um²: the NanGate 45 nm Open Cell Library's NAND2_X1 (0.798 um², the
  same cell ``gates.lib`` normalises to 1 GE) shrunk by the ideal (28/45)² = 0.387. Commercial
  28 nm 9-track libraries are in the same range (about 0.3-0.5 um² per NAND2 X1); the ideal
  shrink is the lower, optimistic end, said so in ``docs/implementation.md``.
* ``SRAM_BITCELL_UM2`` = 0.127 um²: the 6T high-density SRAM bit cell TSMC announced for its
  28 nm process (64 Mb SRAM test chip, 2009; the figure quoted for the 28 nm HP/LP platforms).
* ``SRAM_ARRAY_EFFICIENCY`` = 0.5: bit-cell area over macro area for the small macros here
  (hundreds of bits to 32 kbit). Large compiled macros reach about 0.7; small ones spend half
  their area on decoders, sense amplifiers, write drivers and timing (the periphery), an
  assumption stated as such.
* ``SRAM_EXTRA_PORT_FACTOR`` = 1.0: each read or write port beyond one read/write port adds
  one bit-cell area per bit (an 8T two-port cell is about twice a 6T cell), assumption.
* ``DIE_MM2`` = 18 mm²: the LPDDR5 die area the AHASD authors' documentation divides by (their
  "2.51 % of an 18 mm² LPDDR5 die").
"""

__all__ = ["NAND2_UM2", "SRAM_BITCELL_UM2", "SRAM_ARRAY_EFFICIENCY", "SRAM_EXTRA_PORT_FACTOR",
           "DIE_MM2", "Technology"]

from dataclasses import asdict, dataclass

NAND2_UM2 = round(0.798 * (28 / 45) ** 2, 3)
SRAM_BITCELL_UM2 = 0.127
SRAM_ARRAY_EFFICIENCY = 0.5
SRAM_EXTRA_PORT_FACTOR = 1.0
DIE_MM2 = 18.0


@dataclass(frozen=True)
class Technology:
    """The area model: logic from gate equivalents, memories from bits.

    Attributes
    ----------
    nand2_um2, sram_bitcell_um2, sram_array_efficiency, sram_extra_port_factor, die_mm2 : float
        See the module docstring for each default and its source.
    """
    nand2_um2: float = NAND2_UM2
    sram_bitcell_um2: float = SRAM_BITCELL_UM2
    sram_array_efficiency: float = SRAM_ARRAY_EFFICIENCY
    sram_extra_port_factor: float = SRAM_EXTRA_PORT_FACTOR
    die_mm2: float = DIE_MM2

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{name} must be a positive number, not {value!r}")
        if self.sram_array_efficiency > 1:
            raise ValueError(f"sram_array_efficiency must be at most 1, not "
                             f"{self.sram_array_efficiency!r}")

    def logic_mm2(self, ge):
        return ge * self.nand2_um2 * 1e-6

    def macro_mm2(self, bits, ports):
        """One SRAM macro of ``bits`` bits and ``ports`` ports (read and write ports counted
        separately; a one-port macro reads and writes through the same port, so ``ports`` of
        1 or 2 mean the single-port cell)."""
        if bits < 0 or ports < 1:
            raise ValueError(f"a macro needs bits >= 0 and ports >= 1, not {bits}, {ports}")
        cell = self.sram_bitcell_um2 * (1 + self.sram_extra_port_factor * max(0, ports - 2))
        return bits * cell / self.sram_array_efficiency * 1e-6

    def as_dict(self):
        return asdict(self)
