"""Language models behind one interface, and interpolated modified Kneser-Ney n-gram models.

:class:`LanguageModel` is the interface the speculative-decoding golden model uses: a vocabulary
size, the next-token distribution after a context (a dense float64 vector of length V summing to
1), and batched scoring of a draft continuation. :class:`NGramModel` implements it with
interpolated Kneser-Ney smoothing with three discounts per order (Chen & Goodman 1998, "modified
KN"): for a context ``h`` of order ``k``::

    p_k(w | h) = max(c(hw) - D_k(c(hw)), 0) / c(h) + gamma_k(h) * p_{k-1}(w | h')
    gamma_k(h) = (D_k1 N1(h.) + D_k2 N2(h.) + D_k3 N3+(h.)) / c(h)

with raw counts at the highest order, continuation counts ``N1+(. h w)`` at the lower orders, the
unigram level interpolated with the uniform distribution, and the discounts estimated from the
count-of-counts ``n1..n4`` of each order (``Y = n1 / (n1 + 2 n2)``, ``D1 = 1 - 2Y n2/n1``,
``D2 = 2 - 3Y n3/n2``, ``D3 = 3 - 4Y n4/n3``). A context the model never saw backs off entirely.

Counts are stored sparsely: per order a sorted ``int64`` array of n-gram keys (the tokens as base-V
digits) and an ``int32`` array of counts, so the successors of a context are one contiguous slice
found with :func:`numpy.searchsorted`.

:func:`load_pair` trains (or loads from the cache) the project's model pair on the standard
library corpus (:mod:`ahasd.sim.decoding.tokenizer`): a trigram *draft* model and a 5-gram *target* model
over one shared vocabulary. Trained models are cached under :func:`ahasd.spec.cache.cache_dir`
``/ngram``, keyed (:func:`cache_key`) by the corpus digest, every hyperparameter and a digest of
the source of the modules that train them (:data:`TRAINING_MODULES`), so a changed corpus,
parameter or training code rebuilds them and the same inputs always rebuild the same model.
"""

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ahasd.sim.decoding.tokenizer import EOF, Tokenizer, corpus_key, read_corpus, stdlib_files
from ahasd.spec.params import check_bool, check_int, check_positive

__all__ = ["LanguageModel", "NGramModel", "ModelPair", "load_pair", "entropy_nats",
           "CACHE_VERSION", "TRAINING_MODULES", "training_digest", "cache_key"]

#: Bumped when the cached file layout changes (a change of the training code changes the key
#: through :func:`training_digest`).
CACHE_VERSION = 1
#: The modules whose code determines a trained model: the corpus files and their reading, the
#: tokenizer's training and encoding (tokenizer), the counts, discounts and file layout (ngram).
TRAINING_MODULES = ("ahasd.sim.decoding.tokenizer", "ahasd.sim.decoding.ngram")


def training_digest(modules=None):
    """A digest of the source files of ``modules`` (default :data:`TRAINING_MODULES`) and of
    numpy's version: part of every cache key, so that changed training code rebuilds."""
    h = hashlib.sha256(np.__version__.encode())
    for name in TRAINING_MODULES if modules is None else modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"training module {name!r} has no source file")
        with open(spec.origin, "rb") as f:
            h.update(f"\0{name}\0".encode() + f.read())
    return h.hexdigest()[:16]


def cache_key(parts, modules=None):
    """The cache key of a model trained by ``modules`` (default :data:`TRAINING_MODULES`) from
    ``parts`` (a JSON-serialisable list: corpus digests and hyperparameters)."""
    return hashlib.sha256(json.dumps(
        [CACHE_VERSION, training_digest(modules), *parts]).encode()).hexdigest()[:20]


@runtime_checkable
class LanguageModel(Protocol):
    """What the speculative-decoding golden model needs from a language model."""

    @property
    def vocab_size(self) -> int:
        """Number of token ids (distributions have this length)."""

    def next_dist(self, context) -> np.ndarray:
        """Distribution of the next token after ``context`` (a sequence of ids), shape (V,)."""

    def score(self, context, continuation) -> np.ndarray:
        """Distributions after ``context + continuation[:i]`` for i = 0..k, shape (k+1, V)."""


def entropy_nats(dist):
    """Shannon entropy of a distribution (or of each row of a 2-D array) in nats."""
    d = np.asarray(dist, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(d > 0, -d * np.log(d), 0.0)
    return terms.sum(axis=-1)


class NGramModel:
    """An interpolated modified Kneser-Ney n-gram model (see the module docstring).

    Parameters
    ----------
    keys, counts : list of numpy arrays
        Per order k = 1..``order``: sorted n-gram keys and their (raw or continuation) counts.
    discounts : numpy array, shape (order, 4)
        ``[0, D1, D2, D3]`` per order.
    vocab_size : int
    """

    def __init__(self, *, keys, counts, discounts, vocab_size):
        vocab_size = check_int("vocab_size", vocab_size, 2)
        if not (len(keys) == len(counts) == len(discounts) >= 1):
            raise ValueError("keys, counts and discounts must have one entry per order")
        self.order = len(keys)
        self._V = vocab_size
        self._keys = [np.asarray(k, dtype=np.int64) for k in keys]
        self._counts = [np.asarray(c, dtype=np.int64) for c in counts]
        self._disc = np.asarray(discounts, dtype=np.float64)
        self._base = self._unigram()

    @classmethod
    def train(cls, sequences, *, order, vocab_size):
        """Count n-grams in token-id sequences (each a file) and estimate the discounts.

        Each sequence is preceded by ``order - 1`` ``<eof>`` tokens so that no n-gram spans two
        sequences and the first tokens of a file are predicted from an ``<eof>`` context.
        """
        check_positive("order", order, integer=True)
        check_int("vocab_size", vocab_size, 2)
        if vocab_size ** order >= 2 ** 62:
            raise ValueError(f"vocab_size ** order must be < 2**62 for int64 keys, not "
                             f"{vocab_size}**{order}")
        pad = [EOF] * (order - 1)
        parts = []
        for seq in sequences:
            parts.append(pad)
            parts.append(seq)
        parts.append(pad)
        a = np.fromiter((t for part in parts for t in part), dtype=np.int64)
        if a.size and (a.min() < 0 or a.max() >= vocab_size):
            raise ValueError(f"token ids must be in 0..{vocab_size - 1}")
        keys: list[Any] = [None] * order          # every order is filled below
        counts: list[Any] = [None] * order
        # Highest order: raw counts of every window.
        n = len(a) - order + 1
        if n < 1:
            raise ValueError("sequences are too short to train a model of this order")
        top = np.zeros(n, dtype=np.int64)
        for j in range(order):
            top = top * vocab_size + a[j:j + n]
        keys[-1], c = np.unique(top, return_counts=True)
        counts[-1] = c
        # Lower orders: continuation counts N1+(. h w) = distinct left extensions.
        for k in range(order - 1, 0, -1):
            suffix = keys[k] % (vocab_size ** k)
            keys[k - 1], counts[k - 1] = np.unique(suffix, return_counts=True)
        discounts = np.zeros((order, 4))
        for k in range(order):
            nn = [np.count_nonzero(counts[k] == i) for i in (1, 2, 3, 4)]
            discounts[k] = [0.0] + _mkn_discounts(*nn)
        return cls(keys=keys, counts=counts, discounts=discounts, vocab_size=vocab_size)

    @property
    def vocab_size(self):
        return self._V

    def _unigram(self):
        V = self._V
        p = np.zeros(V)
        c = self._counts[0]
        total = c.sum()
        d = self._disc[0][np.minimum(c, 3)]
        p[self._keys[0]] = np.maximum(c - d, 0.0) / total
        gamma = d.sum() / total  # mass taken by the discounts goes to the uniform distribution
        return p + gamma / V

    def next_dist(self, context):
        V = self._V
        # Slice before converting: contexts grow with the output, only the tail matters.
        tail = list(context[-(self.order - 1):]) if self.order > 1 else []
        ctx = [check_int("context token", t, 0, V - 1) for t in tail]
        ctx = [EOF] * (self.order - 1 - len(ctx)) + ctx
        p = self._base
        for k in range(2, self.order + 1):
            h = 0
            for t in ctx[len(ctx) - (k - 1):]:
                h = h * V + t
            keys = self._keys[k - 1]
            lo, hi = np.searchsorted(keys, (h * V, (h + 1) * V))
            if lo == hi:
                continue  # unseen context: back off entirely
            cs = self._counts[k - 1][lo:hi]
            ws = keys[lo:hi] - h * V
            d = self._disc[k - 1][np.minimum(cs, 3)]
            total = cs.sum()
            q = p * (d.sum() / total)
            q[ws] += np.maximum(cs - d, 0.0) / total
            p = q
        return p.copy() if p is self._base else p

    def score(self, context, continuation):
        ctx = list(context)
        out = np.empty((len(continuation) + 1, self._V))
        out[0] = self.next_dist(ctx)
        for i, t in enumerate(continuation):
            ctx.append(check_int(f"continuation[{i}]", t, 0, self._V - 1))
            out[i + 1] = self.next_dist(ctx)
        return out

    def save(self, path):
        arrays: dict[str, Any] = {"discounts": self._disc, "vocab_size": np.array(self._V)}
        for k in range(self.order):
            arrays[f"keys{k}"] = self._keys[k]
            arrays[f"counts{k}"] = self._counts[k].astype(np.int32)
        tmp = f"{path}.tmp{os.getpid()}.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, path)  # atomic: parallel test workers may build the same model

    @classmethod
    def load(cls, path):
        with np.load(path) as z:
            order = z["discounts"].shape[0]
            return cls(keys=[z[f"keys{k}"] for k in range(order)],
                       counts=[z[f"counts{k}"] for k in range(order)],
                       discounts=z["discounts"], vocab_size=int(z["vocab_size"]))


def _mkn_discounts(n1, n2, n3, n4):
    """Modified Kneser-Ney discounts D1, D2, D3 from the counts-of-counts (Chen & Goodman)."""
    if n1 == 0 or n2 == 0:
        return [0.5, 1.0, 1.5]  # degenerate (tiny) corpora: fixed, still valid discounts
    y = n1 / (n1 + 2 * n2)
    d1 = 1 - 2 * y * n2 / n1
    d2 = 2 - 3 * y * n3 / n2 if n2 else 1.0
    d3 = 3 - 4 * y * n4 / n3 if n3 else 1.5
    return [float(np.clip(d1, 0.05, 1.0)), float(np.clip(d2, 0.05, 2.0)),
            float(np.clip(d3, 0.05, 3.0))]


@dataclass(frozen=True)
class ModelPair:
    """A draft and a target model over one tokenizer."""
    name: str
    tokenizer: Tokenizer
    draft: LanguageModel
    target: LanguageModel


def load_pair(*, draft_order=3, target_order=5, vocab_size=4096, max_files=None, cache=True):
    """The n-gram model pair trained on the standard library (see the module docstring).

    ``max_files`` trains on a spread subset of the corpus (tests use a few dozen files).
    """
    from ahasd.spec.cache import cache_dir
    for name, value in (("draft_order", draft_order), ("target_order", target_order)):
        check_positive(name, value, integer=True)
    check_int("vocab_size", vocab_size, 3)         # the tokenizer's specials and one more
    check_bool("cache", cache)
    root, files = stdlib_files(max_files)
    key = cache_key([corpus_key(root, files), vocab_size])
    folder = cache_dir() / "ngram"
    vocab_path = folder / f"vocab-{key}.json"
    paths = {o: folder / f"kn{o}-{key}.npz" for o in (draft_order, target_order)}
    if cache and vocab_path.exists() and all(p.exists() for p in paths.values()):
        tok = Tokenizer(json.loads(vocab_path.read_text()))
        models = {o: NGramModel.load(p) for o, p in paths.items()}
    else:
        texts = list(read_corpus(files))
        tok = Tokenizer.train(texts, vocab_size=vocab_size)
        seqs = [tok.encode(t) for t in texts]
        models = {o: NGramModel.train(seqs, order=o, vocab_size=tok.vocab_size)
                  for o in paths}
        if cache:
            folder.mkdir(parents=True, exist_ok=True)
            for o, p in paths.items():
                models[o].save(p)
            tmp = vocab_path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(tok.vocab))
            os.replace(tmp, vocab_path)
    return ModelPair(name=f"ngram{draft_order}-{target_order}", tokenizer=tok,
                     draft=models[draft_order], target=models[target_order])
