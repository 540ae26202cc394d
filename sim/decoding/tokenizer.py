"""A regex tokenizer for Python source text and the standard-library corpus it is trained on.

Tokens (in the order the pattern tries them):

* a line break with the indentation that follows it (``"\\n    "``): indentation is structure in
  Python, so one token carries both;
* an identifier or keyword (``[A-Za-z_][A-Za-z0-9_]*``);
* a number (``123``, ``1.5``, ``0x1f`` as ``0`` ``x1f``);
* a run of spaces or tabs inside a line;
* a two- or three-character operator (``==``, ``**=``, ``->``, ...);
* any other single character (punctuation, quotes, non-ASCII letters).

The vocabulary holds two special tokens, ``<unk>`` (id 0: any token outside the vocabulary) and
``<eof>`` (id 1: separates files, so no n-gram spans two files), then the most frequent tokens of
the training corpus, most frequent first, ties broken by the token text, so that the same corpus
always gives the same vocabulary. Decoding concatenates token texts (``<unk>`` decodes to U+FFFD).

The corpus is the ``.py`` files of the running Python's standard library (found at run time with
:func:`sysconfig.get_paths`, never a fixed path), without ``site-packages`` and without test
folders, sorted by relative path.
"""

import hashlib
import re
import sysconfig
from collections import Counter
from pathlib import Path

from ahasd.spec.params import check_int, check_positive

__all__ = ["TOKEN_RE", "UNK", "EOF", "Tokenizer", "split", "stdlib_files", "corpus_key"]

TOKEN_RE = re.compile(r"""
    \n[ \t]*                              # line break + indentation of the next line
  | [A-Za-z_][A-Za-z0-9_]*                # identifier / keyword
  | [0-9]+(?:\.[0-9]+)?                   # number
  | [ \t]+                                # spaces inside a line
  | \*\*=|//=|>>=|<<=|\.\.\.              # three-character operators
  | ==|!=|<=|>=|\*\*|//|->|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|:=   # two-character operators
  | [^\n]                                 # anything else, one character
""", re.VERBOSE)

UNK = 0
EOF = 1
_SPECIALS = ["<unk>", "<eof>"]
_TEST_DIRS = {"test", "tests", "idle_test"}


def split(text):
    """Split ``text`` into token strings (no vocabulary involved)."""
    return TOKEN_RE.findall(text)


def stdlib_files(max_files=None):
    """The corpus files: the standard library's ``.py`` files (see the module docstring).

    ``max_files`` keeps every n-th file so that a subset still samples the whole library (tests
    train small models on such a subset).
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        (p for p in root.rglob("*.py")
         if "site-packages" not in p.parts
         and not _TEST_DIRS.intersection(p.relative_to(root).parts[:-1])),
        key=lambda p: p.relative_to(root).as_posix())
    if max_files is not None:
        check_positive("max_files", max_files, integer=True)
        step = max(1, len(files) // max_files)
        files = files[::step][:max_files]
    return root, files


def corpus_key(root, files):
    """A digest naming a corpus: each file's relative path and content (so an interpreter update
    that edits a library file, even keeping its size, names another corpus)."""
    h = hashlib.sha256(b"corpus-v2")
    for p in files:
        h.update(f"\0{p.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


def read_corpus(files):
    """Yield the text of each file (undecodable bytes replaced, so any file can be read)."""
    for p in files:
        yield p.read_text(encoding="utf-8", errors="replace")


class Tokenizer:
    """Token text <-> id, with the vocabulary described in the module docstring.

    Parameters
    ----------
    vocab : list of str
        Token texts by id; ``vocab[0]`` must be ``"<unk>"`` and ``vocab[1]`` ``"<eof>"``.
    """

    def __init__(self, vocab):
        vocab = list(vocab)
        if vocab[:2] != _SPECIALS:
            raise ValueError(f"vocab must start with {_SPECIALS}, not {vocab[:2]}")
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocab must not contain duplicate tokens")
        self.vocab = vocab
        self._ids = {t: i for i, t in enumerate(vocab)}

    @classmethod
    def train(cls, texts, *, vocab_size):
        """Build the vocabulary from an iterable of texts (the most frequent tokens)."""
        check_int("vocab_size", vocab_size, 3)
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(split(text))
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return cls(_SPECIALS + [t for t, _ in ranked[:vocab_size - len(_SPECIALS)]])

    @property
    def vocab_size(self):
        return len(self.vocab)

    def encode(self, text):
        """Token ids of ``text`` (unknown tokens become :data:`UNK`)."""
        get = self._ids.get
        return [get(t, UNK) for t in split(text)]

    def decode(self, ids):
        """The text of token ids (``<unk>`` as U+FFFD, ``<eof>`` as an empty string)."""
        out = []
        for i in ids:
            i = check_int("token id", i, 0, len(self.vocab) - 1)
            out.append("\ufffd" if i == UNK else "" if i == EOF else self.vocab[i])
        return "".join(out)
