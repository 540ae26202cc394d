"""``ahasd simulate --rtl``: golden and --rtl JSON identical except ``config.deciders``, for full
AHASD and the EDC ablation step (short here, 1024 tokens under ``make regress``); --rtl without
EDC/TVC, or with the anchor variant: one-line error, exit 2 (moved from
tests/cosim/test_rtl_deciders.py)."""

import json

import pytest

from ahasd.cli import main


def simulate_json(capsys, *argv):
    assert main(["simulate", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def compare(capsys, *argv):
    """Golden and --rtl runs of ``argv``: identical JSON but for config.deciders; return it."""
    golden = simulate_json(capsys, *argv)
    rtl = simulate_json(capsys, *argv, "--rtl")
    assert (golden["config"].pop("deciders"), rtl["config"].pop("deciders")) == ("golden", "rtl")
    assert rtl == golden
    return rtl


def test_simulate_rtl_matches_golden_short(capsys):
    # the low-acceptance pair: its rejections make the TVC pre-verify often (19 times here with
    # the ranks not shared; sharing them slows drafting beside verification and TVC finds room
    # for 3)
    full = compare(capsys, "--policy", "svip", "--tokens", "160", "--acceptance-pair", "low",
                   "--set", "memory.contention=false")
    assert full["preverifies"] >= 10 and full["edc_suppressed"] > 0   # TVC and EDC both decided
    shared = compare(capsys, "--policy", "svip", "--tokens", "160", "--acceptance-pair", "low")
    assert shared["preverifies"] > 0 and shared["devices"]["pim"]["stall_memory_s"] > 0
    edc = compare(capsys, "--policy", "svip", "--tokens", "160", "--ablation", "edc", "--acceptance-pair", "low")
    assert edc["edc_suppressed"] > 0 and edc["preverifies"] == 0


@pytest.mark.regress
@pytest.mark.parametrize("ablation", ["tvc", "edc"])
def test_simulate_rtl_matches_golden_1024_tokens(capsys, ablation):
    # the low-acceptance pair, as above: on the default pair the TVC finds no room to
    # pre-verify in 1024 tokens (0 pre-verifications, golden and RTL alike), which would leave
    # its decisions untested here; on this pair it pre-verifies 7 times
    r = compare(capsys, "--tokens", "1024", "--ablation", ablation, "--acceptance-pair", "low")
    assert r["tokens"] == 1024 and r["edc_suppressed"] > 0
    assert (r["preverifies"] > 0) == (ablation == "tvc")


def test_golden_and_no_deciders_named(capsys):
    assert simulate_json(capsys, "--tokens", "8")["config"]["deciders"] == "golden"
    assert simulate_json(capsys, "--tokens", "8", "--system", "gpu")["config"]["deciders"] == \
        "none"


@pytest.mark.parametrize("argv,message", [
    (["--system", "gpu"], "--rtl takes the EDC and TVC decisions from the RTL, and gpu has "
                          "neither (use --system ahasd --ablation edc or tvc)"),
    (["--system", "specpim"], "and specpim has neither"),
    (["--ablation", "async"], "and ahasd --ablation async has neither"),
    (["--ablation", "aau"], "and ahasd --ablation aau has neither"),
    (["--edc", "anchor"], "--rtl runs the EDC RTL, which implements the committed variant "
                          "only, not --edc anchor"),
])
def test_rtl_without_rtl_deciders_is_an_error(capsys, argv, message):
    assert main(["simulate", "--rtl", "--tokens", "8", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
