"""ahasd.firmware.driver against the golden register model (sim.csr.CSRModel)."""

import pytest

from ahasd.firmware import regs
from ahasd.firmware.driver import BusError, ControllerDriver, DriverError, ModelBus
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel


@pytest.fixture
def model():
    return CSRModel(load())


def test_identification_is_checked(model):
    ControllerDriver(ModelBus(model))

    class WrongID(ModelBus):
        def read32(self, address):
            return 0x12345678 if address == regs.ID else super().read32(address)

    with pytest.raises(DriverError, match="ID reads 0x12345678, expected 0x41485344"):
        ControllerDriver(WrongID(model))


def test_set_fields_keeps_other_fields_and_pulses(model):
    drv = ControllerDriver(ModelBus(model))
    drv.configure_tvc(max_len=3, enabled=False, load_presets=False)
    assert drv.field("TVC_CTRL", "max_len") == 3 and drv.field("TVC_CTRL", "disable") == 1
    model.pulses.clear()
    drv.configure_tvc(freq_ratio=0x3000, pvct=0x5000)
    assert model.pulses == [("TVC_CTRL", "load_presets", 1)]
    assert drv.field("TVC_CTRL", "max_len") == 3          # untouched by the pulse write
    assert drv.read("TVC_FREQ_RATIO") == 0x3000 and drv.read("TVC_PVCT_PRESET") == 0x5000
    drv.enable(False)
    drv.soft_reset()
    assert model.pulses[-1] == ("CTRL", "soft_reset", 1)
    assert drv.field("CTRL", "enable") == 0                # the soft-reset write kept enable
    drv.set_edc_mode("never")
    assert drv.read("EDC_CTRL") == 2
    with pytest.raises(ValueError, match="mode must be one of predict, always, never, not 'x'"):
        drv.set_edc_mode("x")
    with pytest.raises(ValueError, match=r"TVC_CTRL.max_len is 4 bits wide, 16 does not fit"):
        drv.set_fields("TVC_CTRL", max_len=16)
    with pytest.raises(KeyError, match="register CTRL has no field 'bogus'"):
        drv.set_fields("CTRL", bogus=1)


def test_interrupts(model):
    drv = ControllerDriver(ModelBus(model))
    drv.enable_interrupts("edc_stop", "draft_q")
    assert drv.read("INT_ENABLE") == regs.INT_STATUS_EDC_STOP_MASK | regs.INT_STATUS_DRAFT_Q_MASK
    model.hw_set("INT_STATUS", "edc_stop", 1)
    model.hw_set("INT_STATUS", "tvc_error", 1)
    assert drv.pending_interrupts() == {"edc_stop", "tvc_error"}
    drv.acknowledge("edc_stop")
    assert drv.pending_interrupts() == {"tvc_error"}
    with pytest.raises(ValueError, match="interrupt must be one of .*, not 'nope'"):
        drv.acknowledge("nope")


def test_queue_status_and_counters(model):
    drv = ControllerDriver(ModelBus(model))
    model.drive("FEEDBACK_Q_STATUS", "fill", 5)
    model.drive("FEEDBACK_Q_POPS", "count", 9)
    status = drv.queue_status("feedback_q")
    assert status["fill"] == 5 and status["empty"] == 0 and status["pops"] == 9
    drv.set_queue_threshold("draft_q", 12)
    assert drv.read("DRAFT_Q_THRESHOLD") == 12
    counters = drv.counters()
    assert counters["FEEDBACK_Q_POPS"] == 9 and "INT_COUNT" in counters
    with pytest.raises(ValueError, match="queue must be one of draft_q, feedback_q, preverify_q"):
        drv.queue_status("other")


def test_bus_errors_surface(model):
    bus = ModelBus(model)
    with pytest.raises(BusError, match="read of 0x3C answered 0b10"):
        bus.read32(0x3C)
