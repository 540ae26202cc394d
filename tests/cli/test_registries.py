"""The CLI lists and accepts the names of the registries, not lists of its own.

Pairs are the ``[pairs]`` table of ``sim/system/configs/models.toml`` (read here with tomllib),
policies the keys of :data:`ahasd.sim.decoding.policies.POLICIES`, systems
:data:`ahasd.sim.system.systems.SYSTEMS`: ``ahasd simulate --help`` must name exactly these, in
their order, and the commands must accept each of them and refuse a name outside them.
"""

import re
import tomllib
from pathlib import Path

import pytest

from ahasd.cli import main
from ahasd.sim.decoding.policies import POLICIES, policy_names
from ahasd.sim.system.config import pair_names
from ahasd.sim.system.systems import SYSTEMS, system_names

ROOT = Path(__file__).resolve().parents[2]
PAIRS = tuple(tomllib.loads((ROOT / "sim/system/configs/models.toml").read_text())["pairs"])


def help_text(capsys, *argv):
    assert main([*argv, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())       # argparse wraps lines


def listed(text, label):
    """The comma-separated names after ``label:`` in a help text, up to the next option."""
    match = re.search(rf"{re.escape(label)}: (.*?) --", text)
    assert match, f"no {label!r} in the help"
    return tuple(match.group(1).split(", "))


def test_accessors_are_the_registries():
    assert pair_names() == PAIRS and len(PAIRS) >= 5
    assert policy_names() == tuple(POLICIES) and len(POLICIES) >= 5
    assert system_names() == tuple(SYSTEMS) and len(SYSTEMS) >= 5


def test_simulate_help_lists_exactly_the_registries(capsys):
    text = help_text(capsys, "simulate")
    assert listed(text, "model pair") == PAIRS
    assert listed(text, "drafting policy") == tuple(POLICIES)
    assert listed(text, "execution model") == tuple(SYSTEMS)


def test_decode_policy_choices_are_the_registry(capsys):
    text = help_text(capsys, "decode")
    assert f"--policy {{{','.join(POLICIES)}}}" in text


@pytest.mark.parametrize("verb", [["simulate"], ["sweep", "--axis", "npu.int8_tops=8",
                                                 "--out", "unused"]])
@pytest.mark.parametrize("option, names", [("pair", PAIRS), ("policy", tuple(POLICIES)),
                                           ("system", tuple(SYSTEMS))])
def test_a_name_outside_the_registry_is_refused_naming_them_all(capsys, verb, option, names):
    assert main([*verb, f"--{option}", "nope"]) == 2
    err = capsys.readouterr().err
    assert err == f"ahasd: error: --{option} must be one of {', '.join(names)}, not 'nope'\n"


def test_every_registered_pair_runs(capsys):
    for pair in PAIRS:
        assert main(["simulate", "--pair", pair, "--tokens", "4", "--offload", "--json"]) == 0, pair
        capsys.readouterr()
