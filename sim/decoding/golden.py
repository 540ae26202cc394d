"""Glue for golden decoding runs: the fixed prompt set, model pairs by name, policies ready to run.

Used by ``ahasd decode`` and the ``decode`` benchmark so that both run the same thing.
SpecDec++ needs a trained acceptance predictor: :func:`build_policy` fits one on a *calibration*
trace, recorded with a fixed-length policy of ``max_len`` tokens (so every batch position is
seen) on :data:`CALIBRATION_PROMPTS` with a seed derived from, but different from, the run's.
"""

import numpy as np

from ahasd.sim.decoding.lookahead import decode
from ahasd.sim.decoding.policies import AcceptancePredictor, FixedPolicy, make_policy
from ahasd.spec.params import check_choice

__all__ = ["PROMPTS", "CALIBRATION_PROMPTS", "load_models", "build_policy", "make_edc"]

#: The fixed prompt set (Python source beginnings; the corpus is Python source).
PROMPTS = [
    "import os\nimport sys\n\n\ndef main(argv=None):\n    ",
    "class Parser:\n    \"\"\"Parse a configuration file.\"\"\"\n\n    def __init__(self, path):\n"
    "        self.path = path\n        ",
    "    for name, value in sorted(items.items()):\n        if ",
    "def read_lines(filename, encoding='utf-8'):\n    with open(filename, encoding=encoding) as f:\n"
    "        ",
    "try:\n    import _thread\nexcept ImportError:\n    ",
    "    def __repr__(self):\n        return ",
    "        raise ValueError(\"",
    "# Copyright (C) 2001 Python Software Foundation\n\n\"\"\"",
]

#: Prompts for calibration runs (kept apart from :data:`PROMPTS`).
CALIBRATION_PROMPTS = [
    "def _check(self, value):\n    ",
    "import re\n\n__all__ = [",
    "        if not isinstance(key, str):\n            ",
    "    @property\n    def name(self):\n        ",
]


def load_models(pair="ngram", *, draft_model=None, target_model=None, max_files=None):
    """A :class:`ahasd.sim.decoding.ngram.ModelPair` by name: ``ngram`` or ``hf`` (local model folders)."""
    check_choice("pair", pair, ("ngram", "hf"))
    if pair == "ngram":
        from ahasd.sim.decoding.ngram import load_pair
        return load_pair(max_files=max_files)
    if pair == "hf":
        if not draft_model or not target_model:
            raise ValueError("pair 'hf' needs draft_model and target_model (local folders)")
        from ahasd.sim.decoding.hf_backend import load_hf_pair
        return load_hf_pair(draft_model, target_model)


def make_edc(edc):
    """``None`` for ``"off"``/None, else a fresh :class:`ahasd.sim.blocks.edc.EDC` of that variant."""
    if edc in (None, "off"):
        return None
    from ahasd.sim.blocks.edc import EDC
    return EDC(variant=edc)


def build_policy(name, pair, *, seed=0, draft_cost=1.0, verify_cost=5.0, calibration_tokens=300,
                 **params):
    """A policy by name, ready to run on ``pair`` (SpecDec++ gets a fitted predictor)."""
    if name == "banditspec":
        params = {"draft_cost": draft_cost, "verify_cost": verify_cost, **params}
    if name == "specdecpp" and "predictor" not in params:
        max_len = params.get("max_len", 8)
        records = []
        rng = np.random.default_rng([seed, 1])   # a stream apart from the run's own
        for text in CALIBRATION_PROMPTS:
            run = decode(pair.draft, pair.target, pair.tokenizer.encode(text),
                         n_tokens=calibration_tokens, rng=rng, max_unverified=1,
                         policy=FixedPolicy(k=max_len, max_len=max_len))
            records.append(run.records)
        from ahasd.sim.traces.decoding import verified_batches
        batches = [b for r in records for b in verified_batches(r)]
        params["predictor"] = AcceptancePredictor.fit_batches(batches)
    return make_policy(name, **params)
