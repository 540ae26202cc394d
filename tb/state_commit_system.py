"""State-commit unit joined to its LPDDR5 bank model: what tests and the benchmark simulate.

A simulation harness (:class:`ahasd.tb.dram_system.DRAMSystem`):
:class:`ahasd.hw.state_commit.StateCommit` is the synthesizable part and
:class:`ahasd.tb.dram_bank.DRAMBankModel` holds the state. The unit's streams keep their names
(``docs/streams.md``); the payloads wider than 64 bits (the factor word, the output burst) are
split into 64-bit ports (``f__payload0..``, ``o_stream__payload0..``) so that the Verilated model
can be driven over the pipe harness, packed and unpacked through the unit's layouts
(:meth:`StateCommitSystem.factor_words`).
"""

from amaranth.hdl import Cat
from amaranth.lib.wiring import In, Out

from ahasd.hw.state_commit import FactorKind, StateCommit
from ahasd.spec.dram import DRAMConfig
from ahasd.tb.dram_system import DRAMSystem
from ahasd.tb.payloads import pack

__all__ = ["StateCommitSystem"]


class StateCommitSystem(DRAMSystem):
    """:class:`StateCommit` + :class:`DRAMBankModel` holding ``init`` (burst words).

    Ports: those of :class:`StateCommit` without the DRAM bus, the ``f`` and ``o_stream``
    payloads split into ``f__payload0..`` and ``o_stream__payload0..`` (64 bits each, word 0 =
    low bits; :meth:`split` / :meth:`join`), plus ``dram_error`` / ``dram_error_code`` and
    ``reads``.
    """

    def __init__(self, *, config=DRAMConfig(rows=16), init=(), d_k=128, d_v=128, max_rank=16):
        super().__init__(config=config, init=init,
                         make_unit=lambda c: StateCommit(config=c, d_k=d_k, d_v=d_v,
                                                         max_rank=max_rank))

    def unit_ports(self, u):
        self.words = -(-16 * u.lanes // 64)
        f_width = u.factor_layout.size
        self.f_words = -(-f_width // 64)
        sig = {"f__valid": In(1), "f__ready": Out(1)}
        for w in range(self.f_words):
            sig[f"f__payload{w}"] = In(min(64, f_width - 64 * w))
        sig.update({name: u.signature.members[name]
                    for name in ("rank", "base_row", "start", "busy", "error", "cycles")})
        sig.update({"o_stream__valid": Out(1), "o_stream__ready": In(1)})
        width = 16 * u.lanes
        for w in range(self.words):
            sig[f"o_stream__payload{w}"] = Out(min(64, width - 64 * w))
        return sig

    def connect_unit(self, m, u):
        payload = Cat(*[getattr(self, f"f__payload{w}") for w in range(self.f_words)])
        m.d.comb += [u.f.valid.eq(self.f__valid), u.f.payload.eq(payload),
                     self.f__ready.eq(u.f.ready)]
        for name in ("rank", "base_row", "start"):
            m.d.comb += getattr(u, name).eq(getattr(self, name))
        for name in ("busy", "error", "cycles"):
            m.d.comb += getattr(self, name).eq(getattr(u, name))
        m.d.comb += [self.o_stream__valid.eq(u.o_stream.valid),
                     u.o_stream.ready.eq(self.o_stream__ready)]
        for w in range(self.words):
            port = getattr(self, f"o_stream__payload{w}")
            m.d.comb += port.eq(u.o_stream.payload[64 * w:64 * w + len(port)])

    def factor_words(self, kind, t, index, data):
        """The ``f__payload*`` words of one factor load (a ``load_sequence`` entry)."""
        bits = pack(self.unit.factor_layout, {"kind": FactorKind(kind), "t": t, "index": index,
                                              "data": data})
        return self.split(bits, self.f_words)

    @staticmethod
    def split(value, n):
        """``value`` as ``n`` 64-bit words, low first (for the ``f__payload*`` inputs)."""
        return [(value >> (64 * w)) & ((1 << 64) - 1) for w in range(n)]

    @staticmethod
    def join(words):
        """Inverse of :meth:`split` (for the ``o_stream__payload*`` outputs)."""
        return sum(int(v) << (64 * w) for w, v in enumerate(words))
