"""One table over the golden models' public entry points: each rejects a wrong type (a string
for a number, a bool for an integer, None) with a TypeError and a bad value (-inf, NaN, out of
range) with a ValueError, both naming the parameter (issue 9, point 5). Every check goes
through ahasd.spec.params, whose type errors are ParameterTypeError: a TypeError that is also a
ValueError, so a caller catching either sees it."""

import math

import numpy as np
import pytest

from ahasd.hw.regmap import load as load_regmap
from ahasd.sim.blocks import aau, entropy
from ahasd.sim.blocks.csr import CSRModel
from ahasd.sim.blocks.edc import EDC, EDCParams, entropy_to_fx
from ahasd.sim.blocks.gemv import gemv
from ahasd.sim.blocks.gts import GTS, TaskKind
from ahasd.sim.blocks.queues import QueueModel
from ahasd.sim.blocks.tvc import TVC
from ahasd.sim.decoding import policies
from ahasd.sim.decoding.golden import load_models
from ahasd.sim.decoding.ngram import NGramModel
from ahasd.sim.decoding.speculative import verify_draft, verify_draft_greedy
from ahasd.sim.decoding.tokenizer import Tokenizer
from ahasd.spec.descriptors import DraftDescriptor
from ahasd.spec.dram import DRAMConfig
from ahasd.spec.params import ParameterTypeError, check_choice, check_int, check_ints, check_real

T, V = ParameterTypeError, ValueError      # a wrong type; a wrong value
LANES = [0] * aau.LANES


def _csr():
    return CSRModel(load_regmap())


def _ngram():
    return NGramModel.train([[2, 3, 4, 5, 2, 3, 4]], order=2, vocab_size=8)


def _lanes(index, value):
    v = list(LANES)
    v[index] = value
    return v


P = np.full((3, 4), 0.25)
Q = np.full((2, 4), 0.25)
RNG = np.random.default_rng(0)

#: id -> (call, error, message regex)
CASES = {
    # EDC
    "edc draft str": (lambda: EDC().draft("1"), T, r"entropy_nats must be a finite number >= 0, not '1'"),
    "edc draft -inf": (lambda: EDC().draft(-math.inf), V, r"entropy_nats .* not -inf"),
    "edc draft nan": (lambda: EDC().draft(math.nan), V, r"entropy_nats .* not nan"),
    "edc anchor draft bool": (lambda: EDC(variant="anchor").draft(True), T, r"entropy_nats .* not True"),
    "edc draft_fx bool": (lambda: EDC().draft_fx(True), T, r"entropy_fx must be an integer in 0..65535"),
    "edc verify int": (lambda: EDC().verify(1), T, r"full must be a bool, not 1"),
    "edc variant": (lambda: EDC(variant="x"), V, r"variant must be one of committed, anchor, not 'x'"),
    "edc history bool": (lambda: EDCParams(history_depth=True), T, r"history_depth must be a power of two in 2..64, not True"),
    "edc h_max nan": (lambda: EDCParams(h_max_nats=math.nan), V, r"h_max_nats must be a finite number in \(0, 16\), not nan"),
    "edc h_max 16": (lambda: EDCParams(h_max_nats=16), V, r"h_max_nats .* not 16"),
    "edc counter_reset": (lambda: EDCParams(counter_reset=4), V, r"counter_reset must be an integer in 0..3, not 4"),
    "entropy_to_fx str": (lambda: entropy_to_fx("2"), T, r"entropy_nats must be a number, not '2'"),
    "entropy_to_fx nan": (lambda: entropy_to_fx(math.nan), V, r"entropy_nats must be a number, not nan"),
    # TVC
    "tvc depth 3": (lambda: TVC(depth=3), V, r"depth must be a power of two in 1..64, not 3"),
    "tvc depth float": (lambda: TVC(depth=4.0), T, r"depth must be a power of two in 1..64, not 4.0"),
    "tvc presets list": (lambda: TVC(presets=[1]), T, r"presets must be a dict of table -> ratio or None, not list"),
    "tvc decide bool": (lambda: TVC().decide(True, 1, 1), T, r"kv_len must be an integer in 0..65535, not True"),
    "tvc record -inf": (lambda: TVC().record("nvct", -math.inf, 1), T, r"cycles must be an integer"),
    "tvc table": (lambda: TVC().average("gpu"), V, r"table must be one of nvct, pdct, pvct, not 'gpu'"),
    # queues
    "queue depth 0": (lambda: QueueModel(depth=0), V, r"depth must be a positive integer or None, not 0"),
    "queue depth bool": (lambda: QueueModel(depth=True), T, r"depth must be a positive integer or None, not True"),
    "queue depth str": (lambda: QueueModel(depth="4"), T, r"depth must be a positive integer or None, not '4'"),
    # GTS
    "gts ranks bool": (lambda: GTS(ranks=True), T, r"ranks must be an integer in 2..64, not True"),
    "gts mask 0": (lambda: GTS(ranks=4, draft_mask=0), V, r"draft_mask must be an integer in 1..15 \(a mask enabling at least one of 4 ranks\), not 0"),
    "gts task kind": (lambda: GTS().step((7, 1)), V, r"task kind must be one of"),
    "gts task length": (lambda: GTS().step((TaskKind.DRAFT, 256)), V, r"task length must be an integer in 0..255, not 256"),
    "gts task length float": (lambda: GTS().step((TaskKind.DRAFT, 1.5)), T, r"task length must be an integer"),
    "gts done int": (lambda: GTS().step(None, done=1), T, r"done must be a bool, not 1"),
    "gts cfg mask": (lambda: GTS().step(None, cfg=(1, 0)), V, r"preverify_mask must be an integer in 1..65535"),
    # CSR
    "csr write address str": (lambda: _csr().write("8", 1), T, r"address must be an integer in 0..4294967295, not '8'"),
    "csr write data negative": (lambda: _csr().write(8, -1), V, r"data must be an integer in 0..4294967295, not -1"),
    "csr write strobe": (lambda: _csr().write(8, 1, strobe=0x1F), V, r"strobe must be an integer in 0..15, not 31"),
    "csr read address bool": (lambda: _csr().read(True), T, r"address must be an integer"),
    "csr drive too wide": (lambda: _csr().drive("PARAMS", "ranks", 256), V, r"PARAMS.ranks must be an integer in 0..255, not 256"),
    "csr incr times": (lambda: _csr().hw_incr("INT_COUNT", "count", -1), V, r"times must be an integer >= 0, not -1"),
    # AAU
    "aau lanes": (lambda: aau.softmax_fx([0] * 3), V, r"x must have 16 lanes, not 3"),
    "aau float lane": (lambda: aau.gelu_fx(_lanes(2, 1.5)), T, r"x\[2\] must be an integer in -32768..32767"),
    "aau str lane": (lambda: aau.softmax_fx(_lanes(0, "1")), T, r"x\[0\] must be an integer"),
    "aau wide lane": (lambda: aau.layernorm_fx(np.array(_lanes(5, 40000))), V, r"x\[5\] must be an integer in -32768..32767 \(Q8.8 int16 lanes\), not 40000"),
    "aau eps nan": (lambda: aau.layernorm_fx(LANES, eps=math.nan), V, r"eps must be a finite number in \[3.72529e-09, 16\) \(2\*\*-28 up to 16\), not nan"),
    "aau eps 0": (lambda: aau.layernorm_fx(LANES, eps=0), V, r"eps must be a finite number in \[3.72529e-09, 16\)"),
    "aau not a vector": (lambda: aau.softmax_fx(5), T, r"x must be a sequence of integers"),
    # entropy
    "entropy config bool": (lambda: entropy.EntropyConfig(logit_width=True), T, r"logit_width must be an integer in 8..24, not True"),
    "entropy logit float": (lambda: entropy.entropy_fx([1, 2.5]), T, r"logits\[1\] must be an integer in -32768..32767"),
    "entropy config type": (lambda: entropy.entropy_fx([1], config=16), T, r"config must be a EntropyConfig, not int"),
    "entropy mean range": (lambda: entropy.batch_mean_fx([1, 70000]), V, r"entropies_fx\[1\] must be an integer in 0..65535"),
    "entropy to_uq4_12 str": (lambda: entropy.to_uq4_12("1"), T, r"h must be a number, not '1'"),
    # policies
    "fixed min_len bool": (lambda: policies.FixedPolicy(min_len=True), T, r"min_len must be a positive integer, not True"),
    "fixed k": (lambda: policies.FixedPolicy(k=0), V, r"k must be a positive integer, not 0"),
    "specdecpp h nan": (lambda: policies.SpecDecPPPolicy(h=math.nan), V, r"h must be a number in \[0, 1\], not nan"),
    "specdecpp h str": (lambda: policies.SpecDecPPPolicy(h="0.5"), T, r"h must be a number in \[0, 1\], not '0.5'"),
    "specdecpp predictor": (lambda: policies.SpecDecPPPolicy(predictor=3), T, r"predictor must be a AcceptancePredictor or None, not int 3"),
    "svip h -inf": (lambda: policies.SVIPPolicy(h=-math.inf), V, r"h must be a positive number, not -inf"),
    "adaedl gamma inf": (lambda: policies.AdaEDLPolicy(gamma=math.inf), V, r"gamma must be a positive number, not inf"),
    "bandit arm float": (lambda: policies.BanditSpecPolicy(arms=(1, 2.5)), T, r"arms\[1\] must be an integer >= 1, not 2.5"),
    "bandit arms str": (lambda: policies.BanditSpecPolicy(arms="12"), T, r"arms must be a list or tuple, not str"),
    "bandit cost bool": (lambda: policies.BanditSpecPolicy(draft_cost=True), T, r"draft_cost must be a positive number, not True"),
    "predictor weights nan": (lambda: policies.AcceptancePredictor([0, 0, math.nan, 0, 0]), V, r"weights must be finite"),
    "predictor weights str": (lambda: policies.AcceptancePredictor(["a"] * 5), T, r"weights must be 5 numbers"),
    "make_policy": (lambda: policies.make_policy(None), V, r"policy must be one of fixed, .* not None"),
    # speculative verification and the decoder's models
    "verify rng": (lambda: verify_draft([1, 2], Q, P, 3), T, r"rng must be a numpy.random.Generator, not int 3"),
    "verify bool tokens": (lambda: verify_draft([True, False], Q, P, RNG), T, r"draft_tokens must be integer token ids"),
    "verify greedy nan": (lambda: verify_draft_greedy([1, 2], np.full((3, 4), math.nan)), V, r"target_probs must be finite"),
    "load_models pair": (lambda: load_models("gpt"), V, r"pair must be one of ngram, hf, not 'gpt'"),
    # n-gram models and tokenizer
    "ngram order bool": (lambda: NGramModel.train([[1, 2]], order=True, vocab_size=8), T, r"order must be a positive integer, not True"),
    "ngram vocab float": (lambda: NGramModel.train([[1, 2]], order=2, vocab_size=8.0), T, r"vocab_size must be an integer >= 2, not 8.0"),
    "ngram context str": (lambda: _ngram().next_dist(["3"]), T, r"context token must be an integer in 0..7, not '3'"),
    "ngram context float": (lambda: _ngram().next_dist([2, 3.7]), T, r"context token must be an integer in 0..7, not 3.7"),
    "ngram context range": (lambda: _ngram().next_dist([9]), V, r"context token must be an integer in 0..7, not 9"),
    "ngram continuation bool": (lambda: _ngram().score([2], [3, True]), T, r"continuation\[1\] must be an integer in 0..7, not True"),
    "tokenizer decode float": (lambda: Tokenizer(["<unk>", "<eof>", "x"]).decode([2.0]), T, r"token id must be an integer in 0..2, not 2.0"),
    "tokenizer vocab bool": (lambda: Tokenizer.train(["x"], vocab_size=True), T, r"vocab_size must be an integer >= 3, not True"),
    # the other blocks
    "dram t_rl": (lambda: DRAMConfig(t_rl=1), V, r"t_rl must be an integer >= 2, not 1"),
    "dram rows bool": (lambda: DRAMConfig(rows=True), T, r"rows must be a positive integer, not True"),
    "dram burst float": (lambda: DRAMConfig(burst_bytes=32.0), T, r"burst_bytes must be a power of two, not 32.0"),
    "descriptor field str": (lambda: DraftDescriptor(batch_id="1", length=1, kv_base=0, mean_entropy=0), T, r"DraftDescriptor.batch_id must be an integer"),
    "gemv float weights": (lambda: gemv(np.ones((2, 2)), [1, 1]), T, r"weights must hold integers, not float64 values"),
    "gemv wide x": (lambda: gemv([[1]], [200]), V, r"x must be int8 values in -128..127"),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_parameter_is_rejected_naming_it(name):
    call, error, message = CASES[name]
    with pytest.raises(error, match=message) as caught:
        call()
    if error is T:         # a wrong type: a TypeError that ValueError handlers also catch
        assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    else:
        assert not isinstance(caught.value, TypeError), caught.value


@pytest.mark.parametrize("call, expected", [
    (lambda: check_int("n", np.int16(5), 0, 9), 5),             # numpy integers are integers
    (lambda: check_real("x", np.float32(0.5), 0, 1), 0.5),
    (lambda: check_real("x", 3, 0), 3.0),                         # an int is a real number
    (lambda: check_ints("v", np.arange(3), 0, 2), [0, 1, 2]),
    (lambda: check_choice("c", 1, (0, 1)), 1),
    (lambda: entropy_to_fx(math.inf), 65535),                     # a conversion saturates
    (lambda: entropy.to_uq4_12(-math.inf), 0),
    (lambda: GTS().step((int(TaskKind.DRAFT), 3), done=np.bool_(False)).ready, True),
    (lambda: len(aau.softmax_fx(np.zeros(16, dtype=np.int16))), 16),
])
def test_good_values_of_every_numeric_type_pass(call, expected):
    assert call() == expected


@pytest.mark.parametrize("call, message", [
    (lambda: check_int("n", -10**400, 0), r"n must be an integer >= 0, not -1000"),
    (lambda: check_real("x", 10**400, 0), r"x must be a finite number >= 0, not 1000"),
    (lambda: check_choice("c", True, (0, 1)), r"c must be one of 0, 1, not True"),
    (lambda: check_choice("c", [1], {"a": 1}), r"c must be one of a, not \[1\]"),
])
def test_the_helpers_refuse_huge_bool_and_unhashable_values(call, message):
    with pytest.raises(ValueError, match=message):
        call()
