"""Every document the code, tests, README and docs cite is a file of this repository.

* A cited ``*.md`` path must exist relative to the citing file, to the repository root, or (a bare
  file name) in ``docs/``. Files of other repositories are written ``owner/name:path`` or as a
  URL, which this check leaves alone.
* The design notes kept outside the repository (their upper-case names, see ``OUTSIDE_NAMES``, or
  a shared design-notes directory) must not be cited unless such a file exists here.
* A cited section of the specification ("docs/architecture.md 4.1") is a heading there.
* ``docs/index.md`` lists every ``docs/*.md``.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("ahasd", "hw", "sim", "firmware", "synth", "cosim", "tb", "tests", "docs")
TOP_FILES = ("README.md", "Makefile", "pyproject.toml")
SUFFIXES = {".py", ".md", ".rdl", ".cpp", ".h", ".c", ".toml", ".txt"}

# A path ending in .md that does not continue a URL, an ``owner/name:path`` reference or a longer
# word (the look-behind), e.g. ``docs/tvc.md``, ``registers.md``.
MD_CITATION = re.compile(r"(?<![\w./:-])((?:[\w-][\w.-]*/)*[\w-][\w.-]*\.md)\b")
# Built from parts so that this file does not cite them itself.
OUTSIDE_NAMES = re.compile(r"\b(" + "|".join(["ARCHI" + "TECTURE", "TOOL" + "CHAIN", "ST" + "YLE"])
                           + r")\b|" + "design " + "folder")


def scanned_files():
    files = [ROOT / name for name in TOP_FILES if (ROOT / name).exists()]
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return files


#: Files the project's commands write (not documents of the repository), e.g. `reproduce`'s
#: summary.md in its output folder.
OUTPUT_NAMES = {"summary.md"}


def _exists(citing, cited):
    if cited in OUTPUT_NAMES:
        return True
    candidates = [citing.parent / cited, ROOT / cited]
    if "/" not in cited:
        candidates.append(ROOT / "docs" / cited)
    return any(c.is_file() for c in candidates)


def _outside_name_is_a_repo_file(name):
    return any(p.stem == name for folder in (ROOT, ROOT / "docs") for p in folder.glob("*.md"))


def test_the_scan_sees_the_tree():
    files = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    assert {"README.md", "docs/architecture.md", "sim/blocks/edc.py",
            "tests/test_docs.py"} <= files


def test_cited_markdown_documents_exist():
    missing = []
    for path in scanned_files():
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for match in MD_CITATION.finditer(line):
                if not _exists(path, match.group(1)):
                    missing.append(f"{path.relative_to(ROOT)}:{lineno}: {match.group(1)}")
    assert not missing, "cited documents that are not in the repository:\n" + "\n".join(missing)


def test_no_citation_of_design_notes_outside_the_repository():
    found = []
    for path in scanned_files():
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for match in OUTSIDE_NAMES.finditer(line):
                if match.group(1) and _outside_name_is_a_repo_file(match.group(1)):
                    continue
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not found, ("citations of documents that are not in the repository (write the "
                       "specification under docs/ and cite that):\n" + "\n".join(found))


SECTION_CITATION = re.compile(r"architecture\.md`?\)?,? (\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?\b")


def test_cited_sections_of_the_specification_exist():
    text = (ROOT / "docs" / "architecture.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, flags=re.M))
    assert {"1", "4", "4.1", "6.2", "7"} <= sections
    missing = []
    for path in scanned_files():
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for match in SECTION_CITATION.finditer(line):
                for number in filter(None, match.groups()):
                    if number not in sections:
                        missing.append(f"{path.relative_to(ROOT)}:{lineno}: {number}")
    assert not missing, "cited sections missing from docs/architecture.md:\n" + "\n".join(missing)


def test_index_lists_every_document():
    index = (ROOT / "docs" / "index.md").read_text()
    listed = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    documents = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert documents - listed == set(), f"docs/index.md does not list {sorted(documents - listed)}"
    assert listed - documents - {"index.md"} == set(), \
        f"docs/index.md lists missing documents {sorted(listed - documents)}"


@pytest.mark.parametrize("text, cited", [
    ("see `docs/tvc.md` for", ["docs/tvc.md"]),
    ("[registers.md](registers.md)", ["registers.md", "registers.md"]),
    ("https://github.com/MAdrid1011/AHASD/blob/main/docs/Experiments.md", []),
    ("`MAdrid1011/AHASD:docs/Experiments.md`", []),
    ("a README.md file", ["README.md"]),
])
def test_citation_pattern(text, cited):
    assert MD_CITATION.findall(text) == cited


def test_outside_names_pattern():
    assert OUTSIDE_NAMES.search("the spec (" + "ARCHI" + "TECTURE 4.1)")
    assert OUTSIDE_NAMES.search("in the shared design " + "folder")
    assert not OUTSIDE_NAMES.search("docs/architecture.md 4.1, a toolchain note")


@pytest.mark.parametrize("text, numbers", [
    ("(docs/architecture.md 4.1)", [("4.1", "")]),
    ("[architecture.md](architecture.md) 4.6-4.8. Every", [("4.6", "4.8")]),
    ("(`docs/architecture.md` 4.2) in", [("4.2", "")]),
    ("see docs/architecture.md for", []),
])
def test_section_citation_pattern(text, numbers):
    assert SECTION_CITATION.findall(text) == numbers
