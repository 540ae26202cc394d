"""SpecLA's state-commit specification (docs/specla.md): the fixed-point fraction widths, the
accumulator width and the factor-load codes, shared by the RTL
(:class:`ahasd.hw.state_commit.StateCommit`) and its bit-exact mirror
(:mod:`ahasd.sim.specla.fixed`, which documents the formats)."""

__all__ = ["S_FRAC", "K_FRAC", "U_FRAC", "W_FRAC", "ACC_BITS", "FACTOR_KINDS"]

#: Fraction bits of the state S (Q3.12), the keys k (Q1.14), the values u (Q3.12) and the decay
#: products P, w_t (unsigned Q1.15).
S_FRAC, K_FRAC, U_FRAC, W_FRAC = 12, 14, 12, 15
#: Accumulator bits (Q12.27).
ACC_BITS = 40
#: Codes of the factor-load port of the RTL (``ahasd.hw.state_commit.FactorKind``).
FACTOR_KINDS = {"P": 0, "W": 1, "K": 2, "U": 3}
