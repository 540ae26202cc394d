"""One driver logic, two runners: every operation of ControllerOps gives the same bus requests,
results and register-model state through ControllerDriver (sync) and AsyncControllerDriver
(async, here over an asyncio wrapper of the model bus); the cocotb run over AxiLiteMaster on the
Verilated controller is tests/firmware/cocotb_driver.py."""

import asyncio

import pytest

from ahasd.firmware import driver as drv_mod
from ahasd.firmware.driver import (
    EDC_MODES,
    GTS_STATES,
    OPERATIONS,
    AsyncControllerDriver,
    BusError,
    ControllerDriver,
    DriverError,
    ModelBus,
    Read,
    Write,
    run_sync,
)
from ahasd.hw import controller
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel
from ahasd.sim.blocks.gts import State


class LoggingBus(ModelBus):
    def __init__(self, model):
        super().__init__(model)
        self.log = []

    def read32(self, address):
        value = super().read32(address)
        self.log.append(("r", address, value))
        return value

    def write32(self, address, value):
        self.log.append(("w", address, value))
        super().write32(address, value)


class AsyncBus:
    """The async bus interface over a sync one (each access yields to the event loop once)."""

    def __init__(self, bus):
        self.bus = bus

    async def read32(self, address):
        await asyncio.sleep(0)
        return self.bus.read32(address)

    async def write32(self, address, value):
        await asyncio.sleep(0)
        self.bus.write32(address, value)


SCRIPT = [
    ("configure_tvc", (), {"freq_ratio": 0x3000, "pvct": 0x5000, "max_len": 3}),
    ("set_edc_mode", ("never",), {}), ("enable", (False,), {}), ("soft_reset", (), {}),
    ("clear_counters", (), {}), ("set_queue_threshold", ("preverify_q", 2), {}),
    ("enable_interrupts", ("edc_stop", "tvc_error"), {}), ("pending_interrupts", (), {}),
    ("acknowledge", ("tvc_error",), {}), ("queue_status", ("draft_q",), {}),
    ("counters", (), {}), ("gts_status", (), {}), ("field", ("TVC_CTRL", "max_len"), {}),
    ("set_fields", ("GTS_DRAFT_MASK",), {"mask": 0x00FF}), ("read", ("SCRATCH",), {}),
    ("write", ("SCRATCH", 0xCAFE), {}), ("check", (), {}),
]


def _model():
    model = CSRModel(load())
    model.hw_set("INT_STATUS", "tvc_error", 1)
    model.drive("DRAFT_Q_STATUS", "fill", 3)
    return model


def test_sync_and_async_runners_agree():
    assert {name for name, *_ in SCRIPT} == set(OPERATIONS)   # the script covers every one
    sync_model, async_model = _model(), _model()
    sync_bus, async_bus = LoggingBus(sync_model), LoggingBus(async_model)
    sync = ControllerDriver(sync_bus)

    async def go():
        adrv = await AsyncControllerDriver.open(AsyncBus(async_bus))
        return [await getattr(adrv, name)(*args, **kwargs) for name, args, kwargs in SCRIPT]

    sync_results = [getattr(sync, name)(*args, **kwargs) for name, args, kwargs in SCRIPT]
    assert asyncio.run(go()) == sync_results
    assert async_bus.log == sync_bus.log and len(sync_bus.log) > 40
    assert async_model.values == sync_model.values and async_model.pulses == sync_model.pulses
    assert sync_results[7] == {"tvc_error"} and sync_results[12] == 3
    assert sync_results[11]["state"] == "idle" and sync_results[11]["draft_allowed"] == 0


def test_operations_are_generators_of_bus_requests():
    ops = drv_mod.ControllerOps()
    gen = ops.set_fields("TVC_CTRL", max_len=4)
    assert gen.send(None) == Read(drv_mod.regs.TVC_CTRL)
    assert gen.send(0x82) == Write(drv_mod.regs.TVC_CTRL, 0x42)   # disable kept, max_len 4
    with pytest.raises(StopIteration):
        gen.send(None)
    with pytest.raises(BusError, match="read of 0x3C answered 0b10"):
        run_sync(ops.read("ID"), type("B", (), {"read32": lambda s, a: ModelBus(
            CSRModel(load())).read32(0x3C)})())


def test_enums_match_the_hardware_side():
    # The controller and the driver both take the modes from the register map's enumeration.
    assert EDC_MODES == dict(controller.EDC_MODES)
    assert GTS_STATES == {s.name.lower(): int(s) for s in State}


def test_gts_state_outside_the_enumeration_is_an_error():
    model = CSRModel(load())
    model.drive("GTS_STATUS", "state", 3)
    with pytest.raises(DriverError, match=r"GTS_STATUS.state reads 3, not one of 0 \(idle\), "
                                          r"1 \(draft\), 2 \(preverify\)"):
        ControllerDriver(ModelBus(model)).gts_status()
