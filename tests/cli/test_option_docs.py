"""Point 6 of issue 23: every option of every command appears in the README's command list or in
a document it links (directly or through docs/index.md), so options and docs cannot drift.

An option counts as documented for command ``ahasd VERB`` when one of its names (``-o`` or
``--output``) appears in the README command-list entry of that verb, or in a linked document
that shows ``ahasd VERB``; positional arguments are documented by the verb's usage itself.
"""

import argparse
import re
from pathlib import Path

import pytest

from ahasd.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def commands(parser=None, words=()):
    """``{("sweep",): parser, ("regs", "check"): parser, ...}``: every leaf command's parser."""
    parser = parser or build_parser()
    found = {}
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if words and not subs:
        found[words] = parser
    for sub in subs:
        for name, child in sub.choices.items():
            found.update(commands(child, words + (name,)))
    return found


def options(parser):
    """The option actions of ``parser`` (not --help), each as its tuple of option strings."""
    return [tuple(a.option_strings) for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)]


def readme_entries():
    """README "## Commands" code block: verb words -> the text of its entries (an entry is a line
    ``ahasd VERB ...`` and the indented lines that continue it)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Commands\n.*?^```\n(.*?)^```", text, re.S | re.M).group(1)
    entries, current = [], None
    for line in block.splitlines():
        if line.startswith("ahasd "):
            current = [line]
            entries.append(current)
        elif line.startswith(" ") and current is not None:
            current.append(line)
    return ["\n".join(e) for e in entries]


def linked_docs():
    """The documents the README links (``docs/<name>.md``), and those docs/index.md links, by text."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    names = set(re.findall(r"\(?`?(docs/[\w.-]+\.md)", text))
    index = ROOT / "docs" / "index.md"
    if "docs/index.md" in names and index.exists():
        names |= {f"docs/{n}" for n in re.findall(r"\]\(([\w.-]+\.md)\)", index.read_text(encoding="utf-8"))}
    return {n: (ROOT / n).read_text(encoding="utf-8") for n in sorted(names) if (ROOT / n).exists()}


def _mentions(text, option):
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def _verb_in_entry(entry, words):
    return re.match(r"ahasd " + r"\s+".join(
        rf"(?:\S*\|)?{re.escape(w)}(?:\|\S*)?" for w in words) + r"(?!\w)", entry) is not None


def undocumented():
    entries, docs = readme_entries(), linked_docs()
    missing = []
    for words, parser in commands().items():
        verb = "ahasd " + " ".join(words)
        mine = [e for e in entries if _verb_in_entry(e, words) or _verb_in_entry(e, words[:1])]
        pages = [t for t in docs.values() if verb in t]
        for names in options(parser):
            if not any(_mentions(text, n) for n in names for text in mine + pages):
                missing.append(f"{verb} {'/'.join(names)}")
    return missing


def test_the_docs_are_found():
    assert "docs/cli.md" in linked_docs(), "docs/cli.md is not linked from the README or docs/index.md"
    assert len(readme_entries()) >= 15
    assert len(commands()) >= 18 and ("regs", "check") in commands() and ("sweep",) in commands()


def test_every_option_is_documented():
    missing = undocumented()
    assert missing == [], "options in no doc: " + ", ".join(missing)


def test_an_undocumented_option_is_caught(monkeypatch):
    """The control: an option added to a parser and to no document is reported."""
    real = build_parser

    def with_extra():
        parser = real()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices["trace"]._actions[-1].choices["stats"].add_argument("--zz-undocumented")
        return parser

    monkeypatch.setattr(f"{__name__}.build_parser", with_extra)
    assert undocumented() == ["ahasd trace stats --zz-undocumented"]


@pytest.mark.parametrize("entry,words,hit", [
    ("ahasd sweep area [--axis ...]", ("sweep",), True),
    ("ahasd regs generate|check|list", ("regs", "check"), True),
    ("ahasd area BLOCK|all", ("sweep",), False),
])
def test_entry_matching(entry, words, hit):
    assert _verb_in_entry(entry, words) is hit
