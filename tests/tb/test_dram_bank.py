"""The LPDDR5 rank model catches every kind of timing violation, at the boundary of every rule,
returns data after tRL to the requester that read, and arbitrates two requesters round-robin."""

from fractions import Fraction

import pytest

from ahasd.hw.dram_port import Cmd
from ahasd.spec.dram import DRAMConfig, burst_address, weight_layout
from ahasd.tb.amaranth_sim import simulate
from ahasd.tb.dram_bank import DRAMBankModel, DRAMError

# Two banks (one refresh pair), as the old 4-bank tests had them, for the data path.
CFG = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=3, t_rrd=1, t_faw=1, t_refi=100, t_rfc=12,
                 t_rfcpb=6, t_pbr2pbr=5, t_pbr2act=1, t_rl=4, row_bytes=64, burst_bytes=8,
                 n_banks=2, rows=4)
# The platform's 16 banks (8 refresh pairs: bank b with b + 8), short timing.
C16 = DRAMConfig(t_rcd=5, t_rp=4, t_ras=9, t_ccd=3, t_rrd=2, t_faw=10, t_refi=400, t_rfc=12,
                 t_rfcpb=7, t_pbr2pbr=5, t_pbr2act=3, t_rl=4, row_bytes=64, burst_bytes=8,
                 n_banks=16, rows=4)
HOST = "host"


def drive(program, config=C16, init=()):
    """``program``: list of (cycle, cmd, bank, row, col[, "host"]) (PIM port by default);
    returns (error_code, {cycle: (requester, data)}, model counters)."""
    dut = DRAMBankModel(config=config, init=init)
    by_cycle = {}
    for p in program:
        by_cycle.setdefault(p[0], []).append(p[1:])
    last = max(by_cycle) + config.t_rl + 2
    seen = {"data": {}}

    async def tb(ctx):
        for cycle in range(last + 1):
            for prefix in ("", "host_"):
                ctx.set(getattr(dut, prefix + "cmd"), Cmd.NOP)
            for cmd, bank, row, col, *who in by_cycle.get(cycle, ()):
                prefix = "host_" if who == [HOST] else ""
                ctx.set(getattr(dut, prefix + "cmd"), cmd)
                ctx.set(getattr(dut, prefix + "cmd_bank"), bank)
                ctx.set(getattr(dut, prefix + "cmd_row"), row)
                ctx.set(getattr(dut, prefix + "cmd_col"), col)
            for name, port in (("pim", dut.rd), (HOST, dut.host_rd)):
                if ctx.get(port.valid):
                    seen["data"][cycle] = (name, ctx.get(port.payload))
            await ctx.tick()
        seen["code"] = ctx.get(dut.error_code)
        seen["error"] = ctx.get(dut.error)
        seen["counts"] = {n: ctx.get(getattr(dut, n)) for n in ("reads", "host_reads", "refpb",
                                                                "refab")}

    simulate(dut, tb)
    assert seen["error"] == (seen["code"] != DRAMError.NONE)
    return seen["code"], seen["data"], seen["counts"]


# A legal sequence: ACT b0, ACT b1, reads tCCD apart, PRE after tRAS, REF after tRP.
LEGAL = [(0, Cmd.ACT, 0, 2, 0), (1, Cmd.ACT, 1, 3, 0), (5, Cmd.RD, 0, 2, 1), (8, Cmd.RD, 1, 3, 7),
         (11, Cmd.RD, 0, 2, 2), (12, Cmd.PRE, 0, 0, 0), (13, Cmd.PRE, 1, 0, 0),
         (17, Cmd.REF, 0, 0, 0), (29, Cmd.ACT, 0, 1, 0)]


def test_legal_sequence_and_read_latency():
    init = list(range(1000, 1000 + 64))
    code, data, counts = drive(LEGAL, config=CFG, init=init)
    assert code == DRAMError.NONE
    # Linear address ((row * n_banks) + bank) * bursts_per_row + col.
    assert data == {5 + 4: ("pim", init[(2 * 2 + 0) * 8 + 1]),
                    8 + 4: ("pim", init[(3 * 2 + 1) * 8 + 7]),
                    11 + 4: ("pim", init[(2 * 2 + 0) * 8 + 2])}
    assert counts == {"reads": 3, "host_reads": 0, "refpb": 0, "refab": 1}


def test_host_reads_return_on_the_host_port():
    init = list(range(5000, 5000 + 64))
    program = [(0, Cmd.ACT, 0, 2, 0), (2, Cmd.ACT, 1, 3, 0, HOST), (5, Cmd.RD, 0, 2, 1),
               (8, Cmd.RD, 1, 3, 6, HOST)]
    code, data, counts = drive(program, config=CFG, init=init)
    assert code == DRAMError.NONE
    assert data == {9: ("pim", init[(2 * 2 + 0) * 8 + 1]), 12: (HOST, init[(3 * 2 + 1) * 8 + 6])}
    assert counts["reads"] == 1 and counts["host_reads"] == 1


def test_bad_row_is_caught():
    # rows=3 leaves row address 3 representable on the 2-bit bus, but out of range.
    code, _, _ = drive([(0, Cmd.ACT, 0, 3, 0)], config=DRAMConfig(**{**CFG.__dict__, "rows": 3}))
    assert code == DRAMError.BAD_ADDRESS


def test_bad_bank_is_caught():
    # 12 banks on a 4-bit bus: bank 12 is representable but out of range (also for a REFpb).
    config = DRAMConfig(**{**C16.__dict__, "n_banks": 12})
    for cmd in (Cmd.ACT, Cmd.REFPB):
        code, _, _ = drive([(0, cmd, 12, 0, 0)], config=config)
        assert code == DRAMError.BAD_ADDRESS


# ---- every timing rule at its boundary: (program before, command, legal cycle, error) ---------
# The command at `legal cycle - 1` is flagged with `error`; at `legal cycle` nothing is flagged.
D = C16.refresh_deadline
ROUND = [(5 * j, Cmd.REFPB, j, 0, 0) for j in range(8)]        # every pair once, tpbR2pbR apart
BOUNDARY = {
    "tRCD": ([(0, Cmd.ACT, 0, 1, 0)], (Cmd.RD, 0, 1, 0), 5, DRAMError.RD_TRCD),
    "tCCD": ([(0, Cmd.ACT, 0, 1, 0), (2, Cmd.ACT, 1, 1, 0), (5, Cmd.RD, 0, 1, 0)],
             (Cmd.RD, 1, 1, 0), 8, DRAMError.RD_TCCD),
    "tCCD host after PIM": ([(0, Cmd.ACT, 0, 1, 0), (2, Cmd.ACT, 1, 1, 0, HOST),
                             (5, Cmd.RD, 0, 1, 0)], (Cmd.RD, 1, 1, 0, HOST), 8, DRAMError.RD_TCCD),
    "tRAS": ([(0, Cmd.ACT, 1, 1, 0)], (Cmd.PRE, 1, 0, 0), 9, DRAMError.PRE_TRAS),
    "tRP": ([(0, Cmd.ACT, 0, 1, 0), (9, Cmd.PRE, 0, 0, 0)], (Cmd.ACT, 0, 2, 0), 13,
            DRAMError.ACT_TRP),
    "tRRD": ([(0, Cmd.ACT, 0, 1, 0)], (Cmd.ACT, 1, 1, 0), 2, DRAMError.ACT_TRRD),
    "tRRD host after PIM": ([(0, Cmd.ACT, 0, 1, 0)], (Cmd.ACT, 5, 1, 0, HOST), 2,
                            DRAMError.ACT_TRRD),
    "tFAW": ([(2 * i, Cmd.ACT, i, 1, 0) for i in range(4)], (Cmd.ACT, 4, 1, 0), 10,
             DRAMError.ACT_TFAW),
    "REF tRP": ([(0, Cmd.ACT, 0, 1, 0), (9, Cmd.PRE, 0, 0, 0)], (Cmd.REF, 0, 0, 0), 13,
                DRAMError.REF_TRP),
    "tRFC": ([(0, Cmd.REF, 0, 0, 0)], (Cmd.ACT, 6, 1, 0), 12, DRAMError.TRFC),
    "REFpb tRP": ([(0, Cmd.ACT, 3, 1, 0), (9, Cmd.PRE, 3, 0, 0)], (Cmd.REFPB, 3, 0, 0), 13,
                  DRAMError.REF_TRP),
    "REFpb tRP of the mate": ([(0, Cmd.ACT, 11, 1, 0), (9, Cmd.PRE, 11, 0, 0)],
                              (Cmd.REFPB, 3, 0, 0), 13, DRAMError.REF_TRP),
    "tRFCpb ACT": ([(0, Cmd.REFPB, 2, 0, 0)], (Cmd.ACT, 2, 1, 0), 7, DRAMError.TRFC),
    "tRFCpb ACT mate": ([(0, Cmd.REFPB, 2, 0, 0)], (Cmd.ACT, 10, 1, 0), 7, DRAMError.TRFC),
    "tRFCpb PRE": ([(0, Cmd.REFPB, 2, 0, 0)], (Cmd.PRE, 10, 0, 0), 7, DRAMError.TRFC),
    "tRFCpb REFpb": ([(0, Cmd.REFPB, 2, 0, 0)], (Cmd.REFPB, 10, 0, 0), 7, DRAMError.TRFC),
    "tRFCpb REF": ([(0, Cmd.REFPB, 2, 0, 0)], (Cmd.REF, 0, 0, 0), 7, DRAMError.TRFC),
    "tpbR2pbR": ([(0, Cmd.REFPB, 0, 0, 0)], (Cmd.REFPB, 1, 0, 0), 5, DRAMError.REF_PBR2PBR),
    "tpbR2pbR host after PIM": ([(0, Cmd.REFPB, 0, 0, 0)], (Cmd.REFPB, 5, 0, 0, HOST), 5,
                                DRAMError.REF_PBR2PBR),
    "tpbR2ACT": ([(0, Cmd.REFPB, 0, 0, 0)], (Cmd.ACT, 1, 1, 0), 3, DRAMError.ACT_PBR2ACT),
    "ACT to REFpb (tRRD)": ([(0, Cmd.ACT, 0, 1, 0)], (Cmd.REFPB, 1, 0, 0), 2,
                            DRAMError.REF_TRRD),
}


def _late_round(last):
    """A round of 8 REFpb whose last one is at cycle ``last``, after a first round from 0."""
    return ROUND + [(last - 5 * (7 - j), Cmd.REFPB, j, 0, 0) for j in range(8)]


@pytest.mark.parametrize("name", BOUNDARY)
def test_rule_boundary(name):
    before, command, legal, error = BOUNDARY[name]
    early, _, _ = drive(before + [(legal - 1, *command)])
    assert early == error, f"{name}: one cycle early"
    ok, _, _ = drive(before + [(legal, *command)])
    assert ok == DRAMError.NONE, f"{name}: at the boundary"


def test_per_bank_deadline_boundary():
    # Pair 7 refreshed at cycle 35 must be refreshed again by 35 + D; every other pair earlier.
    assert drive(_late_round(35 + D))[0] == DRAMError.NONE
    assert drive(_late_round(35 + D + 1))[0] == DRAMError.REF_LATE
    # After reset: the first refresh of every pair is due by cycle D.
    first = [(D - 5 * (7 - j), Cmd.REFPB, j, 0, 0) for j in range(8)]
    assert drive(first)[0] == DRAMError.NONE
    assert drive([(c + 1, *rest) for c, *rest in first])[0] == DRAMError.REF_LATE
    # A REF refreshes every pair: the first REF is due by cycle D, then D after the last one.
    assert drive([(D, Cmd.REF, 0, 0, 0)])[0] == DRAMError.NONE
    assert drive([(D + 1, Cmd.REF, 0, 0, 0)])[0] == DRAMError.REF_LATE
    assert drive([(100, Cmd.REF, 0, 0, 0), (100 + D, Cmd.REF, 0, 0, 0)])[0] == DRAMError.NONE
    assert drive([(100, Cmd.REF, 0, 0, 0), (101 + D, Cmd.REF, 0, 0, 0)])[0] == DRAMError.REF_LATE


def test_refpb_leaves_other_pairs_available():
    # During pair 2's tRFCpb (banks 2 and 10), bank 3 opens and reads.
    program = [(0, Cmd.REFPB, 2, 0, 0), (3, Cmd.ACT, 3, 1, 0), (8, Cmd.RD, 3, 1, 0)]
    code, data, counts = drive(program)
    assert code == DRAMError.NONE and list(data) == [12] and counts["refpb"] == 1


@pytest.mark.parametrize("program, expected", [
    ([(0, Cmd.ACT, 0, 1, 0), (1, Cmd.ACT, 0, 2, 0)], DRAMError.ACT_OPEN),
    ([(0, Cmd.RD, 0, 0, 0)], DRAMError.RD_CLOSED),
    ([(0, Cmd.ACT, 0, 1, 0), (20, Cmd.REF, 0, 0, 0)], DRAMError.REF_OPEN),
    ([(0, Cmd.ACT, 11, 1, 0), (20, Cmd.REFPB, 3, 0, 0)], DRAMError.REF_OPEN),
    ([(0, Cmd.ACT, 3, 1, 0), (20, Cmd.REFPB, 3, 0, 0)], DRAMError.REF_OPEN),
    ([(0, Cmd.REFPB, 2, 0, 0), (6, Cmd.RD, 2, 0, 0)], DRAMError.TRFC),
    ([(0, Cmd.REF, 0, 0, 0), (11, Cmd.PRE, 5, 0, 0, HOST)], DRAMError.TRFC),
])
def test_state_violations(program, expected):
    assert drive(program)[0] == expected


def test_arbiter_round_robin():
    """Both requesters present a command every cycle: grants alternate, the PIM first, and each
    sees the other's command as its peer; a lone request is granted at once."""
    dut = DRAMBankModel(config=C16)
    log = []

    async def tb(ctx):
        for cycle in range(6):
            both = cycle < 4
            ctx.set(dut.cmd, Cmd.PRE)
            ctx.set(dut.cmd_bank, 1)
            ctx.set(dut.host_cmd, Cmd.PRE if both else Cmd.NOP)
            ctx.set(dut.host_cmd_bank, 9)
            log.append((ctx.get(dut.cmd_grant), ctx.get(dut.host_cmd_grant),
                        ctx.get(dut.cmd_peer), ctx.get(dut.host_cmd_peer), ctx.get(dut.bus_bank)))
            await ctx.tick()
        assert not ctx.get(dut.error)

    simulate(dut, tb)
    P, N = Cmd.PRE, Cmd.NOP
    assert log == [(1, 0, N, P, 1), (0, 1, P, N, 9), (1, 0, N, P, 1), (0, 1, P, N, 9),
                   (1, 0, N, P, 1), (1, 0, N, P, 1)]


def test_arbiter_read_first():
    """A RD against another command wins whoever's turn it is; the loser goes next."""
    dut = DRAMBankModel(config=C16)
    log = []
    # (pim, host) commands per cycle; the host's RD wins cycle 0 although the PIM has the turn.
    script = [((Cmd.PRE, 1), (Cmd.RD, 9)), ((Cmd.PRE, 1), (Cmd.NOP, 9)),
              ((Cmd.RD, 1), (Cmd.PRE, 9)), ((Cmd.NOP, 1), (Cmd.PRE, 9))]

    async def tb(ctx):
        for (pc, pb), (hc, hb) in script:
            ctx.set(dut.cmd, pc)
            ctx.set(dut.cmd_bank, pb)
            ctx.set(dut.host_cmd, hc)
            ctx.set(dut.host_cmd_bank, hb)
            log.append((ctx.get(dut.cmd_grant), ctx.get(dut.host_cmd_grant)))
            await ctx.tick()

    simulate(dut, tb)
    assert log == [(0, 1), (1, 0), (1, 0), (0, 1)]


def test_config_validation_and_bounds():
    with pytest.raises(ValueError, match="t_rcd must be a positive integer, not 0"):
        DRAMConfig(t_rcd=0)
    with pytest.raises(ValueError, match="t_faw must be a positive integer, not 0"):
        DRAMConfig(t_faw=0)
    with pytest.raises(ValueError, match="burst_bytes must be a power of two, not 24"):
        DRAMConfig(burst_bytes=24)
    with pytest.raises(ValueError, match=r"burst_bytes must be an integer in 1..2048 \(at most row_bytes\), not 4096"):
        DRAMConfig(burst_bytes=4096)
    with pytest.raises(ValueError, match=r"t_refi must be an integer >= 225 \(more than t_rfc\), not 100"):
        DRAMConfig(t_refi=100, t_rfc=224)
    with pytest.raises(ValueError, match=r"t_rfcpb must be an integer in 1..299 \(less than t_refi\), not 300"):
        DRAMConfig(t_refi=300, t_rfc=100, t_rfcpb=300)
    with pytest.raises(ValueError, match="refresh must be one of per_bank, all_bank, not 'ab'"):
        DRAMConfig(refresh="ab")
    with pytest.raises(ValueError, match="config must be a DRAMConfig"):
        DRAMBankModel(config=None)
    with pytest.raises(ValueError, match="init has 2049 bursts; the model stores 2048"):
        DRAMBankModel(config=DRAMConfig(rows=2), init=[0] * 2049)
    d = DRAMConfig()
    assert d.n_banks == 16 and d.refresh_pairs == 8
    assert d.refresh_group(3) == (3, 11) and d.refresh_group(11) == (3, 11)
    assert DRAMConfig(n_banks=3).refresh_group(2) == (2,)
    assert d.read_bound() == Fraction(3120 - 224, 3120 * 4)
    assert d.mac_bound() == 32 * d.read_bound()
    assert d.raw_read_bound() == Fraction(1, 4) and d.raw_mac_bound() == 8
    assert DRAMConfig(t_ccd=6).read_bound() < d.read_bound()


def test_weight_layout_and_addresses():
    import numpy as np
    w = np.array([[1, -2, 3], [-128, 5, 127], [7, 8, 9]])
    words = weight_layout(w, 2)
    # Tile 0 = rows 0-1, one burst per column; tile 1 = row 2 + a zero lane.
    assert [wd.to_bytes(2, "little") for wd in words] == [
        bytes([1, 0x80]), bytes([0xFE, 5]), bytes([3, 127]), bytes([7, 0]), bytes([8, 0]),
        bytes([9, 0])]
    assert burst_address(CFG, 0) == (0, 0, 0)
    assert burst_address(CFG, 8) == (1, 0, 0)
    assert burst_address(CFG, 17) == (0, 1, 1)
    assert burst_address(C16, 8 * 17 + 3) == (1, 1, 3)
    with pytest.raises(ValueError, match="int8"):
        weight_layout(np.array([[200]]), 2)
