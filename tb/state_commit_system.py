"""State-commit unit joined to its LPDDR5 bank model: what tests and the benchmark simulate.

A simulation harness (:class:`ahasd.tb.dram_system.DRAMSystem`):
:class:`ahasd.hw.state_commit.StateCommit` is the synthesizable part and
:class:`ahasd.tb.dram_bank.DRAMBankModel` holds the state. The factor word and the output burst
are split into 64-bit ports (``f_data0..``, ``o_data0..``) so that the Verilated model can be
driven over the pipe harness.
"""

from amaranth.hdl import Cat
from amaranth.lib.wiring import In, Out

from ahasd.hw.state_commit import StateCommit
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_system import DRAMSystem

__all__ = ["StateCommitSystem"]


class StateCommitSystem(DRAMSystem):
    """:class:`StateCommit` + :class:`DRAMBankModel` holding ``init`` (burst words).

    Ports: those of :class:`StateCommit` without the DRAM bus, ``f_data`` split into
    ``f_data0..`` and ``o_stream`` flattened to ``o_valid``, ``o_ready`` and ``o_data0..`` (64 bits
    each, word 0 = low bits; :meth:`split` / :meth:`join`), plus ``dram_error`` /
    ``dram_error_code`` and ``reads``.
    """

    def __init__(self, *, config=DRAMConfig(rows=16), init=(), d_k=128, d_v=128, max_rank=16):
        super().__init__(config=config, init=init,
                         make_unit=lambda c: StateCommit(config=c, d_k=d_k, d_v=d_v,
                                                         max_rank=max_rank))

    def unit_ports(self, u):
        self.words = -(-16 * u.lanes // 64)
        self.f_words = -(-u.load_width // 64)
        sig = {name: member for name, member in u.signature.members.items()
               if (name.startswith("f_") and name != "f_data")
               or name in ("rank", "base_row", "start", "busy", "error", "cycles")}
        for w in range(self.f_words):
            sig[f"f_data{w}"] = In(min(64, u.load_width - 64 * w))
        sig.update({"o_valid": Out(1), "o_ready": In(1)})
        width = 16 * u.lanes
        for w in range(self.words):
            sig[f"o_data{w}"] = Out(min(64, width - 64 * w))
        return sig

    def connect_unit(self, m, u):
        for name in ("f_valid", "f_kind", "f_t", "f_index", "rank", "base_row", "start"):
            m.d.comb += getattr(u, name).eq(getattr(self, name))
        m.d.comb += u.f_data.eq(Cat(*[getattr(self, f"f_data{w}") for w in range(self.f_words)]))
        for name in ("f_ready", "busy", "error", "cycles"):
            m.d.comb += getattr(self, name).eq(getattr(u, name))
        m.d.comb += [self.o_valid.eq(u.o_stream.valid), u.o_stream.ready.eq(self.o_ready)]
        for w in range(self.words):
            port = getattr(self, f"o_data{w}")
            m.d.comb += port.eq(u.o_stream.payload[64 * w:64 * w + len(port)])

    @staticmethod
    def split(value, n):
        """``value`` as ``n`` 64-bit words, low first (for the ``f_data*`` inputs)."""
        return [(value >> (64 * w)) & ((1 << 64) - 1) for w in range(n)]

    @staticmethod
    def join(words):
        """Inverse of :meth:`split` (for the ``o_data*`` outputs)."""
        return sum(int(v) << (64 * w) for w, v in enumerate(words))
