"""Realistic acceptance: every model pair's default golden pair (models.toml ``[acceptance]``) accepts
0.65-0.80 per drafted token under AdaEDL at the default settings, as stated there (re-measured
within ``TOLERANCE``); the table is the benchmark's output; the default reaches the runner, the
grid and the cells; ``low`` and ``high`` are the sensitivity points; block drafts train on what
their docstring says and are cached by what determines them."""

from importlib import resources

import pytest

from ahasd.bench.acceptance import BAND, TOLERANCE, measure, toml_text
from ahasd.sim.decoding import pairs
from ahasd.sim.system import config, report, runner
from ahasd.sim.system.config import ConfigError, acceptance_defaults, pair_names
from ahasd.sim.system.runner import simulate

FILES = 40


def test_the_table_covers_every_pair_with_a_registered_pair_in_the_band():
    table = acceptance_defaults()
    assert tuple(table) == pair_names()
    for pair, (golden, stated) in table.items():
        assert golden in pairs.PAIRS, pair
        assert BAND[0] <= stated <= BAND[1], pair


def test_the_table_is_the_benchmarks_output():
    text = resources.files("ahasd.sim.system").joinpath("configs", "models.toml").read_text()
    assert text[text.index("\n[acceptance]") + 1:] == toml_text(acceptance_defaults())


@pytest.mark.slow
@pytest.mark.parametrize("pair", pair_names())
def test_the_stated_acceptance_is_measured(pair):
    golden, stated = acceptance_defaults()[pair]
    measured = measure(pair, "adaedl", golden)["acceptance_rate"]
    assert abs(measured - stated) <= TOLERANCE, (
        f"{pair}: measured {measured:.3f}, models.toml says {stated:.3f}: run `ahasd bench "
        f"acceptance` and copy build/acceptance.toml over the table")
    assert BAND[0] <= measured <= BAND[1]


def test_the_default_comes_from_the_table(monkeypatch):
    r = simulate("gpu", "opt", "adaedl", tokens=8, max_files=FILES)
    assert r.acceptance_pair == acceptance_defaults()["opt"][0] == "ngram5-5b"
    monkeypatch.setattr(runner, "acceptance_defaults", lambda: {"opt": ("ngram4-5", 0.5)})
    assert simulate("gpu", "opt", "adaedl", tokens=8, max_files=FILES).acceptance_pair == "ngram4-5"
    assert runner.acceptance_pair_of({"pair": "opt"}) == "ngram4-5"
    assert runner.acceptance_pair_of({"pair": "opt", "acceptance_pair": "high"}) == "ngram5-5x"
    with pytest.raises(ConfigError, match="model pair 'llama2' has no default golden pair"):
        simulate("gpu", "llama2", "adaedl", tokens=8, max_files=FILES)


def test_the_grid_decodes_with_the_paper_pairs_default():
    for pair in report.PAPER_PAIRS:
        assert acceptance_defaults()[pair][0] == report.ACCEPTANCE_PAIRS[0]
    assert pairs.ALIASES["low"] in report.ACCEPTANCE_PAIRS[1:]
    cells = report.grid_cells(pairs=("opt",), policies=("adaedl",))
    assert {c["acceptance_pair"] for c in cells} == set(report.ACCEPTANCE_PAIRS)


def test_low_is_the_earlier_default_under_its_own_name():
    a = simulate("ahasd", "opt", "adaedl", tokens=24, max_files=FILES, acceptance_pair="low")
    b = simulate("ahasd", "opt", "adaedl", tokens=24, max_files=FILES, acceptance_pair="ngram3-5")
    assert a.acceptance_pair == b.acceptance_pair == "ngram3-5"
    assert a.output_tokens == b.output_tokens
    assert pairs.load_named_pair("high", max_files=FILES) is pairs.load_named_pair(
        "ngram5-5x", max_files=FILES)


def test_an_unknown_pair_is_a_one_line_error_naming_them_all():
    with pytest.raises(ValueError) as e:
        pairs.load_named_pair("x")
    assert str(e.value) == ("acceptance pair must be one of ngram3-5, ngram4-5, ngram5-5h, "
                            "ngram5-5b, ngram5-5x, low, high, not 'x'")


@pytest.mark.parametrize("entry, message", [
    (None, r"acceptance.opt must be \{ golden = NAME, adaedl = FRACTION \}, not None"),
    ({"golden": "", "adaedl": 0.7}, "acceptance.opt.golden must be a pair name, not ''"),
    ({"golden": "g", "adaedl": 1.5}, r"acceptance.opt.adaedl must be in \[0, 1\], not 1.5"),
    ({"golden": "g", "adaedl": True}, r"acceptance.opt.adaedl must be in \[0, 1\], not True"),
])
def test_a_bad_table_entry_is_named(monkeypatch, entry, message):
    real = config._read_toml("models.toml")
    table = {**real["acceptance"], "opt": entry}
    monkeypatch.setattr(config, "_read_toml", lambda name: {**real, "acceptance": table})
    with pytest.raises(ConfigError, match=message):
        acceptance_defaults.__wrapped__()


def test_an_entry_for_no_pair_is_named(monkeypatch):
    real = config._read_toml("models.toml")
    table = {**real["acceptance"], "gpt9": {"golden": "g", "adaedl": 0.7}}
    monkeypatch.setattr(config, "_read_toml", lambda name: {**real, "acceptance": table})
    with pytest.raises(ConfigError, match="acceptance.gpt9 is not a pair of"):
        acceptance_defaults.__wrapped__()


def test_block_training_sequences_by_hand():
    rows = [f"r{i}\n" for i in range(40)]
    text = "".join(rows)
    # blocks of 16 lines: 0-15 (held out), 16-31, 32-39 -> one run of the two kept blocks
    assert pairs.training_sequences([text], 4, 16) == ["".join(rows[16:40])]
    # every other block held out: 0-15 out, 16-31 in, 32-39 out
    assert pairs.training_sequences([text], 2, 16) == ["".join(rows[16:32])]
    # blocks of 4 lines, every 4th out: runs 4-15, 20-31, 36-39
    assert pairs.training_sequences([text], 4, 4) == [
        "".join(rows[4:16]), "".join(rows[20:32]), "".join(rows[36:40])]
    assert pairs.training_sequences(["", "a\n"], 4, 16) == []


def test_the_draft_key_covers_what_determines_the_draft():
    from ahasd.sim.decoding.tokenizer import stdlib_files
    for fn in (pairs.draft_key, pairs.training_sequences, pairs._subset_pair,
               pairs._subset_files):
        assert fn.__module__ in pairs.TRAINING_MODULES
    root, files = stdlib_files(FILES)
    key = pairs.draft_key(root, files, 4096, 5, 4, 16)
    assert key == pairs.draft_key(root, files, 4096, 5, 4, 16)
    others = [pairs.draft_key(root, files, 4096, 4, 4, 16), pairs.draft_key(root, files, 4096, 5, 3, 16),
              pairs.draft_key(root, files, 4096, 5, 4, 8), pairs.draft_key(root, files, 4000, 5, 4, 16),
              pairs.draft_key(root, files[1:], 4096, 5, 4, 16),
              pairs.draft_key(root, files, 4096, 5, 4, 0)]
    assert len({key, *others}) == 1 + len(others)
    # a file subset is named by the files it reads
    assert pairs.draft_key(root, files, 4096, 5, 8, 0) != pairs.draft_key(root, files, 4096, 5, 2, 0)


def test_the_block_draft_is_trained_apart_from_the_target():
    p = pairs.load_named_pair("ngram5-5b", max_files=FILES)
    base = pairs.load_named_pair("ngram3-5", max_files=FILES)
    ctx = p.tokenizer.encode("import os\nimport sys\n\n\ndef main(argv=None):\n    ")
    assert (p.target.next_dist(ctx) == base.target.next_dist(ctx)).all() and p.draft.order == 5
    # fewer 5-grams than the target's (a quarter of every file held out), so not the target
    assert 0 < len(p.draft._keys[-1]) < len(p.target._keys[-1])
    assert abs(p.draft.next_dist(ctx) - p.target.next_dist(ctx)).sum() > 1e-6


def test_the_sweep_axis_takes_the_aliases():
    from ahasd.sim.system.sweep import parse_axis
    assert parse_axis("acceptance_pair=low,ngram5-5b") == ("acceptance_pair", ["low", "ngram5-5b"])
    with pytest.raises(ConfigError, match=r"acceptance_pair must be one of ngram3-5, .*, low, "
                                          r"high, not 'mid'"):
        parse_axis("acceptance_pair=mid")
