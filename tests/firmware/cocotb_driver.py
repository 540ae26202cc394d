"""cocotb: the Python driver (ahasd.firmware.driver, the same operations as over the register
model) runs over cocotbext-axi's AxiLiteMaster on the Verilated controller. Configuration
results are compared with the golden register model driven by the synchronous driver; an EDC
stop interrupt is raised by a real draft push, seen and acknowledged through the driver.
The clocks, bus and stream drivers are the controller's testbench
(:class:`ahasd.tb.controller_bench.ControllerTB`), whose ``driver`` is the
``AsyncControllerDriver`` over ``AxiLiteMasterBus``. Run by tests/firmware/test_driver_cocotb.py."""

import cocotb
from cocotb.triggers import RisingEdge

from ahasd.firmware.driver import ControllerDriver, ModelBus
from ahasd.hw.regmap import load
from ahasd.sim.blocks.csr import CSRModel
from ahasd.sim.blocks.edc import EDC
from ahasd.tb.controller_bench import ControllerTB

CONFIG = [
    ("configure_tvc", (), {"freq_ratio": 0x3000, "pvct": 0x5000, "max_len": 3}),
    ("set_edc_mode", ("never",), {}), ("set_queue_threshold", ("draft_q", 5), {}),
    ("set_fields", ("GTS_DRAFT_MASK",), {"mask": 0x00FF}), ("write", ("SCRATCH", 0xCAFE), {}),
    ("enable_interrupts", ("edc_stop", "draft_q"), {}),
]


@cocotb.test()
async def driver_over_axil_matches_the_model(dut):
    tb = ControllerTB(dut)
    tb.p_ready = tb.p_done = 0.0   # the NPU pops no draft and no task ends
    await tb.reset()
    rtl = tb.driver   # AsyncControllerDriver over AxiLiteMasterBus on the AxiLiteMaster
    await rtl.check()
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
    assert await tb.draft(100) == 0
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
