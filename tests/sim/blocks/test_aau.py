"""AAU golden models against float references within the stated error bounds."""

import numpy as np
import pytest

from ahasd.sim.blocks import aau


def vectors():
    rng = np.random.default_rng(0)
    vecs = [rng.integers(-32768, 32768, 16) for _ in range(300)]
    vecs += [np.clip(np.round(rng.normal(0, s, 16) * 256), -32768, 32767).astype(int)
             for s in (0.01, 0.3, 1.0, 3.0, 10.0) for _ in range(100)]
    vecs += [np.full(16, -32768), np.full(16, 32767), np.zeros(16, dtype=int),
             np.r_[[32767], np.full(15, -32768)], np.arange(16) * 4000 - 32768]
    return vecs


def test_softmax_bound():
    for v in vectors():
        out = np.array(aau.softmax_fx(v)) / 2**15
        assert np.abs(out - aau.softmax_float(v)).max() <= aau.SOFTMAX_BOUND
        assert max(aau.softmax_fx(v)) <= 32768


def test_gelu_bound_every_input():
    x = np.arange(-32768, 32768)
    out = np.concatenate([aau.gelu_fx(x[i:i + 16]) for i in range(0, x.size, 16)])
    err = np.abs(out / 256 - aau.gelu_float(x))
    assert err.max() <= aau.GELU_BOUND
    # Half an output LSB is 1.95e-3: the bound is the output rounding plus table error.
    assert err.max() > 1e-3


@pytest.mark.parametrize("eps", [1e-5, 1e-2, 1.0])
def test_layernorm_bound(eps):
    for v in vectors():
        out = np.array(aau.layernorm_fx(v, eps=eps)) / 4096
        assert np.abs(out - aau.layernorm_float(v, eps=eps)).max() <= aau.LAYERNORM_BOUND


def test_validation():
    with pytest.raises(ValueError, match="x must have 16 lanes, not 3"):
        aau.softmax_fx([1, 2, 3])
    with pytest.raises(ValueError,
                       match=r"x\[\d+\] must be an integer in -32768..32767 \(Q8.8 int16 lanes\), not 40000"):
        aau.gelu_fx([40000] + [0] * 15)
