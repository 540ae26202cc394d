"""ahasd.cosim.controller.VerilatedController.time_ps: the logged cycle numbers of each domain map
to the harness's own simulated time (the scoreboards order the two domains' events by it)."""

from ahasd.cosim.controller import VerilatedController


def test_cycle_numbers_map_to_simulated_time():
    with VerilatedController(pim_period_ps=1000, npu_period_ps=1700) as ctl:
        for wait in (0, 3, 10):
            ctl.harness.wait("sync", wait)
            now = ctl.harness.time()
            ctl.harness.run()
            ps, (sync, npu) = now.value
            # `sync` rising edges have happened, numbered 0 .. sync - 1: the last one at or
            # before now, the next one after it.
            for domain, n in (("sync", sync), ("npu", npu)):
                assert ctl.time_ps(domain, n - 1) <= ps < ctl.time_ps(domain, n), (domain, n, ps)
            assert ctl.time_ps("npu", 4) - ctl.time_ps("npu", 3) == 1700
