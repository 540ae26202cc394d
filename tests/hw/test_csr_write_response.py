"""The CSR block's write responses in the controller (Amaranth simulator, no cocotb build): a
write to a mapped register answers OKAY and takes effect, one to an unmapped address answers
SLVERR and changes nothing."""

from ahasd.hw.controller import Controller
from ahasd.sim.blocks.csr import OKAY, SLVERR
from ahasd.tb.controller_sim import ControllerSim


def test_mapped_writes_are_okay_unmapped_ones_slverr():
    sim = ControllerSim(Controller(draft_depth=8, feedback_depth=4, preverify_depth=4))
    threshold = sim.regmap["DRAFT_Q_THRESHOLD"].address
    mapped = {r.address for r in sim.regmap.registers}
    unmapped = next(a for a in range(0, 0x400, 4) if a not in mapped)
    got = {}

    async def pim(ctx):
        got["mapped"] = await sim.write(ctx, threshold, 5)
        got["value"] = (await sim.read(ctx, threshold))[0]
        got["unmapped"] = await sim.write(ctx, unmapped, 0xFFFF_FFFF)
        got["after"] = (await sim.read(ctx, threshold))[0]

    sim.run(pim)
    assert got == {"mapped": OKAY, "value": 5, "unmapped": SLVERR, "after": 5}
