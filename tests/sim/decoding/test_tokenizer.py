"""The stdlib tokenizer: token boundaries, vocabulary determinism, round trips, errors."""

import pytest

from ahasd.sim.decoding.tokenizer import EOF, UNK, Tokenizer, corpus_key, split, stdlib_files


def test_split_keeps_indentation_and_operators_and_round_trips():
    text = "def f(x):\n    return x ** 2 != y  # ok\n"
    tokens = split(text)
    assert "".join(tokens) == text
    assert "\n    " in tokens and "**" in tokens and "!=" in tokens and "def" in tokens


def test_vocabulary_is_most_frequent_first_with_ties_by_text():
    tok = Tokenizer.train(["b a b c a b", "zz"], vocab_size=5)
    # counts: ' ' 5, b 3, a 2, c 1, zz 1 -> 3 slots after the specials: ' ', b, a
    assert tok.vocab == ["<unk>", "<eof>", " ", "b", "a"]
    assert tok.encode("b c") == [3, 2, UNK]
    assert tok.decode([3, 2, UNK, EOF, 4]) == "b \ufffda"


def test_corpus_tokenizer_is_deterministic_and_round_trips():
    root, files = stdlib_files(8)
    assert len(files) == 8 and all(f.suffix == ".py" for f in files)
    assert not any("site-packages" in f.parts for f in files)
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    a = Tokenizer.train(texts, vocab_size=2000)
    b = Tokenizer.train(texts, vocab_size=2000)
    assert a.vocab == b.vocab
    assert corpus_key(root, files) == corpus_key(root, files)
    big = Tokenizer.train(texts, vocab_size=10 ** 6)  # every token in the vocabulary
    assert big.decode(big.encode(texts[0])) == texts[0]


@pytest.mark.parametrize("call, message", [
    (lambda: Tokenizer.train(["x"], vocab_size=2), "vocab_size must be an integer >= 3, not 2"),
    (lambda: Tokenizer(["a", "b"]), "vocab must start with"),
    (lambda: Tokenizer(["<unk>", "<eof>", "x", "x"]), "duplicate"),
    (lambda: Tokenizer(["<unk>", "<eof>", "x"]).decode([3]), r"token id must be an integer in 0..2, not 3"),
    (lambda: stdlib_files(0), "max_files must be a positive integer, not 0"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_corpus_key_covers_content_not_only_size(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.py"
    b.parent.mkdir()
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    key = corpus_key(tmp_path, [a, b])
    a.write_text("x = 3\n")                       # same size, other text
    assert corpus_key(tmp_path, [a, b]) != key
    a.write_text("x = 1\n")
    assert corpus_key(tmp_path, [a, b]) == key
    assert corpus_key(tmp_path, [b, a]) != key    # order is part of the corpus
    b.rename(tmp_path / "b.py")                   # same content, another path
    assert corpus_key(tmp_path, [a, tmp_path / "b.py"]) != key
