"""ahasd.sim.system.sweep.sweep_cells: each axis lands where its name says (the golden pair, an
EDC parameter, or a config override ``section.key``), one cell per combination, in order."""

from ahasd.sim.system.sweep import sweep_cells


def test_axes_land_in_their_places():
    axes = [("acceptance_pair", ["ngram3-5", "ngram4-5"]), ("edc.llr_bits", [2, 3]),
            ("npu.int8_tops", [8.0])]
    cells = sweep_cells(axes, tokens=64, seed=3, max_files=40)
    assert len(cells) == 4
    first, last = cells[0], cells[-1]
    assert first["acceptance_pair"] == "ngram3-5" and last["acceptance_pair"] == "ngram4-5"
    assert first["edc_params"] == {"llr_bits": 2} and last["edc_params"] == {"llr_bits": 3}
    assert first["overrides"] == (("npu", "int8_tops", 8.0),)
    assert first["point"] == {"acceptance_pair": "ngram3-5", "edc.llr_bits": 2,
                              "npu.int8_tops": 8.0}
    assert (first["tokens"], first["seed"], first["max_files"], first["system"]) == (
        64, 3, 40, "ahasd")
    assert [c["point"]["edc.llr_bits"] for c in cells] == [2, 3, 2, 3]
    # Without a pair axis the cell keeps the runner's default pair (no key).
    assert "acceptance_pair" not in sweep_cells([("npu.int8_tops", [8.0])])[0]
