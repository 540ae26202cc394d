"""Golden entropy model: error bound against float64 and parameter validation."""

import numpy as np
import pytest

from ahasd.sim.blocks.entropy import EntropyConfig, entropy_float, entropy_fx, to_uq4_12


def quantize(z, frac=8, width=16):
    lim = 2 ** (width - 1)
    return np.clip(np.round(np.asarray(z) * 2**frac), -lim, lim - 1).astype(np.int64)


def distributions(rng, vocab):
    peaked = rng.normal(0, 1, vocab)
    peaked[rng.integers(vocab)] += 9.0
    very_peaked = np.full(vocab, -120.0)
    very_peaked[vocab // 2] = 120.0
    rising = np.linspace(-127, 127, vocab)          # the running max grows at every element
    return {
        "flat": rng.normal(0, 0.01, vocab),
        "constant": np.full(vocab, -37.5),
        "peaked": peaked,
        "very_peaked": very_peaked,
        "random_sigma3": rng.normal(0, 3, vocab),
        "zipf": -1.1 * np.log(np.arange(1, vocab + 1)) + rng.normal(0, 0.2, vocab),
        "uniform_wide": rng.uniform(-128, 127.99, vocab),
        "rising": rising,
    }


@pytest.mark.parametrize("vocab", [2, 17, 4096, 32000])
def test_error_bound_against_float(vocab):
    """The stated bound: |H_fx / 4096 - H_float| <= 0.02 nats, V up to 32k."""
    rng = np.random.default_rng(vocab)
    for name, z in distributions(rng, vocab).items():
        zq = quantize(z)
        h = entropy_fx(zq) / 4096
        ref = entropy_float(zq)
        assert abs(h - ref) <= 0.02, (name, h, ref)
        # In practice much tighter: a regression here means an arithmetic bug.
        assert abs(h - ref) <= 4e-3, (name, h, ref)


def test_other_logit_formats():
    rng = np.random.default_rng(5)
    for width, frac in ((8, 2), (12, 4), (24, 12)):
        cfg = EntropyConfig(logit_width=width, logit_frac=frac)
        z = quantize(rng.normal(0, 2, 1000), frac, width)
        assert abs(entropy_fx(z, cfg) / 4096 - entropy_float(z, cfg)) <= 0.02


def test_saturation_and_format():
    assert to_uq4_12(20.0) == 65535
    assert to_uq4_12(-1.0) == 0
    assert to_uq4_12(2.5) == 10240
    assert entropy_fx([100]) == 0
    # Two equal logits: ln 2.
    assert abs(entropy_fx([7, 7]) - to_uq4_12(np.log(2))) <= 1


def test_validation():
    with pytest.raises(ValueError, match="logit_width must be an integer in 8..24, not 4"):
        EntropyConfig(logit_width=4)
    with pytest.raises(ValueError, match="logit_frac must be an integer in 0..14, not 15"):
        EntropyConfig(logit_frac=15)
    with pytest.raises(ValueError, match="max_vocab must be an integer"):
        EntropyConfig(max_vocab=1)
    with pytest.raises(ValueError, match="stream length must be 1..65535, not 0"):
        entropy_fx([])
    with pytest.raises(ValueError,
                       match=r"logits\[0\] must be an integer in -32768..32767 \(16-bit logits\), not 40000"):
        entropy_fx([40000])
