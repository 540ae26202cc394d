"""A rejection squashes every unverified batch *and the one being drafted*: each batch the decoder
starts is accounted for in its trace, as drafted (a ``draft`` event) or as squashed while being
drafted (a ``squash`` event with ``drafted`` false); only the batch in flight when the last token
is emitted may have neither. Counted from the records, independently of the decoder's counters."""

import numpy as np
import pytest

from ahasd.sim.decoding.lookahead import decode
from ahasd.sim.decoding.ngram import load_pair
from ahasd.sim.decoding.policies import make_policy


@pytest.fixture(scope="module")
def pair():
    return load_pair(max_files=40)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_started_batch_is_drafted_or_squashed(pair, seed):
    prompt = pair.tokenizer.encode("def run(self, args):\n    for item in ")
    res = decode(pair.draft, pair.target, prompt, n_tokens=200, policy=make_policy("fixed"),
                 rng=np.random.default_rng(seed), max_unverified=4)
    events = res.records[1:]
    drafted = {e["batch"] for e in events if e["event"] == "draft"}
    squashed = [e for e in events if e["event"] == "squash"]
    in_flight = {e["batch"] for e in squashed if not e["drafted"]}
    assert in_flight, "no batch was squashed while being drafted: the case is not exercised"
    assert not in_flight & drafted
    assert len({e["batch"] for e in squashed}) == len(squashed) == res.squashed   # each at most once
    missing = set(range(res.batches)) - drafted - in_flight
    assert missing <= {res.batches - 1}, sorted(missing)
