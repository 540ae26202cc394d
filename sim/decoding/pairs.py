"""Named golden language-model pairs spanning a range of acceptance rates.

Every pair shares the tokenizer of :func:`ahasd.sim.decoding.ngram.load_pair` (trained on the whole
standard-library corpus) and its 5-gram *target*; the drafts differ, and each draft is trained on
its own from token counts (never mixed with the target's distribution):

============  ==========================================================  ===========  ======
name          draft                                                       acceptance   corr
============  ==========================================================  ===========  ======
ngram3-5      interpolated modified-KN trigram, whole corpus (default)    0.42         -0.26
ngram4-5      4-gram, whole corpus                                        0.67         -0.34
ngram5-5h     5-gram trained on every other file of the corpus (half)     0.63         -0.40
ngram5-5x     5-gram trained on the corpus less every 8th file (7/8)      0.89         -0.34
============  ==========================================================  ===========  ======

Acceptance: accepted over drafted tokens, fixed length 4, synchronous, two prompts of 512 tokens;
corr: Pearson correlation of a drafted token's draft entropy with its acceptance probability
``min(1, p/q)`` (``ahasd bench system`` measures both; adaptive policies give other acceptance).
Trained drafts are cached beside the n-gram pair's models (same cache folder and key scheme,
:func:`ahasd.sim.decoding.ngram.cache_key`, over :data:`TRAINING_MODULES`: the subset's choice
here as well).
"""

from ahasd.sim.decoding.ngram import TRAINING_MODULES as _NGRAM_TRAINING
from ahasd.sim.decoding.ngram import ModelPair, NGramModel, cache_key, load_pair

__all__ = ["PAIRS", "TRAINING_MODULES", "load_named_pair"]

#: The modules whose code determines a subset draft: the n-gram pair's and this one.
TRAINING_MODULES = _NGRAM_TRAINING + ("ahasd.sim.decoding.pairs",)

#: name -> (draft order, subset): subset 0 = every file, 2 = every other file (odd indices),
#: 8 = every file except every 8th.
PAIRS = {"ngram3-5": (3, 0), "ngram4-5": (4, 0), "ngram5-5h": (5, 2), "ngram5-5x": (5, 8)}

_LOADED: dict[tuple, ModelPair] = {}


def load_named_pair(name, *, max_files=None):
    """The :class:`ModelPair` called ``name`` (one of :data:`PAIRS`), memoised per process."""
    if name not in PAIRS:
        raise ValueError(f"acceptance pair must be one of {', '.join(PAIRS)}, not {name!r}")
    key = (name, max_files)
    if key in _LOADED:
        return _LOADED[key]
    order, stride = PAIRS[name]
    if stride == 0:
        pair = load_pair(draft_order=order, target_order=5, max_files=max_files)
    else:
        pair = _subset_pair(order, stride, max_files)
    pair = ModelPair(name=name, tokenizer=pair.tokenizer, draft=pair.draft, target=pair.target)
    _LOADED[key] = pair
    return pair


def _subset_pair(order, stride, max_files):
    from ahasd.sim.decoding.tokenizer import corpus_key, read_corpus, stdlib_files
    from ahasd.spec.cache import cache_dir
    base = load_pair(draft_order=3, target_order=5, max_files=max_files)
    root, files = stdlib_files(max_files)
    subset = [f for i, f in enumerate(files) if (i % stride == 1 if stride == 2
                                                    else i % stride != 0)]
    key = cache_key(["subset", corpus_key(root, files), corpus_key(root, subset),
                     base.tokenizer.vocab_size, order], TRAINING_MODULES)
    path = cache_dir() / "ngram" / f"kn{order}s{stride}-{key}.npz"
    if path.exists():
        draft = NGramModel.load(path)
    else:
        seqs = [base.tokenizer.encode(t) for t in read_corpus(subset)]
        draft = NGramModel.train(seqs, order=order, vocab_size=base.tokenizer.vocab_size)
        path.parent.mkdir(parents=True, exist_ok=True)
        draft.save(path)
    return ModelPair(name="subset", tokenizer=base.tokenizer, draft=draft, target=base.target)
