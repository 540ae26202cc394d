"""Named golden language-model pairs spanning a range of acceptance rates.

Every pair shares the tokenizer of :func:`ahasd.sim.decoding.ngram.load_pair` (trained on the whole
standard-library corpus) and its 5-gram *target*; the drafts differ, and each draft is trained on
its own from the token counts of its share of the corpus (never mixed with the target's
distribution):

============  ==========================================================  ===========  ======
name          draft                                                       acceptance   corr
============  ==========================================================  ===========  ======
ngram3-5      interpolated modified-KN trigram, whole corpus (``low``)    0.42         -0.26
ngram4-5      4-gram, whole corpus                                        0.67         -0.34
ngram5-5h     5-gram trained on every other file of the corpus (half)     0.63         -0.40
ngram5-5b     5-gram on 3 of every 4 blocks of 16 lines of every file     0.88         -0.33
ngram5-5x     5-gram trained on the corpus less every 8th file (``high``) 0.89         -0.34
============  ==========================================================  ===========  ======

Acceptance: accepted over drafted tokens, fixed length 4, synchronous, two prompts of 512 tokens;
corr: Pearson correlation of a drafted token's draft entropy with its acceptance probability
``min(1, p/q)`` (``ahasd bench system`` measures both; adaptive policies give other acceptance:
under AdaEDL on AHASD, ``ahasd bench acceptance``, ngram3-5 accepts about 0.40 and ngram5-5b,
the default of every model pair in ``models.toml``, 0.73-0.76).

``ngram5-5b`` holds out a quarter of every file (its blocks 0, 4, 8, ... of 16 lines) rather than
whole files: the draft has seen most of every module the target has, as a smaller draft trained
on the same kind of text would have, so its acceptance varies less with which file the target's
output resembles than a file subset's does. Each run of consecutive kept blocks is one training
sequence, so no n-gram spans a held-out block.

:data:`ALIASES` names sensitivity points: ``low`` (the earlier default, 0.40 under AdaEDL) and
``high`` (about 0.82). Trained drafts are cached beside the n-gram pair's models (same cache folder
and key scheme, :func:`ahasd.sim.decoding.ngram.cache_key`, over :data:`TRAINING_MODULES`: the
subset's choice here as well; :func:`draft_key` names what determines a draft).
"""

from ahasd.sim.decoding.ngram import TRAINING_MODULES as _NGRAM_TRAINING
from ahasd.sim.decoding.ngram import ModelPair, NGramModel, cache_key, load_pair

__all__ = ["PAIRS", "ALIASES", "TRAINING_MODULES", "load_named_pair", "pair_choices",
           "canonical", "draft_key", "training_sequences"]

#: The modules whose code determines a subset draft: the n-gram pair's and this one.
TRAINING_MODULES = _NGRAM_TRAINING + ("ahasd.sim.decoding.pairs",)

#: name -> (draft order, stride, block lines): the draft's share of the corpus. Block lines 0:
#: whole files, stride 0 = every file, 2 = every other file (odd indices), s > 2 = every file
#: except every s-th; block lines b > 0: every file, less every s-th block of b lines of it.
PAIRS = {"ngram3-5": (3, 0, 0), "ngram4-5": (4, 0, 0), "ngram5-5h": (5, 2, 0),
         "ngram5-5b": (5, 4, 16), "ngram5-5x": (5, 8, 0)}

#: Other names of registered pairs (sensitivity points of ``--acceptance-pair``).
ALIASES = {"low": "ngram3-5", "high": "ngram5-5x"}

_LOADED: dict[tuple, ModelPair] = {}


def pair_choices():
    """Every name :func:`load_named_pair` takes: the registry's, then the aliases."""
    return tuple(PAIRS) + tuple(ALIASES)


def canonical(name):
    """The registry name of ``name`` (an alias resolved); a one-line error listing the names."""
    name = ALIASES.get(name, name)
    if name not in PAIRS:
        raise ValueError(f"acceptance pair must be one of {', '.join(pair_choices())}, "
                         f"not {name!r}")
    return name


def load_named_pair(name, *, max_files=None):
    """The :class:`ModelPair` called ``name`` (one of :func:`pair_choices`), memoised per
    process; its ``name`` is the registry's (an alias resolved)."""
    name = canonical(name)
    key = (name, max_files)
    if key in _LOADED:
        return _LOADED[key]
    order, stride, lines = PAIRS[name]
    if stride == 0:
        pair = load_pair(draft_order=order, target_order=5, max_files=max_files)
    else:
        pair = _subset_pair(order, stride, lines, max_files)
    pair = ModelPair(name=name, tokenizer=pair.tokenizer, draft=pair.draft, target=pair.target)
    _LOADED[key] = pair
    return pair


def _subset_files(files, stride, lines):
    """The files a draft reads: a file subset (``lines`` 0), or every file (blocks)."""
    if lines:
        return list(files)
    return [f for i, f in enumerate(files) if (i % stride == 1 if stride == 2
                                              else i % stride != 0)]


def draft_key(root, files, vocab_size, order, stride, lines):
    """The cache key of a subset draft: the corpus, the share read (the subset's own digest for
    a file subset; stride and block lines for blocks), the vocabulary, the order and the
    training code (:data:`TRAINING_MODULES`)."""
    from ahasd.sim.decoding.tokenizer import corpus_key
    subset = _subset_files(files, stride, lines)
    share = ["blocks", stride, lines] if lines else ["subset", corpus_key(root, subset)]
    return cache_key(["subset", corpus_key(root, files), *share, vocab_size, order],
                     TRAINING_MODULES)


def training_sequences(texts, stride, lines):
    """The texts a block draft trains on: per text, each run of consecutive kept blocks of
    ``lines`` lines (block j is held out when ``j % stride == 0``) as one text."""
    out = []
    for text in texts:
        rows = text.splitlines(keepends=True)
        run: list[str] = []
        for j in range(0, max(len(rows), 1), lines):
            if (j // lines) % stride == 0:
                if run:
                    out.append("".join(run))
                run = []
            else:
                run += rows[j:j + lines]
        if run:
            out.append("".join(run))
    return out


def _subset_pair(order, stride, lines, max_files):
    from ahasd.sim.decoding.tokenizer import read_corpus, stdlib_files
    from ahasd.spec.cache import cache_dir
    base = load_pair(draft_order=3, target_order=5, max_files=max_files)
    root, files = stdlib_files(max_files)
    key = draft_key(root, files, base.tokenizer.vocab_size, order, stride, lines)
    tag = f"b{lines}" if lines else ""
    path = cache_dir() / "ngram" / f"kn{order}s{stride}{tag}-{key}.npz"
    if path.exists():
        draft = NGramModel.load(path)
    else:
        texts = read_corpus(_subset_files(files, stride, lines))
        if lines:
            texts = training_sequences(texts, stride, lines)
        seqs = [base.tokenizer.encode(t) for t in texts]
        draft = NGramModel.train(seqs, order=order, vocab_size=base.tokenizer.vocab_size)
        path.parent.mkdir(parents=True, exist_ok=True)
        draft.save(path)
    return ModelPair(name="subset", tokenizer=base.tokenizer, draft=draft, target=base.target)
