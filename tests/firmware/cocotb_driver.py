"""cocotb: the Python driver (ahasd.firmware.driver, the same operations as over the register
model) runs over cocotbext-axi's AxiLiteMaster on the Verilated controller. Configuration
results are compared with the golden register model driven by the synchronous driver; an EDC
stop interrupt is raised by a real draft push, seen and acknowledged through the driver.
Run by tests/firmware/test_driver_cocotb.py."""

import logging

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from ahasd.firmware.driver import (AsyncControllerDriver, AxiLiteMasterBus, ControllerDriver,
                                   ModelBus)
from ahasd.hw.csr import AXI_PREFIX
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel
from ahasd.sim.blocks.descriptors import DraftDescriptor
from ahasd.sim.blocks.edc import EDC

CONFIG = [
    ("configure_tvc", (), {"freq_ratio": 0x3000, "pvct": 0x5000, "max_len": 3}),
    ("set_edc_mode", ("never",), {}), ("set_queue_threshold", ("draft_q", 5), {}),
    ("set_fields", ("GTS_DRAFT_MASK",), {"mask": 0x00FF}), ("write", ("SCRATCH", 0xCAFE), {}),
    ("enable_interrupts", ("edc_stop", "draft_q"), {}),
]


async def setup(dut):
    cocotb.start_soon(Clock(dut.clk, 1250, unit="ps").start())
    cocotb.start_soon(Clock(dut.npu_clk, 1000, unit="ps").start())
    for name in ("draft_in__valid", "record__valid", "draft_request__valid", "task_done",
                 "draft_out__ready", "squash", "feedback_in__valid", "feedback_out__ready"):
        getattr(dut, name).value = 0
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, AXI_PREFIX), dut.clk, dut.rst)
    master.write_if.log.setLevel(logging.WARNING)
    master.read_if.log.setLevel(logging.WARNING)
    dut.rst.value = dut.npu_rst.value = 1
    for _ in range(4):
        await RisingEdge(dut.clk)
    dut.rst.value = dut.npu_rst.value = 0
    await RisingEdge(dut.clk)
    return master


@cocotb.test()
async def driver_over_axil_matches_the_model(dut):
    master = await setup(dut)
    rtl = await AsyncControllerDriver.open(AxiLiteMasterBus(master))
    model = CSRModel(load())
    golden = ControllerDriver(ModelBus(model))
    regmap = load()
    for name, args, kwargs in CONFIG:
        assert await getattr(rtl, name)(*args, **kwargs) == getattr(golden, name)(*args, **kwargs)
    for reg in regmap.registers:   # every bit software owns reads as the model says
        got = await rtl.read(reg.ident)
        for f in reg.fields:
            if f.kind in ("config", "storage", "const", "pulse"):
                assert (got & f.mask) == (model.peek(reg.ident) & f.mask), f"{reg.ident}.{f.name}"
    assert await rtl.pending_interrupts() == set()
    assert await rtl.gts_status() == {"state": "idle", "switching": 0, "draft_allowed": 1,
                                      "rank_enable": 0}
    # A draft under mode "never" is a stop decision: the edc_stop interrupt.
    dut.draft_in__payload.value = DraftDescriptor(batch_id=1, length=4, kv_base=0,
                                                  mean_entropy=100).pack()
    await RisingEdge(dut.clk)
    dut.draft_in__valid.value = 1
    while True:   # the push happens at the edge after a cycle with ready high
        await ReadOnly()
        accepted = int(dut.draft_in__ready.value)
        await RisingEdge(dut.clk)
        if accepted:
            break
    dut.draft_in__valid.value = 0
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert int(dut.irq.value) == 1
    assert await rtl.pending_interrupts() == {"edc_stop"}
    await rtl.acknowledge("edc_stop")
    assert await rtl.pending_interrupts() == set() and int(dut.irq.value) == 0
    status = await rtl.queue_status("draft_q")
    assert status["fill"] == 1 and status["pushes"] == 1, status
    counters = await rtl.counters()
    edc = EDC()   # the mode override made it a stop; EDC's own counters follow its prediction
    edc.draft_fx(100)
    assert counters["EDC_DECISIONS"] == edc.decisions == 1
    assert counters["EDC_SUPPRESSED"] == edc.suppressed
