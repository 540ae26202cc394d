"""TVC at real scale: no shipped pair saturates the widened, prescaled tables (UQ16.8 did)."""

import pytest

from ahasd.sim.system.config import load_config
from ahasd.sim.system.runner import simulate


@pytest.mark.parametrize("pair", sorted(load_config().pairs))
def test_no_shipped_pair_saturates_tvc(pair):
    r = simulate("ahasd", pair, "adaedl", tokens=160, max_files=40, offload=True)
    assert r.tvc_saturated_records == 0 and r.tvc_saturated_decisions == 0
    assert r.preverifies + r.edc_suppressed > 0     # TVC was asked


def test_the_old_uq16_8_tables_saturate():
    # the low-acceptance pair: its EDC stops ask TVC often enough to saturate a decision
    r = simulate("ahasd", "opt", "adaedl", tokens=160, max_files=40, acceptance_pair="low",
                 overrides=["controller.tvc_prescale_bits=0"], tvc_params={"ratio_bits": 24})
    assert r.tvc_saturated_records > 0 and r.tvc_saturated_decisions > 0
